"""NumPy's result rules in corners that used to raise or answer wrongly: integer
round, division by an out-of-range Python int, round(decimals) of any size, var/std
with a NaN correction, integer power with negative exponent arrays, matmul with a
negative batch stride, and _core.copy."""
import numpy as np
import pytest

import gpuarr
from conftest import INT_DTYPES

POW_ERR = "Integers to negative integer powers are not allowed"


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("decimals", [-20, -3, -2, -1, 0, 1, 3])
def test_integer_round_keeps_the_dtype_and_is_exact(device, dtype, decimals):
    info = np.iinfo(dtype)
    vals = [0, 5, 15, 25, 35, 45, 115, 125, int(info.max), int(info.max) - 7]
    if info.min < 0:
        vals += [-5, -15, -25, -125, int(info.min), int(info.min) + 7]
    if dtype == "int64":
        vals.append(2**40 + 7)
    a = np.array(vals, dtype=dtype)
    want = [_round_half_even(int(v), decimals) for v in vals]
    keep = [info.min <= w <= info.max for w in want]  # the exact result fits the dtype
    got = gpuarr.asarray(a, device=device).round(decimals)
    assert got.dtype == np.round(a, decimals).dtype == a.dtype
    np.testing.assert_array_equal(got.numpy()[keep], np.array(want, dtype=object)[keep])
    small = np.array([abs(v) < 2**20 for v in vals])  # where NumPy (which rounds through floats) is exact
    np.testing.assert_array_equal(got.numpy()[small], np.round(a, decimals)[small])


def _round_half_even(v, decimals):
    """The exact oracle: Python integers."""
    if decimals >= 0:
        return v
    p = 10 ** -decimals
    q, r = divmod(v, p)
    if 2 * r > p or (2 * r == p and q % 2):
        q += 1
    return q * p


def test_integer_division_by_an_out_of_range_python_int_gives_floats(device):
    a = np.array([1, 2, -128], dtype=np.int8)
    for d in (300, -1000, 2**40):
        got = gpuarr.asarray(a, device=device) / d
        want = a / d
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want)
    with pytest.raises(OverflowError):
        gpuarr.asarray(a, device=device) + 300  # NumPy raises here too


@pytest.mark.parametrize("decimals", [400, 40, 309, -400, -40])
def test_round_accepts_any_decimals(device, decimals):
    for dtype in ("float32", "float64"):
        a = np.array([1.5, -2.25, 1e10], dtype=dtype)
        got = gpuarr.asarray(a, device=device).round(decimals).numpy()
        want = a if decimals > 0 else np.zeros_like(a)
        np.testing.assert_array_equal(got, want)


def test_var_and_std_with_a_nan_correction_give_nan(device):
    x = gpuarr.asarray([1.0, 2.0, 4.0], device=device)
    assert np.isnan(np.var(np.array([1.0, 2.0, 4.0]), correction=np.nan))
    assert np.isnan(gpuarr.var(x, correction=float("nan")).item())
    assert np.isnan(gpuarr.std(x, correction=float("nan")).item())


def test_integer_power_with_negative_exponent_arrays_raises_as_with_a_scalar(device):
    b = gpuarr.asarray([2, 3], device=device)
    with pytest.raises(ValueError, match=POW_ERR):
        b ** -1
    with pytest.raises(ValueError, match=POW_ERR):
        b ** gpuarr.asarray([-1, 2], device=device)
    with pytest.raises(ValueError):
        np.array([2, 3]) ** np.array([-1, 2])
    np.testing.assert_array_equal((b ** gpuarr.asarray([0, 2], device=device)).numpy(),
                                  [1, 9])
    u = gpuarr.asarray([2, 3], dtype="uint8", device=device)
    np.testing.assert_array_equal((u ** u).numpy(), [4, 27])


def test_matmul_with_negative_batch_strides(device):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(40, dtype=np.float32).reshape(2, 4, 5)
    gx, gy = gpuarr.asarray(x, device=device), gpuarr.asarray(y, device=device)
    np.testing.assert_allclose((gx[::-1] @ gy).numpy(), x[::-1] @ y)
    np.testing.assert_allclose((gx[::-1] @ gy[::-1]).numpy(), x[::-1] @ y[::-1])
    np.testing.assert_allclose((gx @ gy[::-1]).numpy(), x @ y[::-1])
    np.testing.assert_allclose((gx[::-1] @ gy[0]).numpy(), x[::-1] @ y[0])


def test_core_copy_copies(device):
    x = gpuarr.asarray([1.5, 2.5], device=device)
    c = gpuarr._core.copy(x)
    c[0] = 9
    np.testing.assert_array_equal(x.numpy(), [1.5, 2.5])
    out = gpuarr.zeros(2, dtype="float64", device=device)
    gpuarr._core.copy(x, out=out)
    np.testing.assert_array_equal(out.numpy(), [1.5, 2.5])
