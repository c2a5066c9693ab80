"""Part A of the chapter (d2l-en, PyTorch tab), one test per cell, in gpuarr.

Each test runs with no GPU (the cells fall back to the CPU through try_gpu) and with two
GPUs (GPUARR_SIMULATE_GPUS=2), where it shows what the book shows."""
import numpy as np
import pytest

import gpuarr
from gpuarr import cpu, gpu, nn, num_gpus, optim, try_all_gpus, try_gpu
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
    assert out.grad_fn is not None and "grad_fn=<" in repr(out)  # as the book shows
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


def test_a13_the_trainer_trains_on_the_device_and_reads_the_losses_once():
    gpuarr.random.seed(0)
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(5):
        X = rng.standard_normal((16, 2)).astype(np.float32)
        batches.append((gpuarr.asarray(X),
                        gpuarr.asarray(X @ np.array([[2.0], [-3.4]], np.float32) + 4.2)))
    epochs = 10
    t = Trainer(max_epochs=epochs, num_gpus=1)
    model = nn.Sequential(nn.Linear(2, 1))
    gpuarr.reset_transfer_stats()
    t.prepare_model(model)
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    device = t.gpus[0] if t.gpus else cpu()
    losses = gpuarr.zeros(epochs * len(batches), device=device)
    for epoch in range(epochs):
        for i, batch in enumerate(batches):
            X, y = t.prepare_batch(batch)
            loss = loss_fn(model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses[epoch * len(batches) + i] = loss.detach()
    curve = losses.numpy()
    stats = gpuarr.transfer_stats()
    moved = t.gpus != []
    assert stats.h2d_count == (2 + epochs * 2 * len(batches) if moved else 0)
    assert stats.d2h_count == (1 if moved else 0)
    assert model[0].weight.device == device and curve[-1] < curve[0] / 50
    np.testing.assert_allclose(model[0].weight.numpy(), [[2.0, -3.4]], atol=0.05)


def test_notes_criterion_cuda_moves_the_losss_weight_buffer():
    """The PyTorch notes: a loss that holds class weights (a buffer) moves with
    criterion.cuda(); forgetting it fails at the first step."""
    class_weights = gpuarr.asarray([1.0, 2.0, 0.5])
    criterion = nn.CrossEntropyLoss(weight=class_weights)
    net = nn.Sequential(nn.Linear(4, 3)).to(try_gpu())
    X = gpuarr.randn(8, 4, device=try_gpu())
    y = gpuarr.random.integers(0, 3, size=8, device=try_gpu())
    if num_gpus():
        with pytest.raises(gpuarr.DeviceMismatchError, match=r"criterion\.cuda\(\)"):
            criterion(net(X), y)
        criterion = criterion.cuda()
    assert criterion.weight.device == try_gpu()
    loss = criterion(net(X), y)
    loss.backward()
    assert loss.device == try_gpu() and net[0].weight.grad.device == try_gpu()


class VeryBigModule(nn.Module):
    """The notes' model split over two GPUs (scaled to fit): one part on each, the
    activation moved between them in forward."""

    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(64, 128).to(try_gpu(0))
        self.net2 = nn.Linear(128, 10).to(try_gpu(1))

    def forward(self, x):
        x = nn.functional.relu(self.net1(x.to(try_gpu(0))))
        return self.net2(x.to(try_gpu(1)))


def test_notes_very_big_module_trains_across_two_gpus():
    gpuarr.random.seed(1)
    model = VeryBigModule()
    optimizer = optim.SGD(model.parameters(), lr=0.5)
    X = gpuarr.randn(32, 64)
    y = gpuarr.random.integers(0, 10, size=32).to(try_gpu(1))
    losses = []
    gpuarr.reset_transfer_stats()
    for _ in range(5):
        loss = nn.functional.cross_entropy(model(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    stats = gpuarr.transfer_stats()
    assert model.net1.weight.grad.device == try_gpu(0)
    assert model.net2.weight.grad.device == try_gpu(1)
    assert model.net1.weight.device == try_gpu(0) and model.net2.weight.device == try_gpu(1)
    if num_gpus() >= 2:  # forward: the activation to gpu(1); backward: its gradient back
        assert stats.d2d_count == 2 * 5 and stats.h2d_count == 5
    first, last = float(losses[0]), float(losses[-1])
    assert last < first
