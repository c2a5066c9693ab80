"""Part B of the chapter (d2l-en, MXNet NumPy tab), one test per cell, in gpuarr.

MXNet's ``ctx=`` is gpuarr's ``device=``, ``as_in_ctx`` is ``to`` and ``copyto`` is
``copyto``. The book's outputs for this tab are reconstructed: the tests assert their
form and the semantics, not random values."""
import numpy as np
import pytest

import gpuarr
from gpuarr import cpu, gpu, nn, num_gpus, try_all_gpus, try_gpu
from textbook_helpers import check_printed, check_repr


def test_b1_context_reprs():
    assert repr((cpu(), gpu(), gpu(1))) == "(cpu(0), gpu(0), gpu(1))"


def test_b2_num_gpus():
    assert num_gpus() == len(try_all_gpus()) - (0 if num_gpus() else 1)


def test_b3_try_gpu():
    n = num_gpus()
    assert try_gpu() == (gpu(0) if n else cpu())
    assert try_gpu(10) == cpu()
    assert try_all_gpus() == ([gpu(i) for i in range(n)] or [cpu()])


def test_b4_cpu_by_default():
    x = gpuarr.array([1, 2, 3])
    assert x.device == cpu()


def test_b5_ones_on_a_device():
    X = gpuarr.ones((2, 3), device=try_gpu())
    check_repr(X, "[[1., 1., 1.],")
    assert X.device == try_gpu()


def test_b6_uniform_on_the_second_gpu():
    Y = gpuarr.random.uniform(size=(2, 3), device=try_gpu(1))
    assert Y.device == try_gpu(1) and Y.shape == (2, 3) and Y.dtype == gpuarr.float32
    v = Y.numpy()
    assert ((v >= 0) & (v < 1)).all()
    check_repr(Y, "[[")


def test_b7_copyto_and_print_show_the_device():
    X = gpuarr.ones((2, 3), device=try_gpu())
    Z = X.copyto(try_gpu(1))
    check_printed(X, "[[1. 1. 1.]\n [1. 1. 1.]]")
    check_printed(Z, "[[1. 1. 1.]\n [1. 1. 1.]]")
    assert Z.device == try_gpu(1) and Z is not X


def test_b8_the_result_lives_with_its_operands():
    X = gpuarr.ones((2, 3), device=try_gpu())
    Y = gpuarr.random.uniform(size=(2, 3), device=try_gpu(1))
    Z = X.copyto(try_gpu(1))
    S = Y + Z
    assert S.device == try_gpu(1)
    np.testing.assert_allclose(S.numpy(), Y.numpy() + 1, rtol=1e-6)


def test_b9_as_in_ctx_is_a_no_op_and_copyto_allocates():
    Z = gpuarr.ones((2, 3), device=try_gpu(1))
    assert Z.to(try_gpu(1)) is Z
    C = Z.copyto(try_gpu(1))
    assert C is not Z and C._storage_id != Z._storage_id and C.device == Z.device


def test_b10_to_b12_a_dense_layer_initialised_on_the_device():
    net = nn.Sequential()
    net.add(nn.Linear(3, 1, device=try_gpu()))
    assert net[0].weight.device == try_gpu() and net[0].bias.device == try_gpu()
    X = gpuarr.ones((2, 3), device=try_gpu())
    out = net(X)
    assert out.device == try_gpu() and out.shape == (2, 1)
    check_repr(out, "[[")


class ScratchModule:
    """d2l's MXNet Module as far as B13 needs it: set_scratch_params_device, in gpuarr's
    spelling (np.ndarray is gpuarr.Array, as_in_ctx is to)."""

    def set_scratch_params_device(self, device):
        for attr in dir(self):
            a = getattr(self, attr)
            if isinstance(a, gpuarr.Array):
                with gpuarr.autograd.record():
                    setattr(self, attr, a.to(device))
                getattr(self, attr).attach_grad()
            if isinstance(a, ScratchModule):
                a.set_scratch_params_device(device)
            if isinstance(a, list):
                for elem in a:
                    elem.set_scratch_params_device(device)


class LinearRegressionScratch(ScratchModule):
    def __init__(self, num_inputs, lr, sigma=0.01):
        self.lr = lr
        self.w = gpuarr.random.normal(0, sigma, (num_inputs, 1))
        self.b = gpuarr.zeros(1)
        self.w.attach_grad()
        self.b.attach_grad()

    def forward(self, X):
        return gpuarr.matmul(X, self.w) + self.b

    def loss(self, y_hat, y):
        return ((y_hat - y) ** 2 / 2).mean()


def set_scratch_params_device(module, device):
    """B13 for a plain object: move every array attribute (and arrays in lists)."""
    for name, value in list(vars(module).items()):
        if isinstance(value, gpuarr.Array):
            setattr(module, name, value.to(device))
        elif isinstance(value, list):
            setattr(module, name, [v.to(device) if isinstance(v, gpuarr.Array) else v
                                   for v in value])
    return module


def test_b13_set_scratch_params_device_then_train_with_record_and_backward():
    gpuarr.random.seed(0)
    model = LinearRegressionScratch(2, lr=0.1)
    model.set_scratch_params_device(try_gpu())
    assert model.w.device == try_gpu() and model.w.is_leaf and model.w.requires_grad
    assert model.w.grad is not None and model.w.grad.device == try_gpu()
    rng = np.random.default_rng(0)
    X_host = rng.standard_normal((64, 2)).astype(np.float32)
    X = gpuarr.asarray(X_host, device=try_gpu())
    y = gpuarr.asarray(X_host @ np.array([[2.0], [-3.4]], np.float32) + 4.2,
                       device=try_gpu())
    for _ in range(100):
        with gpuarr.autograd.record():
            l = model.loss(model.forward(X), y)
        l.backward()
        for param in [model.w, model.b]:  # d2l's SGD.step (MXNet tab)
            param -= model.lr * param.grad
    assert model.w.grad.device == try_gpu()
    np.testing.assert_allclose(model.w.numpy().ravel(), [2.0, -3.4], atol=1e-2)
    np.testing.assert_allclose(model.b.numpy(), [4.2], atol=1e-2)


def test_b13_moving_a_models_scratch_arrays():
    class Scratch:
        pass

    m = Scratch()
    m.w = gpuarr.ones((3, 1))
    m.bs = [gpuarr.zeros((1,)), 4]
    m.lr = 0.1
    set_scratch_params_device(m, try_gpu())
    assert m.w.device == try_gpu() and m.bs[0].device == try_gpu() and m.lr == 0.1
    if num_gpus():
        with pytest.raises(gpuarr.DeviceMismatchError):
            gpuarr.ones((2, 3)) @ m.w
