"""NumPy's NaN-aware reductions and scans on every device (gpuarr.nansum, ... and
np.nansum(x) through __array_function__): NumPy on the same data is the oracle for
values, dtypes, and the all-NaN rules (which warning, or ValueError for nanargmax)."""
import warnings

import numpy as np
import pytest

import gpuarr
from gpuarr.testing import count_work

REDUCTIONS = ["nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanvar", "nanstd",
              "nanmedian"]
SCANS = ["nancumsum", "nancumprod"]


def _data(dtype):
    a = np.array([[1.5, np.nan, 3.0, -2.0],
                  [np.nan, np.nan, np.nan, np.nan],   # an all-NaN row
                  [0.5, 2.0, np.nan, 8.0]])
    if np.dtype(dtype).kind in "iu":
        return np.nan_to_num(a, nan=0).astype(dtype)
    return a.astype(dtype)


def _run(fn, *args, **kwargs):
    """fn's result and the messages of the RuntimeWarnings it gave."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        r = fn(*args, **kwargs)
    return r, [str(w.message) for w in got if issubclass(w.category, RuntimeWarning)]


def _same(result, device, expected, rtol):
    assert isinstance(result, gpuarr.Array), type(result)
    assert result.device == device
    expected = np.asarray(expected)
    assert result.dtype == gpuarr.DType(expected.dtype), (result.dtype, expected.dtype)
    np.testing.assert_allclose(result.numpy(), expected, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_nan_reduction_matches_numpy(device, name, dtype, axis):
    a = _data(dtype)
    x = gpuarr.asarray(a, device=device)
    rtol = 1e-6 if dtype == "float32" else 1e-12
    want, want_warn = _run(getattr(np, name), a, axis=axis)
    got, got_warn = _run(getattr(gpuarr, name), x, axis=axis)
    _same(got, device, want, rtol)
    assert got_warn == want_warn
    # the same call through NumPy's dispatch
    got, got_warn = _run(getattr(np, name), x, axis=axis)
    _same(got, device, want, rtol)
    assert got_warn == want_warn


@pytest.mark.parametrize("name", REDUCTIONS)
def test_nan_reduction_over_a_tuple_of_axes(device, name):
    a = np.stack([_data("float32")] * 2)
    x = gpuarr.asarray(a, device=device)
    want, want_warn = _run(getattr(np, name), a, axis=(0, 2))
    got, got_warn = _run(getattr(np, name), x, axis=(0, 2))
    _same(got, device, want, 1e-6)
    assert got_warn == want_warn


@pytest.mark.parametrize("name", ["nanmean", "nanvar", "nanmax", "nanmedian"])
def test_nan_reduction_keepdims(device, name):
    a = _data("float64")
    x = gpuarr.asarray(a, device=device)
    want, _ = _run(getattr(np, name), a, axis=1, keepdims=True)
    got, _ = _run(getattr(np, name), x, axis=1, keepdims=True)
    _same(got, device, want, 1e-12)


def test_nanvar_ddof_past_the_count_warns_and_gives_nan(device):
    a = np.array([[1.0, np.nan], [2.0, 4.0]])
    x = gpuarr.asarray(a, device=device)
    want, want_warn = _run(np.nanvar, a, axis=1, ddof=1)
    got, got_warn = _run(np.nanstd, x, axis=1, ddof=1)
    _same(got, device, np.sqrt(want), 1e-12)
    assert got_warn == want_warn == ["Degrees of freedom <= 0 for slice."]


def test_nanmedian_of_an_even_count_averages_the_middle_two(device):
    a = np.array([4.0, np.nan, 1.0, 3.0, 2.0, np.nan], np.float32)
    _same(gpuarr.nanmedian(gpuarr.asarray(a, device=device)), device, np.nanmedian(a), 0)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", SCANS)
def test_nan_scan_matches_numpy(device, name, axis):
    a = _data("float32")
    x = gpuarr.asarray(a, device=device)
    _same(getattr(np, name)(x, axis=axis), device, getattr(np, name)(a, axis=axis), 1e-6)


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
def test_nanarg_matches_numpy_and_refuses_an_all_nan_slice(device, name):
    a = _data("float64")
    x = gpuarr.asarray(a, device=device)
    _same(getattr(np, name)(x, axis=0), device, getattr(np, name)(a, axis=0), 0)
    _same(getattr(gpuarr, name)(x), device, getattr(np, name)(a), 0)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        getattr(np, name)(a, axis=1)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        getattr(np, name)(x, axis=1)


def test_no_nan_gives_no_warning(device):
    x = gpuarr.asarray(np.ones((2, 3), np.float32), device=device)
    for name in REDUCTIONS:
        _, warned = _run(getattr(gpuarr, name), x, axis=1)
        assert warned == [], name


@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nanargmax", "nanargmin"])
def test_nan_extreme_without_nan_reads_the_array_once(device, name):
    # issue 46: a slice without NaN has its answer from the plain reduction (one pass
    # over the array); the NaN recipe (mask, filled copy, all() of the mask) ran on
    # every call before: three elementwise passes and three reductions
    a = np.random.default_rng(0).standard_normal((40, 30))
    x = gpuarr.asarray(a, device=device)
    with count_work(device) as w:
        got, warned = _run(getattr(gpuarr, name), x, axis=1)
    _same(got, device, getattr(np, name)(a, axis=1), 0)
    assert warned == []
    # on a GPU, the reduction and one any() over its 40 results (before: the
    # reduction of the filled copy, all() of the mask and any()); the elementwise
    # operations and the gather of nanarg* are over the 40 results too. On the CPU
    # NumPy's own function runs on the array's memory (no gpuarr reduction at all).
    assert w[device].reductions == (0 if device.type == "cpu" else 2), w[device]


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nanargmax", "nanargmin"])
def test_nan_extreme_where_a_nan_slice_ends_at_the_fill_value(device, name, axis):
    # NaN beside -inf (+inf for min): the NaN-skipping recipe gives the fill value,
    # as it does for an all-NaN slice; only the all-NaN one warns (or raises)
    inf = np.inf if name.endswith("min") else -np.inf
    a = np.array([[inf, np.nan, inf], [np.nan, 2.0, np.nan], [np.nan, inf, 1.0]])
    x = gpuarr.asarray(a, device=device)
    want, want_warn = _run(getattr(np, name), a, axis=axis)
    got, got_warn = _run(getattr(gpuarr, name), x, axis=axis)
    _same(got, device, want, 0)
    assert got_warn == want_warn == []
    a[:, 0] = np.nan
    x = gpuarr.asarray(a, device=device)
    if name.startswith("nanarg"):
        if axis == 0:
            with pytest.raises(ValueError, match="All-NaN slice encountered"):
                getattr(gpuarr, name)(x, axis=axis)
            return
        _same(getattr(gpuarr, name)(x, axis=axis), device,
              getattr(np, name)(a, axis=axis), 0)
        return
    want, want_warn = _run(getattr(np, name), a, axis=axis, keepdims=True)
    got, got_warn = _run(getattr(gpuarr, name), x, axis=axis, keepdims=True)
    _same(got, device, want, 0)
    assert got_warn == want_warn


@pytest.mark.parametrize("name", ["nanmax", "nanargmin"])
def test_nan_extreme_of_float32_with_nan_matches_numpy(device, name):
    a = np.random.default_rng(1).standard_normal((64, 50)).astype(np.float32)
    a[np.random.default_rng(2).random(a.shape) < 0.1] = np.nan
    x = gpuarr.asarray(a, device=device)
    for axis in (None, 0, 1):
        _same(getattr(gpuarr, name)(x, axis=axis), device,
              getattr(np, name)(a, axis=axis), 0)


def test_nanmedian_on_a_gpu_moves_no_data(gpu_device):
    # the sort, the count and the gather run on the device; the one crossing is the
    # bool NumPy's all-NaN warning needs (its NaN constant was an upload before)
    a = np.random.default_rng(3).standard_normal((8, 9))
    a[2] = np.nan
    a[5, ::2] = np.nan
    x = gpuarr.asarray(a, device=gpu_device)
    before = gpuarr.transfer_stats()
    got, warned = _run(gpuarr.nanmedian, x, axis=1)
    moved = gpuarr.transfer_stats() - before
    assert moved.h2d_bytes == 0 and moved.d2d_bytes == 0, moved
    assert moved.d2h_count <= 1 and moved.d2h_bytes <= 1, moved
    want, want_warn = _run(np.nanmedian, a, axis=1)
    _same(got, gpu_device, want, 1e-12)
    assert warned == want_warn == ["All-NaN slice encountered"]


@pytest.mark.parametrize("q, axis, keepdims, dtype", [
    (0.5, 1, False, "float64"), ([0.1, 0.9], None, False, "float64"),
    (np.array([[0.25], [1.0]]), 0, True, "float32"), (0.4, 1, False, "int32"),
], ids=["scalar-q", "q-list-flat", "q-2d-keepdims-float32", "int"])
def test_nanquantile_matches_numpy(device, q, axis, keepdims, dtype):
    # xarray's quantile calls np.nanquantile: on a GPU a sort, a count and a gather
    # there, the one crossing the bool of NumPy's all-NaN warning
    a = _data(dtype)
    x = gpuarr.asarray(a, device=device)
    with gpuarr.count_transfers() as moved:
        got, warned = _run(np.nanquantile, x, q, axis=axis, keepdims=keepdims)
    assert moved.h2d_count == moved.d2d_count == 0 and moved.d2h_bytes <= 1, moved
    want, want_warn = _run(np.nanquantile, a, q, axis=axis, keepdims=keepdims)
    _same(got, device, want, 1e-6 if dtype == "float32" else 1e-12)
    assert warned == want_warn


def test_nanmax_of_complex_names_the_fix(device):
    x = gpuarr.asarray(np.array([1 + 1j, np.nan]), device=device)
    with pytest.raises(TypeError, match="real input"):
        gpuarr.nanmax(x)


def test_nan_function_of_a_list_names_the_fix():
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        gpuarr.nansum([1.0, float("nan")])


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_atleast_nd_matches_numpy(device, name, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = gpuarr.asarray(a, device=device)
    _same(getattr(np, name)(x), device, getattr(np, name)(a), 0)
    got = getattr(gpuarr, name)(x, x)
    assert isinstance(got, tuple) and len(got) == 2
    _same(got[1], device, getattr(np, name)(a, a)[1], 0)
