"""PyTorch's cast names on arrays (half, float, double, long, int, bool) and
Array.to(dtype) / .to(device, dtype), on every device, with autograd through them."""
import numpy as np
import pytest

import gpuarr

CASTS = [("half", "float16"), ("float", "float32"), ("double", "float64"),
         ("long", "int64"), ("int", "int32"), ("bool", "bool")]


@pytest.mark.parametrize("name,dtype", CASTS)
def test_cast_methods_convert_like_astype(device, name, dtype):
    a = np.array([0.0, 1.5, -2.25, 3.0], dtype=np.float32)
    x = gpuarr.asarray(a, device=device)
    y = getattr(x, name)()
    assert y.dtype == getattr(gpuarr, dtype)
    assert y.device == device
    np.testing.assert_array_equal(y.numpy(), a.astype(dtype))


@pytest.mark.parametrize("name,dtype", CASTS)
def test_cast_to_own_dtype_is_the_array_itself(device, name, dtype):
    x = gpuarr.zeros(3, dtype=getattr(gpuarr, dtype), device=device)
    assert getattr(x, name)() is x


def test_to_takes_a_dtype_a_device_or_both(device):
    x = gpuarr.asarray([1.0, 2.0, 3.0])
    assert x.to(gpuarr.float16).dtype == gpuarr.float16
    assert x.to(np.float64).dtype == gpuarr.float64
    assert x.to(np.dtype("int32")).dtype == gpuarr.int32
    y = x.to(device, gpuarr.float16)
    assert (y.device, y.dtype) == (device, gpuarr.float16)
    z = x.to(device=device, dtype=gpuarr.int64)
    assert (z.device, z.dtype) == (device, gpuarr.int64)
    np.testing.assert_array_equal(z.numpy(), [1, 2, 3])
    w = gpuarr.zeros(2, dtype=gpuarr.float64, device=device)
    v = x.to(w)  # another array's device and dtype
    assert (v.device, v.dtype) == (device, gpuarr.float64)
    assert x.to(gpuarr.float32) is x
    assert x.to(gpuarr.cpu(), gpuarr.float32) is x
    c = x.to(gpuarr.float32, copy=True)
    assert c is not x and np.array_equal(c.numpy(), x.numpy())


def test_to_arguments_are_checked():
    x = gpuarr.ones(2)
    with pytest.raises(TypeError, match="two dtypes"):
        x.to(gpuarr.float16, gpuarr.float32)
    with pytest.raises(TypeError, match="two devices"):
        x.to("cpu", "cpu")
    with pytest.raises(TypeError, match="at most"):
        x.to("cpu", gpuarr.float16, 3)


def test_autograd_flows_through_the_casts(device):
    x = gpuarr.asarray([1.0, 2.0, 3.0], device=device)
    x.requires_grad_()
    y = (x.half() * 2).float().sum() + (x.double() ** 2).sum()
    y.backward()
    assert x.grad.dtype == gpuarr.float32
    np.testing.assert_allclose(x.grad.numpy(), 2 + 2 * np.array([1.0, 2.0, 3.0]))


def test_autograd_flows_through_to_device_and_dtype(two_gpus):
    x = gpuarr.asarray([1.0, 2.0], device=two_gpus[0])
    x.requires_grad_()
    y = x.to(two_gpus[1], gpuarr.float64)
    (y * 3).sum().backward()
    assert x.grad.device == two_gpus[0] and x.grad.dtype == gpuarr.float32
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
