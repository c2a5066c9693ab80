"""Reductions and scans against NumPy: dtypes, axes, keepdims, views, empties, NaN."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuarr
from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, NUMERIC_DTYPES, to_numpy


def _data(dtype, shape, seed=0):
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.integers(0, 2, shape).astype(bool)
    if dtype in INT_DTYPES:
        lo = 0 if dtype.startswith("u") else -5
        return r.integers(lo, 6, shape).astype(dtype)
    a = r.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * r.standard_normal(shape)
    return a.astype(dtype)


def _close(got, want, dtype):
    got = to_numpy(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    if want.dtype.kind in "fc":
        eps = np.finfo(want.dtype).eps
        tol = 2e-2 if eps > 1e-4 else 2e-5 if eps > 1e-10 else 1e-11
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
    else:
        np.testing.assert_array_equal(got, want)


AXES = [None, 0, 1, -1, (0, 2), (), (0, 1, 2)]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any"])
def test_reduction_matches_numpy_over_dtypes(device, dtype, name):
    a = _data(dtype, (3, 4, 5))
    if name == "prod" and dtype not in ("bool",):
        a = (a / 2).astype(dtype) if dtype in FLOAT_DTYPES else a
    x = gpuarr.asarray(a, device=device)
    for axis in AXES:
        for keepdims in (False, True):
            got = getattr(gpuarr, name)(x, axis=axis, keepdims=keepdims)
            want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
            assert got.device == device
            _close(got, np.asarray(want), dtype)


@pytest.mark.parametrize("dtype,want", [("bool", "int64"), ("int8", "int64"),
                                        ("int32", "int64"), ("uint8", "uint64"),
                                        ("uint32", "uint64"), ("float16", "float16"),
                                        ("float32", "float32"), ("complex64", "complex64")])
def test_sum_result_dtype_follows_numpy2(dtype, want):
    x = gpuarr.asarray(_data(dtype, (4,)))
    assert str(gpuarr.sum(x).dtype) == want
    assert str(gpuarr.prod(x).dtype) == want


def test_sum_with_dtype_argument():
    a = _data("int8", (10,))
    x = gpuarr.asarray(a)
    _close(gpuarr.sum(x, dtype="float32"), np.sum(a, dtype=np.float32), "float32")
    _close(gpuarr.sum(x, dtype="int8"), np.sum(a, dtype=np.int8), "int8")


def test_float32_sum_is_pairwise_accurate():
    a = np.full(10**6, 0.1, dtype=np.float32)
    ref = np.sum(a.astype(np.float64))
    got = float(gpuarr.sum(gpuarr.asarray(a)))
    assert abs(got - ref) <= abs(float(a.sum()) - ref) + 1e-3
    r = np.random.default_rng(1).random(10**6).astype(np.float32)
    assert abs(float(gpuarr.sum(gpuarr.asarray(r))) - r.astype(np.float64).sum()) < 0.05


def test_float16_sum_accumulates_in_float32():
    a = np.ones(10000, np.float16)
    got = gpuarr.sum(gpuarr.asarray(a))
    assert got.dtype == gpuarr.float16 and float(got) == 10000.0


@pytest.mark.parametrize("name,value", [("sum", 0), ("prod", 1), ("all", True), ("any", False)])
def test_empty_reduction_gives_identity(device, name, value):
    x = gpuarr.asarray(np.zeros((0, 3), np.float32), device=device)
    assert to_numpy(getattr(gpuarr, name)(x)) == value
    r = getattr(gpuarr, name)(x, axis=0)
    np.testing.assert_array_equal(to_numpy(r), getattr(np, name)(np.zeros((0, 3)), axis=0))
    assert getattr(gpuarr, name)(x, axis=1).shape == (0,)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_empty_max_raises_valueerror(name):
    x = gpuarr.asarray(np.zeros((0, 3), np.float32))
    with pytest.raises(ValueError):
        getattr(gpuarr, name)(x)
    with pytest.raises(ValueError):
        getattr(gpuarr, name)(x, axis=0)


def test_max_propagates_nan_and_argmax_finds_first_nan(device):
    a = np.array([[1.0, np.nan, 3.0, np.nan], [5.0, 2.0, 1.0, 0.0]], np.float32)
    x = gpuarr.asarray(a, device=device)
    np.testing.assert_array_equal(to_numpy(x.max(axis=1)), a.max(axis=1))
    np.testing.assert_array_equal(to_numpy(x.min(axis=0)), a.min(axis=0))
    assert np.isnan(float(x.max()))
    assert int(x.argmax()) == 1 and int(x.argmin()) == 1
    np.testing.assert_array_equal(to_numpy(x.argmax(axis=1)), a.argmax(axis=1))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES + ["bool"])
def test_argmax_argmin_match_numpy(device, dtype):
    a = _data(dtype, (4, 6), seed=3)
    x = gpuarr.asarray(a, device=device)
    for axis in (None, 0, 1, -1):
        for kd in (False, True):
            np.testing.assert_array_equal(to_numpy(gpuarr.argmax(x, axis=axis, keepdims=kd)),
                                          np.argmax(a, axis=axis, keepdims=kd))
            np.testing.assert_array_equal(to_numpy(gpuarr.argmin(x, axis=axis, keepdims=kd)),
                                          np.argmin(a, axis=axis, keepdims=kd))


def test_reductions_of_strided_negative_and_broadcast_views(device):
    a = _data("float64", (6, 8, 5), seed=4)
    base = np.lib.stride_tricks
    views = [a[::2, 1::3], a[::-1, :, ::-2], a.transpose(2, 0, 1),
             base.as_strided(a[0, 0], shape=(4, 5), strides=(0, 8)), a[2, 3]]
    for v in views:
        x = gpuarr.asarray(v, device=device)
        for axis in (None, 0, -1):
            for name in ("sum", "max", "argmin"):
                _close(getattr(gpuarr, name)(x, axis=axis), np.asarray(getattr(np, name)(v, axis=axis)), "float64")


def test_reduction_of_0d_array(device):
    x = gpuarr.asarray(np.float32(2.5), device=device)
    assert float(gpuarr.sum(x)) == 2.5 and gpuarr.sum(x).shape == ()
    assert int(gpuarr.argmax(x)) == 0
    assert gpuarr.max(x, axis=()).shape == ()


def test_large_reductions_along_each_axis():
    # big enough for the threaded and row-accumulating paths
    a = _data("float32", (300, 700), seed=5)
    x = gpuarr.asarray(a)
    _close(x.sum(axis=0), a.sum(axis=0), "float32")
    _close(x.max(axis=1), a.max(axis=1), "float32")
    _close(x.max(axis=0), a.max(axis=0), "float32")
    _close(x.sum(), np.asarray(a.sum(dtype=np.float64), np.float32), "float32")
    np.testing.assert_array_equal(to_numpy(x.argmax(axis=0)), a.argmax(axis=0))
    big = _data("float64", (3 * 65536 + 7,), seed=6)
    big[100000] = 50.0
    xb = gpuarr.asarray(big)
    assert int(xb.argmax()) == 100000
    assert abs(float(xb.sum()) - big.sum()) < 1e-9


def test_full_reduction_stays_on_device(gpu_device):
    x = gpuarr.asarray(np.arange(10, dtype=np.float32), device=gpu_device)
    gpuarr.reset_transfer_stats()
    s = x.sum()
    assert s.device == gpu_device and s.shape == ()
    assert gpuarr.transfer_stats().d2h_count == 0


def test_axis_errors_are_numpy_like():
    x = gpuarr.asarray(np.zeros((2, 3)))
    with pytest.raises(np.exceptions.AxisError):
        x.sum(axis=2)
    with pytest.raises(IndexError):
        x.sum(axis=-3)
    with pytest.raises(ValueError, match="duplicate"):
        x.sum(axis=(0, -2))
    with pytest.raises(TypeError):
        x.sum(axis=1.5)
    with pytest.raises(TypeError):
        gpuarr.sum([1, 2])


def test_methods_match_functions():
    a = _data("int16", (3, 4))
    x = gpuarr.asarray(a)
    np.testing.assert_array_equal(to_numpy(x.sum(axis=1, keepdims=True)), a.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(to_numpy(x.prod(0)), a.prod(0))
    assert bool(x.any()) == a.any() and bool(x.all()) == a.all()
    assert int(x.argmin()) == a.argmin()


# --- scans ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cumulative_sum_and_prod_match_numpy(device, dtype):
    a = _data(dtype, (3, 5), seed=7)
    x = gpuarr.asarray(a, device=device)
    for axis in (0, 1, -1):
        _close(gpuarr.cumulative_sum(x, axis=axis), np.cumulative_sum(a, axis=axis), dtype)
        _close(gpuarr.cumulative_prod(x, axis=axis), np.cumulative_prod(a, axis=axis), dtype)


def test_cumulative_sum_include_initial_and_views(device):
    a = _data("float64", (4, 6), seed=8)[::-1, ::2]
    x = gpuarr.asarray(a, device=device)
    _close(gpuarr.cumulative_sum(x, axis=1, include_initial=True),
           np.cumulative_sum(a, axis=1, include_initial=True), "float64")
    _close(gpuarr.cumulative_prod(x, axis=0, include_initial=True),
           np.cumulative_prod(a, axis=0, include_initial=True), "float64")
    e = gpuarr.asarray(np.zeros((0,), np.int32), device=device)
    np.testing.assert_array_equal(to_numpy(gpuarr.cumulative_sum(e, include_initial=True)), [0])


def test_cumulative_sum_needs_axis_for_nd():
    x = gpuarr.asarray(np.ones((2, 2)))
    with pytest.raises(ValueError):
        gpuarr.cumulative_sum(x)
    one = gpuarr.asarray(np.arange(4))
    np.testing.assert_array_equal(to_numpy(gpuarr.cumulative_sum(one)), [0, 1, 3, 6])
    assert gpuarr.cumulative_sum(one).dtype == gpuarr.int64


# --- mean / var / std (composed with elementwise kernels) ------------------------------

@pytest.mark.parametrize("dtype", ["int32", "float16", "float32", "float64", "complex64"])
def test_mean_var_std_match_numpy(device, dtype):
    a = _data(dtype, (4, 5, 3), seed=9)
    x = gpuarr.asarray(a, device=device)
    for axis in (None, 0, (1, 2), -1):
        for kd in (False, True):
            _close(gpuarr.mean(x, axis=axis, keepdims=kd), np.asarray(np.mean(a, axis=axis, keepdims=kd)), dtype)
            _close(gpuarr.var(x, axis=axis, keepdims=kd), np.asarray(np.var(a, axis=axis, keepdims=kd)), dtype)
            _close(x.std(axis=axis, ddof=1, keepdims=kd), np.asarray(np.std(a, axis=axis, ddof=1, keepdims=kd)), dtype)
    _close(gpuarr.std(x, correction=1), np.asarray(np.std(a, ddof=1)), dtype)


# --- properties --------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=4), data=st.data())
def test_sum_and_max_over_random_axes_match_numpy(shape, data):
    a = np.random.default_rng(len(shape)).integers(-9, 9, shape).astype(np.int32)
    nd = len(shape)
    axes = data.draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda v: v % nd, max_size=nd)) if nd else []
    keep = data.draw(st.booleans())
    x = gpuarr.asarray(a)
    axis = tuple(axes)
    np.testing.assert_array_equal(to_numpy(gpuarr.sum(x, axis=axis, keepdims=keep)),
                                  np.sum(a, axis=axis, keepdims=keep))
    if all(a.shape[i] > 0 for i in axes) and (a.size > 0 or axes):
        try:
            want = np.max(a, axis=axis, keepdims=keep)
        except ValueError:
            return
        np.testing.assert_array_equal(to_numpy(gpuarr.max(x, axis=axis, keepdims=keep)), want)
