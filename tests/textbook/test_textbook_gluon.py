"""Part C of the chapter (the 2018 MXNet/Gluon edition), one test per cell, in gpuarr.

``nd.array(..., ctx=mx.gpu())`` is ``gpuarr.array(..., device=gpu())``,
``as_in_context`` is ``to`` and ``copyto`` is ``copyto``."""
import numpy as np
import pytest

import gpuarr
from gpuarr import cpu, gpu, nn, num_gpus, try_gpu
from textbook_helpers import check_printed, on_gpu


@pytest.fixture
def x():
    return gpuarr.array([1.0, 2.0, 3.0])


def test_c1_building_devices_never_fails():
    assert repr((cpu(), gpu(), gpu(1))) == "(cpu(0), gpu(0), gpu(1))"
    assert repr(gpu(7)) == "gpu(7)"


def test_c2_an_array_is_made_on_the_cpu(x):
    check_printed(x, "[1. 2. 3.]")
    assert x.dtype == gpuarr.float32


def test_c3_the_device_property(x):
    assert x.device == cpu()


def test_c4_the_constructor_takes_a_device():
    a = gpuarr.array([1.0, 2.0, 3.0], device=try_gpu())
    assert a.device == try_gpu()
    check_printed(a, "[1. 2. 3.]")


def test_c5_random_on_the_second_gpu():
    b = gpuarr.random.uniform(size=(2, 3), device=try_gpu(1))
    assert b.device == try_gpu(1) and b.shape == (2, 3)


def test_c6_copyto_a_gpu(x):
    y = x.copyto(try_gpu())
    assert y.device == try_gpu() and x.device == cpu()
    check_printed(y, "[1. 2. 3.]")


def test_c7_as_in_context_is_to(x):
    z = x.to(try_gpu())
    assert z.device == try_gpu()
    check_printed(z, "[1. 2. 3.]")
    if on_gpu(z):
        assert z is not x
    else:
        assert z is x


def test_c8_to_the_same_device_shares_memory(x):
    y = x.copyto(try_gpu())
    assert y.to(try_gpu()) is y


def test_c9_copyto_always_creates_new_memory(x):
    y = x.copyto(try_gpu())
    c = y.copyto(try_gpu())
    assert c is not y and c._storage_id != y._storage_id


def test_c10_scalar_add_exp_and_multiply_run_on_the_device(x):
    y = x.copyto(try_gpu())
    z = x.to(try_gpu())
    r = (z + 2).exp() * y
    assert r.device == try_gpu() and r.dtype == gpuarr.float32
    expected = np.exp(np.array([3, 4, 5], np.float32)) * np.array([1, 2, 3], np.float32)
    np.testing.assert_allclose(r.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(r.numpy(), [20.085537, 109.1963, 445.2395], rtol=1e-6)
    if on_gpu(r) and gpuarr._core._gpu_mode()[0] in ("cuda", "emulated"):
        # a CUDA device's expf is within 2 ulps of the correctly rounded value (CUDA's
        # documented bound), not the host's: the last printed digit follows the device
        check_printed(r, np.array2string(r.numpy()))
    else:
        check_printed(r, "[ 20.085537 109.1963   445.2395  ]")


def test_c10_mixing_the_cpu_with_a_gpu_is_an_error(x):
    y = x.copyto(try_gpu())
    if not on_gpu(y):
        assert ((x + y).numpy() == [2, 4, 6]).all()
        return
    with pytest.raises(gpuarr.DeviceMismatchError, match="cpu\\(0\\)"):
        x + y


def test_c11_to_c13_a_dense_layer_on_the_device(x):
    y = x.copyto(try_gpu())
    net = nn.Sequential()
    net.add(nn.Linear(1, 1, bias=False, device=try_gpu()))
    out = net(y.reshape((3, 1)))
    assert out.device == try_gpu() and out.shape == (3, 1)
    v = out.numpy()[:, 0]
    np.testing.assert_allclose(v, v[0] * np.array([1, 2, 3], np.float32), rtol=1e-6)
    W = net[0].weight
    assert W.shape == (1, 1) and W.device == try_gpu()
    m = gpuarr.matmul(y.reshape((3, 1)), W)
    np.testing.assert_allclose(m.numpy()[:, 0], v, rtol=1e-6)
