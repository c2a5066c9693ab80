"""Result dtypes and Python-int operands at NumPy 2's corners, NumPy as the oracle
(issue 44, item 8): np.rint and np.fabs of integers are floats; floor, ceil and trunc
keep an integer dtype (NumPy >= 2.1); a float-only function of two small integer
dtypes runs in NumPy's float (hypot(int8, uint8) is float16); a Python int beside a
uint8 array follows NEP 50 as NumPy 2 does, computing where NumPy computes and raising
OverflowError where NumPy raises. (An integer array with a Python float gives float32,
gpuarr's documented default-float rule, not NumPy's float64: not checked here.)
"""
import itertools

import numpy as np
import pytest

import gpuarr
from conftest import INT_DTYPES

NUMPY_2_1 = tuple(int(p) for p in np.__version__.split(".")[:2]) >= (2, 1)


def _on(device, a):
    return gpuarr.asarray(a, device=device)


def _values(dtype):
    info = np.iinfo(dtype) if dtype != "bool" else None
    vals = [0, 1, 2, 7] if info is None or info.min == 0 else [0, 1, -2, 7]
    if info is not None:
        vals += [info.max, info.min]
    return np.array(vals, dtype=dtype)


def _same(got, want):
    got = got.numpy()
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    tol = 1e-3 if want.dtype == np.float16 else 1e-6
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["bool"] + INT_DTYPES)
@pytest.mark.parametrize("name", ["rint", "fabs"])
def test_numpy_rint_and_fabs_of_integers_are_floats_as_numpy(device, name, dtype):
    a = _values(dtype)
    _same(getattr(np, name)(_on(device, a)), getattr(np, name)(a))


@pytest.mark.skipif(not NUMPY_2_1, reason="NumPy >= 2.1 is the oracle: floor, ceil and "
                    "trunc of integers keep the integer dtype since NumPy 2.1")
@pytest.mark.parametrize("dtype", ["bool"] + INT_DTYPES)
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc"])
def test_floor_ceil_trunc_of_integers_keep_the_dtype_as_numpy2(device, name, dtype):
    a = _values(dtype)
    want = getattr(np, name)(a)
    _same(getattr(gpuarr, name)(_on(device, a)), want)
    _same(getattr(np, name)(_on(device, a)), want)


_SMALL = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32"]
_FLOAT_ONLY = ["arctan2", "hypot", "copysign", "nextafter", "logaddexp"]


@pytest.mark.parametrize("name", _FLOAT_ONLY)
def test_float_only_functions_of_mixed_integer_dtypes_give_numpys_dtype(device, name):
    bad = []
    for ta, tb in itertools.product(_SMALL, repeat=2):
        a, b = _values(ta)[:4], _values(tb)[:4]
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, b)
        got = getattr(gpuarr, name)(_on(device, a), _on(device, b)).numpy()
        if got.dtype != want.dtype:
            bad.append((ta, tb, str(got.dtype), str(want.dtype)))
            continue
        tol = 2e-3 if want.dtype == np.float16 else 1e-6
        if not np.allclose(got.astype(float), want.astype(float), rtol=tol, equal_nan=True):
            bad.append((ta, tb, got, want))
    assert not bad, bad[:8]


_WITH_INT = _FLOAT_ONLY + ["logical_and", "logical_or", "logical_xor", "add",
                           "multiply", "maximum", "bitwise_and", "remainder", "divide",
                           "equal", "less"]
_INTS = [-1, 255, 256, 300, 70000, -(2**40), 2**63 - 1, 2**63, 2**64 + 1]


def _numpy_or_error(fn, *args):
    try:
        with np.errstate(all="ignore"):
            return fn(*args), None
    except (OverflowError, TypeError, ValueError) as e:
        return None, type(e)


@pytest.mark.parametrize("name", _WITH_INT)
def test_uint8_array_with_a_python_int_as_numpy2(device, name):
    a = np.array([0, 1, 2, 200, 255], dtype=np.uint8)
    x = _on(device, a)
    bad = []
    for v, swap in itertools.product(_INTS, (False, True)):
        args, gargs = ((v, a), (v, x)) if swap else ((a, v), (x, v))
        want, err = _numpy_or_error(getattr(np, name), *args)
        try:
            got = getattr(gpuarr, name)(*gargs).numpy()
        except Exception as e:  # compared with NumPy's below
            if type(e) is not err:
                bad.append((v, swap, f"gpuarr raised {type(e).__name__}: {e}",
                            err and err.__name__))
            continue
        if err is not None:
            bad.append((v, swap, f"gpuarr gave {got.dtype}", f"NumPy raised {err.__name__}"))
        elif got.dtype != want.dtype:
            bad.append((v, swap, str(got.dtype), str(want.dtype)))
        elif not np.allclose(got.astype(float), want.astype(float), rtol=2e-3,
                             equal_nan=True):
            bad.append((v, swap, got, want))
    assert not bad, bad[:8]


def test_logical_and_of_uint8_with_minus_one_is_its_truth(device):
    x = _on(device, np.array([0, 1, 255], dtype=np.uint8))
    assert gpuarr.logical_and(x, -1).numpy().tolist() == [False, True, True]
    assert gpuarr.logical_xor(x, 256).numpy().tolist() == [True, False, False]
    with pytest.raises(OverflowError, match="too large for logical_or"):
        gpuarr.logical_or(x, 2**64)
