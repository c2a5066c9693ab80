"""Part A of the chapter (d2l-en, PyTorch tab), one test per cell, in gpuarr.

Each test runs with no GPU (the cells fall back to the CPU through try_gpu) and with two
GPUs (GPUARR_SIMULATE_GPUS=2), where it shows what the book shows."""
import numpy as np
import pytest

import gpuarr
from gpuarr import cpu, gpu, nn, num_gpus, try_all_gpus, try_gpu
from textbook_helpers import check_printed, check_repr, on_gpu


@pytest.fixture
def X():
    return gpuarr.ones((2, 3), device=try_gpu())


@pytest.fixture
def Y():
    gpuarr.random.seed(0)
    return gpuarr.rand(2, 3, device=try_gpu(1))


def test_a1_naming_devices():
    assert repr((cpu(), gpu(), gpu(1))) == "(cpu(0), gpu(0), gpu(1))"
    assert gpu() == gpu(0)


def test_a2_counting_gpus():
    n = num_gpus()
    assert isinstance(n, int) and n >= 0
    assert n == len([d for d in try_all_gpus() if d != cpu()])


def test_a3_fallback_helpers():
    n = num_gpus()
    expected_first = gpu(0) if n >= 1 else cpu()
    expected_all = [gpu(i) for i in range(n)] or [cpu()]
    assert (try_gpu(), try_gpu(10), try_all_gpus()) == (expected_first, cpu(), expected_all)
    if n == 2:
        assert repr((try_gpu(), try_gpu(10), try_all_gpus())) == \
            "(gpu(0), cpu(0), [gpu(0), gpu(1)])"


def test_a4_where_a_tensor_lives():
    x = gpuarr.array([1, 2, 3])
    assert x.device == cpu() and repr(x.device) == "cpu(0)"


def test_a5_making_an_array_on_a_gpu(X):
    assert X.device == try_gpu() and X.shape == (2, 3) and X.dtype == gpuarr.float32
    np.testing.assert_array_equal(X.numpy(), np.ones((2, 3), np.float32))
    check_repr(X, "[[1., 1., 1.],")


def test_a6_a_random_array_on_the_second_gpu(Y):
    assert Y.device == try_gpu(1) and Y.shape == (2, 3)
    v = Y.numpy()
    assert ((v >= 0) & (v < 1)).all() and len(np.unique(v)) > 1


def test_a7_copying_between_devices(X, capsys):
    Z = X.to(try_gpu(1))  # the book's X.cuda(1), falling back when GPU 1 is missing
    print(X)
    print(Z)
    assert Z.device == try_gpu(1) and X.device == try_gpu()
    check_printed(X, "[[1. 1. 1.]\n [1. 1. 1.]]")
    check_printed(Z, "[[1. 1. 1.]\n [1. 1. 1.]]")
    out = capsys.readouterr().out
    assert out == f"{X}\n{Z}\n"
    if num_gpus() >= 2:
        Z1 = X.cuda(1)
        assert Z1.device == gpu(1)
        assert out.splitlines()[1].endswith("@gpu(0)") and out.endswith("@gpu(1)\n")


def test_a7_adding_across_devices_raises(X, Y):
    if X.device == Y.device:
        (X + Y)  # one device: nothing to mix
        return
    with pytest.raises(gpuarr.DeviceMismatchError):
        X + Y


def test_a8_adding_on_the_same_device(X, Y):
    Z = X.to(try_gpu(1))
    S = Y + Z
    assert S.device == try_gpu(1)
    np.testing.assert_allclose(S.numpy(), Y.numpy() + 1, rtol=1e-6)
    if on_gpu(S):
        assert repr(S).endswith("device=gpu(1))") or "device=gpu(1)" in repr(S)


def test_a9_moving_to_the_same_device_is_a_no_op(X):
    Z = X.to(try_gpu(1))
    assert Z.to(try_gpu(1)) is Z
    if num_gpus() >= 2:
        assert Z.cuda(1) is Z


def test_a10_a_model_on_the_gpu():
    net = nn.Sequential(nn.Linear(3, 1))
    net = net.to(device=try_gpu())
    assert all(p.device == try_gpu() for p in net.parameters())


def test_a11_the_forward_pass_runs_where_the_inputs_are(X):
    net = nn.Sequential(nn.Linear(3, 1)).to(device=try_gpu())
    out = net(X)
    assert out.device == try_gpu() and out.shape == (2, 1)
    v = out.numpy()
    assert v[0, 0] == v[1, 0]  # X is all ones: both rows are equal
    W, b = net[0].weight.numpy(), net[0].bias.numpy()
    np.testing.assert_allclose(v, np.ones((2, 3), np.float32) @ W.T + b, rtol=1e-5)


def test_a12_where_the_parameters_are():
    net = nn.Sequential(nn.Linear(3, 1)).to(device=try_gpu())
    assert net[0].weight.device == try_gpu()
    assert repr(net[0].weight.device) == ("gpu(0)" if num_gpus() else "cpu(0)")


class Trainer:
    """A13 in gpuarr: ask for min(num_gpus, available) devices; move batches and the
    model to the first."""

    def __init__(self, max_epochs, num_gpus=0):
        self.max_epochs = max_epochs
        self.gpus = [gpu(i) for i in range(min(num_gpus, gpuarr.num_gpus()))]

    def prepare_batch(self, batch):
        if self.gpus:
            batch = [a.to(self.gpus[0]) for a in batch]
        return batch

    def prepare_model(self, model):
        if self.gpus:
            model.to(self.gpus[0])
        self.model = model


@pytest.mark.parametrize("asked", [0, 1, 8])
def test_a13_trainer_uses_at_most_the_gpus_that_exist(asked):
    t = Trainer(max_epochs=1, num_gpus=asked)
    assert len(t.gpus) == min(asked, num_gpus())
    batch = t.prepare_batch([gpuarr.ones((4, 3)), gpuarr.zeros((4,))])
    target = t.gpus[0] if t.gpus else cpu()
    assert all(a.device == target for a in batch)
    t.prepare_model(nn.Sequential(nn.Linear(3, 1)))
    assert t.model[0].weight.device == target
    assert t.model(batch[0]).device == target


def test_prose_printing_and_numpy_copy_to_the_host_explicitly(X):
    text = repr(X)
    host = X.numpy()
    assert isinstance(host, np.ndarray) and "1." in text
    np.testing.assert_array_equal(host, np.ones((2, 3), np.float32))
    assert X.device == try_gpu()
    if on_gpu(X):
        host[0, 0] = 5.0  # the host copy is the caller's: X does not change
        np.testing.assert_array_equal(X.numpy(), np.ones((2, 3), np.float32))
        with pytest.raises(TypeError, match="numpy\\(\\)"):
            np.asarray(X)
    else:
        np.testing.assert_array_equal(np.asarray(X), np.ones((2, 3), np.float32))
