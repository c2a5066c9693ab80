"""repr() and str() look exactly like NumPy's, and print device arrays cheaply."""
import warnings

import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES

SHAPES = [(), (0,), (3,), (2, 3), (2, 0), (1001,), (40, 40), (3, 4, 100), (7, 7, 7, 7),
          (2000, 3)]


def _suffix(device):
    return "" if device == gpuarr.cpu() else f" @{device!r}"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex64", "float16"])
def test_str_matches_numpy(device, shape, dtype):
    a = (np.arange(int(np.prod(shape))).reshape(shape) * 1.37 - 5).astype(dtype)
    x = gpuarr.asarray(a, device=device)
    assert str(x) == str(a) + _suffix(device)


@pytest.mark.parametrize("shape", SHAPES)
def test_repr_of_default_dtypes_matches_numpy(shape):
    a = np.arange(int(np.prod(shape))).reshape(shape)  # int64: implied in both
    assert repr(gpuarr.asarray(a)) == repr(a)
    b = np.asarray(a > 3)
    assert repr(gpuarr.asarray(b)) == repr(b)


def test_repr_examples():
    assert repr(gpuarr.asarray([1.0, 2.0, 3.0])) == "array([1., 2., 3.])"
    assert repr(gpuarr.asarray([1, 2, 3])) == "array([1, 2, 3])"
    assert repr(gpuarr.asarray(np.array([1.0, 2.0]))) == "array([1., 2.], dtype=float64)"
    assert repr(gpuarr.asarray(np.array([1, 2], np.int8))) == "array([1, 2], dtype=int8)"
    assert repr(gpuarr.asarray(2.5)) == "array(2.5)"
    assert str(gpuarr.asarray(2.5)) == "2.5"
    assert repr(gpuarr.zeros((0, 3))) == "array([], shape=(0, 3), dtype=float32)"


def test_repr_of_gpu_array_names_the_device(gpu_device):
    x = gpuarr.ones((2, 3), device=gpu_device)
    assert repr(x) == ("array([[1., 1., 1.],\n       [1., 1., 1.]], "
                       f"device={gpu_device!r})")
    assert str(x) == f"[[1. 1. 1.]\n [1. 1. 1.]] @{gpu_device!r}"
    y = gpuarr.asarray(np.array([1.0, 2.0]), device=gpu_device)
    assert repr(y) == f"array([1., 2.], dtype=float64, device={gpu_device!r})"


def test_summarised_repr_matches_numpy_with_shape(device):
    a = np.linspace(0, 1, 5000).reshape(50, 100)
    x = gpuarr.asarray(a, device=device)
    ref = repr(a)  # float64: NumPy implies the dtype, gpuarr names it
    got = repr(x)
    assert got.split("shape=")[0].rstrip() == ref.split("shape=")[0].rstrip()
    assert "shape=(50, 100), dtype=float64" in got


def test_printing_a_large_gpu_array_moves_only_shown_elements(gpu_device):
    x = gpuarr.zeros((1000, 1000), device=gpu_device)
    before = gpuarr.transfer_stats()
    repr(x)
    str(x)
    d = gpuarr.transfer_stats() - before
    assert 0 < d.d2h_bytes < 1000 * 4
    assert d.d2h_count == 2


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype_prints(device, dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    assert str(gpuarr.asarray(a, device=device)) == str(a) + _suffix(device)


def test_printing_a_gpu_array_can_warn(gpu_device):
    x = gpuarr.ones(3, device=gpu_device)
    old = gpuarr._core._set_warn_transfers(True)
    try:
        with pytest.warns(gpuarr.TransferWarning):
            repr(x)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            repr(gpuarr.ones(3))  # the CPU never warns
    finally:
        gpuarr._core._set_warn_transfers(old)


def test_print_options_are_respected():
    a = np.arange(20.0)
    with np.printoptions(threshold=10, edgeitems=2):
        assert str(gpuarr.asarray(a)) == str(a)


# --- format(): f"{loss:.3f}" as NumPy formats a 0-d array ------------------------------

@pytest.mark.parametrize("value,dtype,spec", [
    (1.23456, "float32", ".3f"), (1.23456, "float64", "10.4e"), (-7, "int64", "+05d"),
    (200, "uint8", "x"), (True, "bool", ">6"), (0.1, "float32", ""), (3, "int32", ""),
    (1 + 2j, "complex64", ".2f"), (0.5, "float16", ".2%"),
])
def test_format_of_a_0d_array_is_numpys(device, value, dtype, spec):
    x = gpuarr.asarray(np.array(value, dtype=dtype), device=device)
    expected = format(np.array(value, dtype=dtype), spec)
    with gpuarr.count_transfers() as t:
        got = format(x, spec)
    assert got == expected
    assert f"{x:{spec}}" == expected
    if device != gpuarr.cpu():
        assert t.d2h_count == 1  # a counted read, as float() and item() are


def test_format_of_an_nd_array_takes_only_the_empty_spec(device):
    x = gpuarr.asarray(np.array([1.5, 2.5], np.float32), device=device)
    assert format(x, "") == str(x) and f"{x}" == str(x)
    with pytest.raises(TypeError) as e:
        format(np.array([1.5, 2.5], np.float32), ".3f")  # NumPy refuses too
    with pytest.raises(TypeError, match=r"unsupported format string.*'\.3f'.*shape \(2,\)"):
        f"{x:.3f}"
