"""DLPack: zero-copy exchange with NumPy on the CPU, explicit copies from GPUs."""
import ctypes
import gc

import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def _cpu(a):
    return gpuarr.asarray(a)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4), (3, 0)])
def test_numpy_from_dlpack_round_trip(dtype, shape):
    a = (np.arange(int(np.prod(shape))).reshape(shape) % 5).astype(dtype)
    x = _cpu(a.copy())
    n = np.from_dlpack(x)
    assert n.dtype == a.dtype and n.shape == a.shape
    np.testing.assert_array_equal(n, a)
    back = gpuarr.from_dlpack(n)
    assert back.dtype == dtype
    np.testing.assert_array_equal(back.numpy(), a)


def test_numpy_view_shares_memory_both_ways():
    x = gpuarr.asarray(np.arange(6.0).reshape(2, 3), copy=True)
    n = np.from_dlpack(x)
    n[1, 2] = 42.0
    assert x.numpy()[1, 2] == 42.0
    a = np.arange(4.0)
    y = gpuarr.from_dlpack(a)
    a[0] = -1.0
    assert y.numpy()[0] == -1.0


def test_strided_and_negative_stride_exports():
    base = np.arange(60.0).reshape(3, 4, 5)
    x = gpuarr.asarray(base)  # zero-copy view of base
    for view in (base[::-1, 1::2, ::-2], base[:, 2], base.T):
        g = gpuarr.from_dlpack(view)
        np.testing.assert_array_equal(g.numpy(), view)
        np.testing.assert_array_equal(np.from_dlpack(g), view)
    np.testing.assert_array_equal(np.from_dlpack(x), base)


def test_capsule_names_follow_max_version():
    x = gpuarr.ones(3)
    assert _get_name(x.__dlpack__()) == b"dltensor"
    assert _get_name(x.__dlpack__(max_version=(0, 8))) == b"dltensor"
    assert _get_name(x.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"
    assert _get_name(x.__dlpack__(max_version=(2, 0))) == b"dltensor_versioned"


def test_dlpack_arguments_are_keyword_only_and_checked():
    x = gpuarr.ones(3)
    with pytest.raises(TypeError):
        x.__dlpack__(None)
    with pytest.raises(TypeError):
        x.__dlpack__(colour=1)
    with pytest.raises(BufferError):
        x.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 0))


def test_dlpack_device_of_cpu():
    assert gpuarr.ones(2).__dlpack_device__() == (1, 0)


def test_copy_true_sets_is_copied_and_does_not_share():
    x = gpuarr.asarray(np.zeros(3), copy=True)
    n = np.from_dlpack(x, copy=True)
    n[0] = 5
    assert x.numpy()[0] == 0


def test_from_dlpack_copy_and_device_arguments(device):
    a = np.arange(5, dtype=np.int32)
    y = gpuarr.from_dlpack(a, device=device)
    assert y.device == device
    np.testing.assert_array_equal(y.numpy(), a)
    z = gpuarr.from_dlpack(a, copy=True)
    a[0] = 99
    assert z.numpy()[0] == 0


def test_from_dlpack_of_gpuarr_array_keeps_its_device(device):
    x = gpuarr.arange(4, device=device)
    y = gpuarr.from_dlpack(x)
    assert y.device == device and y._storage_id == x._storage_id


def test_from_dlpack_without_protocol_raises_attribute_error():
    with pytest.raises(AttributeError):
        gpuarr.from_dlpack(3)


def test_asarray_accepts_dlpack_producers():
    class Producer:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.arange(3.0)
    x = gpuarr.asarray(Producer(a))
    np.testing.assert_array_equal(x.numpy(), a)


def test_read_only_numpy_imports_read_only():
    a = np.arange(3.0)
    a.flags.writeable = False
    x = gpuarr.from_dlpack(a)
    with pytest.raises(BufferError):
        x.__dlpack__()  # a legacy capsule cannot carry READ_ONLY
    n = np.from_dlpack(x)
    assert not n.flags.writeable


def test_dropping_an_unused_capsule_frees_the_export(device):
    gc.collect()  # arrays in cycles left by earlier tests must not be freed in between
    before = gpuarr.memory_stats(gpuarr.cpu())["allocated_bytes"]
    x = gpuarr.zeros(1000, device=device)
    for kw in ({}, {"max_version": (1, 0)}):
        if device == gpuarr.cpu():
            cap = x.__dlpack__(**kw)
        else:
            cap = x.__dlpack__(dl_device=(1, 0), **kw)  # a host copy
        del cap
    del x
    gc.collect()
    after = gpuarr.memory_stats(gpuarr.cpu())["allocated_bytes"]
    assert after == before


def test_numpy_cannot_read_gpu_array_in_place(gpu_device):
    x = gpuarr.ones(3, device=gpu_device)
    assert x.__dlpack_device__()[1] == gpu_device.index
    with pytest.raises(BufferError):
        np.from_dlpack(x)


def test_numpy_from_dlpack_to_cpu_is_counted_copy(gpu_device):
    x = gpuarr.arange(6, device=gpu_device)
    before = gpuarr.transfer_stats()
    n = np.from_dlpack(x, device="cpu")
    d = gpuarr.transfer_stats() - before
    np.testing.assert_array_equal(n, np.arange(6))
    assert d.d2h_bytes == 48
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(1, 0), copy=False)
