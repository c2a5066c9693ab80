"""Arrays from NumPy and Python data, attributes, and the way back to NumPy."""
import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_round_trip_through_numpy_keeps_values_and_dtype(device, dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    x = gpuarr.asarray(a, device=device)
    assert x.device == device
    assert x.dtype == dtype
    assert x.shape == (2, 3, 4) and x.ndim == 3 and x.size == 24
    np.testing.assert_array_equal(x.numpy(), a)
    assert x.numpy().dtype == a.dtype


def test_strided_negative_numpy_views_are_read_correctly(device):
    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)[::-1, 1::2, ::-2]
    x = gpuarr.asarray(a, device=device)
    np.testing.assert_array_equal(x.numpy(), a)


def test_python_floats_default_to_float32_and_ints_to_int64():
    assert gpuarr.array([1.0, 2.0, 3.0]).dtype == gpuarr.float32
    assert gpuarr.array([1, 2, 3]).dtype == gpuarr.int64
    assert gpuarr.array([True, False]).dtype == gpuarr.bool
    assert gpuarr.array([1j]).dtype == gpuarr.complex64
    assert gpuarr.array(np.array([1.0])).dtype == gpuarr.float64


def test_cpu_array_from_numpy_without_copy_shares_memory():
    a = np.arange(6.0)
    x = gpuarr.asarray(a)
    a[0] = 42.0
    assert x.numpy()[0] == 42.0


def test_copy_false_refuses_a_needed_copy():
    with pytest.raises(ValueError, match="copy=False"):
        gpuarr.asarray(np.arange(3.0), dtype="float32", copy=False)


def test_numpy_asarray_of_cpu_array_is_zero_copy():
    x = gpuarr.array([1.0, 2.0])
    v = np.asarray(x)
    assert v.ctypes.data == x._data_ptr


def test_ragged_nested_lists_raise_value_error():
    with pytest.raises(ValueError):
        gpuarr.array([[1, 2], [3]])


def test_item_of_one_element_and_error_otherwise(device):
    x = gpuarr.asarray(np.array([2.5], np.float32), device=device)
    assert x.item() == 2.5 and float(x) == 2.5 and int(x) == 2 and bool(x)
    y = gpuarr.asarray(np.arange(3.0), device=device)
    with pytest.raises(ValueError, match="exactly one element"):
        y.item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(y)


def test_dtype_objects_compare_with_names_and_numpy():
    assert gpuarr.float32 == "float32" and gpuarr.float32 == np.float32
    assert gpuarr.float32 != gpuarr.float64
    assert gpuarr.DType("f8") is gpuarr.float64
    with pytest.raises(TypeError, match="not understood"):
        gpuarr.DType("float7")
