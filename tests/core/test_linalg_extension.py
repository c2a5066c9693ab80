"""gpuarr.linalg's composed functions (matrix_transpose, diagonal, trace, outer,
cross, matrix_power) against NumPy, on every device and over dtypes."""
import numpy as np
import pytest

import gpuarr
from conftest import NUMERIC_DTYPES

DTYPES = [d for d in NUMERIC_DTYPES if d not in ("float16", "uint8", "int8")]


def _arr(device, dtype, shape, seed=0):
    a = (np.random.default_rng(seed).integers(-3, 4, size=shape)).astype(dtype)
    return a, gpuarr.asarray(a, device=device)


def _close(got, want, device):
    assert isinstance(got, gpuarr.Array) and got.device == device
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3), (5, 5)])
@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 3, 7])
def test_diagonal_and_trace_match_numpy(device, shape, offset):
    a, x = _arr(device, "float64", shape)
    want = np.diagonal(a, offset=offset, axis1=-2, axis2=-1)
    _close(gpuarr.linalg.diagonal(x, offset=offset), want, device)
    _close(gpuarr.linalg.trace(x, offset=offset),
           np.trace(a, offset=offset, axis1=-2, axis2=-1), device)


@pytest.mark.parametrize("dtype", DTYPES)
def test_trace_dtype_and_outer(device, dtype):
    a, x = _arr(device, dtype, (4, 4))
    got = gpuarr.linalg.trace(x)
    assert got.dtype == gpuarr.sum(x[0]).dtype
    np.testing.assert_allclose(got.numpy(), np.trace(a))
    _close(gpuarr.linalg.outer(x[0], x[1]), np.outer(a[0], a[1]), device)
    with pytest.raises(ValueError, match="1-D"):
        gpuarr.linalg.outer(x, x[0])


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "complex128"])
@pytest.mark.parametrize("shapes,axis", [(((3,), (3,)), -1), (((4, 3), (4, 3)), -1),
                                         (((3, 5), (3, 5)), 0), (((2, 3), (3,)), -1)])
def test_cross_matches_numpy(device, dtype, shapes, axis):
    a, x = _arr(device, dtype, shapes[0])
    b, y = _arr(device, dtype, shapes[1], seed=1)
    _close(gpuarr.linalg.cross(x, y, axis=axis), np.cross(a, b, axis=axis), device)
    with pytest.raises(ValueError, match="3 elements"):
        gpuarr.linalg.cross(gpuarr.ones(4, device=device), gpuarr.ones(4, device=device))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", "complex64"])
def test_matrix_power_matches_numpy(device, n, dtype):
    a, x = _arr(device, dtype, (2, 3, 3))
    _close(gpuarr.linalg.matrix_power(x, n), np.linalg.matrix_power(a, n), device)


def test_matrix_power_refuses_what_it_cannot_do(device):
    x = gpuarr.ones((2, 3), device=device)
    with pytest.raises(ValueError, match="square"):
        gpuarr.linalg.matrix_power(x, 2)
    with pytest.raises(gpuarr.linalg.LinAlgError, match="Singular"):
        gpuarr.linalg.matrix_power(gpuarr.ones((2, 2), device=device), -1)


@pytest.mark.parametrize("n", [-1, -2, -3])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_matrix_power_negative_is_a_power_of_the_inverse(device, n, dtype):
    a, x = _arr(device, dtype, (2, 3, 3))
    a = a + 4 * np.eye(3, dtype=dtype)  # well conditioned
    x = gpuarr.asarray(a, device=device)
    _close(gpuarr.linalg.matrix_power(x, n), np.linalg.matrix_power(a, n), device)


def test_matrix_transpose_is_the_main_namespace_one(device):
    a, x = _arr(device, "float32", (2, 3, 4))
    assert gpuarr.linalg.matrix_transpose is gpuarr.matrix_transpose
    _close(gpuarr.linalg.matrix_transpose(x), np.matrix_transpose(a), device)


def test_numpy_linalg_reaches_them(device):
    a, x = _arr(device, "float64", (3, 3))
    _close(np.trace(x), np.trace(a), device)
    _close(np.linalg.matrix_power(x, 3), np.linalg.matrix_power(a, 3), device)
    _close(np.outer(x[0], x[1]), np.outer(a[0], a[1]), device)
