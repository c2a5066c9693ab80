"""meshgrid, tril, triu, repeat, roll, tile, unstack, take_along_axis, count_nonzero,
diff: NumPy is the oracle, on every device and over dtypes."""
import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES, NUMERIC_DTYPES


def _arr(device, dtype="float64", shape=(3, 4)):
    a = (np.arange(int(np.prod(shape))).reshape(shape) % 5).astype(dtype)
    return a, gpuarr.asarray(a, device=device)


def _same(got, want, device):
    assert isinstance(got, gpuarr.Array) and got.device == device
    assert got.dtype.name == want.dtype.name, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_meshgrid_matches_numpy(device, indexing, n):
    arrays = [np.arange(k + 2, dtype="float32") * (k + 1) for k in range(n)]
    got = gpuarr.meshgrid(*[gpuarr.asarray(a, device=device) for a in arrays],
                          indexing=indexing)
    want = np.meshgrid(*arrays, indexing=indexing)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w, device)
    with pytest.raises(ValueError, match="indexing"):
        gpuarr.meshgrid(gpuarr.ones(2, device=device), indexing="yx")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("k", [-2, 0, 1, 5])
def test_tril_triu_match_numpy(device, dtype, k):
    a, x = _arr(device, dtype, (2, 3, 4))
    _same(gpuarr.tril(x, k=k), np.tril(a, k), device)
    _same(gpuarr.triu(x, k=k), np.triu(a, k), device)


def test_tril_needs_a_matrix(device):
    with pytest.raises(ValueError, match="2 dimensions"):
        gpuarr.tril(gpuarr.ones(3, device=device))


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32", "complex64"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("repeats", [0, 1, 3])
def test_repeat_by_an_int_matches_numpy(device, dtype, axis, repeats):
    a, x = _arr(device, dtype)
    _same(gpuarr.repeat(x, repeats, axis=axis), np.repeat(a, repeats, axis=axis), device)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_repeat_by_an_array_matches_numpy(device, axis):
    a, x = _arr(device, "int16")
    n = a.size if axis is None else a.shape[axis]
    r = (np.arange(n) * 7 % 4).astype("int64")
    _same(gpuarr.repeat(x, gpuarr.asarray(r, device=device), axis=axis),
          np.repeat(a, r, axis=axis), device)
    with pytest.raises(ValueError, match="negative"):
        gpuarr.repeat(x, gpuarr.asarray(-r - 1, device=device), axis=axis)
    with pytest.raises(ValueError, match="negative"):
        gpuarr.repeat(x, -1)


@pytest.mark.parametrize("shift,axis", [(1, None), (-3, None), (13, None), (1, 0), (-1, 1),
                                        (5, -1), ((1, 2), (0, 1)), (2, (0, 1)), (0, 0)])
def test_roll_matches_numpy(device, shift, axis):
    a, x = _arr(device, "int64")
    _same(gpuarr.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis), device)


def test_roll_returns_a_new_array(device):
    a, x = _arr(device)
    y = gpuarr.roll(x, 0, axis=0)
    y[0, 0] = 99
    assert x[0, 0].item() == a[0, 0]


@pytest.mark.parametrize("reps", [(2,), (2, 1), (1, 3), (2, 2, 2), (0, 1)])
@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_tile_matches_numpy(device, reps, shape):
    a, x = _arr(device, "float32", shape)
    _same(gpuarr.tile(x, reps), np.tile(a, reps), device)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unstack_is_the_inverse_of_stack(device, axis):
    a, x = _arr(device, "int8", (2, 3, 4))
    parts = gpuarr.unstack(x, axis=axis)
    want = [np.take(a, i, axis=axis) for i in range(a.shape[axis])]
    assert isinstance(parts, tuple) and len(parts) == len(want)
    for p, w in zip(parts, want):
        _same(p, w, device)
    _same(gpuarr.stack(parts, axis=axis), a, device)


@pytest.mark.parametrize("dtype", ["int32", "float64", "complex128", "bool"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis_matches_numpy(device, dtype, axis):
    a, x = _arr(device, dtype, (3, 4))
    rng = np.random.default_rng(0)
    idx = rng.integers(-a.shape[axis], a.shape[axis], size=(5, 4) if axis == 0 else (3, 6))
    got = gpuarr.take_along_axis(x, gpuarr.asarray(idx, device=device), axis=axis)
    _same(got, np.take_along_axis(a, idx, axis=axis), device)


def test_take_along_axis_with_argmax_keepdims_and_broadcasting(device):
    a, x = _arr(device, "float32", (3, 4))
    i = gpuarr.argmax(x, axis=1, keepdims=True)
    _same(gpuarr.take_along_axis(x, i, axis=1), np.max(a, axis=1, keepdims=True), device)
    idx = np.array([[0, 3]])  # broadcasts along axis 0
    _same(gpuarr.take_along_axis(x, gpuarr.asarray(idx, device=device), axis=1),
          np.take_along_axis(a, np.broadcast_to(idx, (3, 2)), axis=1), device)
    with pytest.raises(ValueError, match="same number"):
        gpuarr.take_along_axis(x, gpuarr.asarray([0], device=device))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("axis", [None, 0, (0, 1)])
def test_count_nonzero_matches_numpy(device, dtype, axis):
    a, x = _arr(device, dtype, (3, 4))
    got = gpuarr.count_nonzero(x, axis=axis)
    want = np.count_nonzero(a, axis=axis)
    assert got.dtype == gpuarr.int64
    np.testing.assert_array_equal(got.numpy(), want)
    assert gpuarr.count_nonzero(x, axis=1, keepdims=True).shape == (3, 1)


@pytest.mark.parametrize("dtype", [d for d in NUMERIC_DTYPES if d != "float16"] + ["bool"])
@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("axis", [0, -1])
def test_diff_matches_numpy(device, dtype, n, axis):
    a, x = _arr(device, dtype, (4, 5))
    _same(gpuarr.diff(x, n=n, axis=axis), np.diff(a, n=n, axis=axis), device)


def test_diff_with_prepend_and_append(device):
    a, x = _arr(device, "float64", (3, 4))
    p = np.ones((3, 2))
    got = gpuarr.diff(x, prepend=gpuarr.asarray(p, device=device), append=7.0)
    _same(got, np.diff(a, prepend=p, append=7.0), device)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_floor_divide_special_cases_follow_numpy(device, dtype):
    """NumPy's floor division is divmod's quotient (inf // 1 is NaN, -1 // inf is -1),
    not the array API's floor(a / b): gpuarr follows NumPy (issue 31)."""
    inf = np.inf
    x1 = np.array([inf, inf, -inf, -inf, 5, 5, -5, -5, 0, inf, 7, -7, inf, -inf, np.nan,
                   0.0, -0.0, 1], dtype=dtype)
    x2 = np.array([2, -2, 2, -2, inf, -inf, inf, -inf, inf, inf, 2, 2, 1, 1, 1, 0.0, 3,
                   -0.0], dtype=dtype)
    with np.errstate(all="ignore"):
        want = np.floor_divide(x1, x2)
    got = gpuarr.floor_divide(gpuarr.asarray(x1, device=device),
                              gpuarr.asarray(x2, device=device)).numpy()
    np.testing.assert_array_equal(got, want)
    finite = ~np.isnan(want)  # the sign of a NaN is not specified
    np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]))
    op = (gpuarr.asarray(x1, device=device) // gpuarr.asarray(x2, device=device)).numpy()
    np.testing.assert_array_equal(op, want)
