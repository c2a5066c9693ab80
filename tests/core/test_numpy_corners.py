"""NumPy's remaining corners (issue 31): each behaviour as NumPy 2 has it, on every
device this process has (cpu, simulated GPUs, emulated CUDA), NumPy as the oracle.

Complex special values: C99 Annex G as NumPy (through the C library) gives them, over
a grid of zeros of both signs, infinities, NaN and finite values, for every complex
function gpuarr has; the element math is shared (ga_elementwise_math.h), so the CPU and CUDA
devices run the same code."""
import itertools

import numpy as np
import pytest

import gpuarr
from conftest import X86, annex_g_oracle, numpy_windows_open_choices, x86_float_to_int


def _on(device, a):
    return gpuarr.asarray(a, device=device)


def _read(x):
    """A result read back (a GPU's deferred errors raise here)."""
    return x.numpy()


# --- index checks -------------------------------------------------------------------

def test_take_along_axis_checks_each_index_against_its_axis(device):
    """[[5], [0], [-4]] on a 3x3 array: 5 and -4 are in range as flat indices (the
    old composition read [5, 3, 5] from the neighbouring rows); NumPy raises."""
    x = _on(device, np.arange(9.0).reshape(3, 3))
    bad = _on(device, np.array([[5], [0], [-4]]))
    with pytest.raises(IndexError):
        _read(gpuarr.take_along_axis(x, bad, axis=1))
        gpuarr.synchronize(device)
    ok = np.array([[2], [0], [-1]])
    want = np.take_along_axis(np.arange(9.0).reshape(3, 3), ok, axis=1)
    np.testing.assert_array_equal(_read(gpuarr.take_along_axis(x, _on(device, ok), axis=1)),
                                  want)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_along_axis_with_argsort_broadcasts_as_numpy(device, axis):
    a = np.random.default_rng(1).normal(size=(3, 4, 5))
    idx = np.argsort(a, axis=axis)[(slice(None),) * (axis % 3) + (slice(0, 2),)]
    got = gpuarr.take_along_axis(_on(device, a), _on(device, idx), axis=axis)
    np.testing.assert_array_equal(_read(got), np.take_along_axis(a, idx, axis=axis))
    one = np.zeros((1,) * 3, dtype=np.int64)  # broadcasts over the other axes
    got = gpuarr.take_along_axis(_on(device, a), _on(device, one), axis=axis)
    np.testing.assert_array_equal(_read(got), np.take_along_axis(a, one, axis=axis))


def test_searchsorted_checks_the_sorter_length(device):
    a = np.array([3.0, 1.0, 2.0])
    short = np.array([1, 2])
    with pytest.raises(ValueError):
        np.searchsorted(a, 2.0, sorter=short)
    with pytest.raises(ValueError, match="sorter"):
        gpuarr.searchsorted(_on(device, a), 2.0, sorter=_on(device, short))
    order = np.argsort(a)
    got = gpuarr.searchsorted(_on(device, a), _on(device, np.array([2.0, 0.5, 9.0])),
                              sorter=_on(device, order))
    np.testing.assert_array_equal(_read(got), np.searchsorted(a, [2.0, 0.5, 9.0],
                                                              sorter=order))


@pytest.mark.parametrize("v", [300, -1, 2**70, -(2**70), 2])
def test_searchsorted_python_int_beyond_the_dtype_as_numpy2(device, v):
    a = np.arange(5, dtype=np.uint8)
    got = gpuarr.searchsorted(_on(device, a), v)
    assert int(got) == int(np.searchsorted(a, v)) and got.device == device


def test_full_like_out_of_range_fill_raises_as_numpy2(device):
    """NumPy 2 refuses 300 for uint8 in full and full_like (OverflowError)."""
    with pytest.raises(OverflowError):
        np.full_like(np.zeros(3), 300, dtype=np.uint8)
    with pytest.raises(OverflowError, match="300"):
        gpuarr.full_like(gpuarr.zeros(3, device=device), 300, dtype=gpuarr.uint8)


# --- ufunc out= and dtype= -------------------------------------------------------------

def test_ufunc_dtype_with_an_out_it_cannot_cast_to_raises(device):
    a = np.array([1.5, 2.0, 3.0])
    with pytest.raises(TypeError):
        np.add(a, 1, out=np.zeros(3, np.int8), dtype=np.float64)
    x, o = _on(device, a), gpuarr.zeros(3, dtype=gpuarr.int8, device=device)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        np.add(x, 1, out=o, dtype=np.float64)
    assert _read(o).tolist() == [0, 0, 0]  # nothing written
    with pytest.raises(TypeError, match="input 0"):
        np.add(x, 1, dtype=np.int8)  # float64 inputs into an int8 loop
    r = np.add(x, 1, out=gpuarr.zeros(3, dtype=gpuarr.float32, device=device),
               dtype=np.float64)
    np.testing.assert_array_equal(_read(r), np.add(a, 1, out=np.zeros(3, np.float32),
                                                   dtype=np.float64))


def test_byte_swapped_dtypes_are_refused_and_arrays_converted(device):
    """'>i4' names byte-swapped elements gpuarr never stores: refused as a dtype; a
    big-endian NumPy array converts with its values, as NumPy converts it."""
    with pytest.raises(TypeError, match="byte order"):
        gpuarr.zeros(2, dtype=np.dtype(">i4"), device=device)
    with pytest.raises(TypeError, match="byte order"):
        np.add(gpuarr.ones(2, device=device), 1, dtype=">f8")
    be = np.array([1, 2, 70000], dtype=">i4")
    x = gpuarr.asarray(be, device=device)
    assert x.dtype == gpuarr.int32 and _read(x).tolist() == [1, 2, 70000]


def test_bytes_are_not_a_float_buffer():
    """NumPy reads bytes as a string (b'abc' as float32 is a ValueError); a bytearray
    or memoryview is a buffer of uint8 and casts as in NumPy."""
    with pytest.raises(ValueError):
        np.asarray(b"abc", dtype=np.float32)
    with pytest.raises(TypeError, match="bytes"):
        gpuarr.asarray(b"abc", dtype=gpuarr.float32)
    got = gpuarr.asarray(bytearray(b"abc"), dtype=gpuarr.float32)
    np.testing.assert_array_equal(got.numpy(),
                                  np.asarray(bytearray(b"abc"), dtype=np.float32))


# --- result rules -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_floor_divide_of_infinity_is_nan_as_numpy(device, dtype):
    a = np.array([np.inf, -np.inf, -1.0, 1.0], dtype=dtype)
    b = np.array([1, 1, np.inf, -np.inf], dtype=dtype)
    with np.errstate(all="ignore"):
        want = np.floor_divide(a, b)
    got = _read(gpuarr.floor_divide(_on(device, a), _on(device, b)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "bool", "int64"])
def test_int_plus_huge_python_float_is_the_value_as_numpy(device, dtype):
    """NEP 50 gives int8 + 1e300 NumPy's default float (float64): 1e300. gpuarr's
    default is float32, where it would be inf; the value widens the loop instead."""
    x = _on(device, np.array([1, 0], dtype=dtype))
    for v in (1e300, -1e300, complex(1e300, 1)):
        got, want = x + v, np.array([1, 0], dtype=dtype) + v
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(_read(got), want)
    assert (x + 0.5).dtype == gpuarr.float32  # small floats keep gpuarr's default


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_to_int_dtypes_as_numpy(device, dtype):
    a = np.array([1.5, -2.5], dtype=dtype)
    x = _on(device, a)
    assert str(x.astype(int).dtype) == "int64"
    assert str((x // 1).dtype) == str((a // 1).dtype)
    for t in ("int8", "int16", "int32", "uint8"):
        want = a.astype(t) if X86 else x86_float_to_int(a.astype(np.float64), t)
        np.testing.assert_array_equal(_read(x.astype(getattr(gpuarr, t))), want)


@pytest.mark.parametrize("decimals", [400, -400, 308, -308, 20, -20])
def test_round_with_huge_decimals_is_defined(device, decimals):
    """NumPy gives NaN here (10**400 overflows inside its computation); gpuarr's
    documented choice: the values themselves for decimals past the dtype's digits,
    zeros (of the value's sign) for negative ones, the same on every device."""
    a = np.array([1.2345, -1.5e10, 0.0])
    got = _read(_on(device, a).round(decimals))
    if decimals > 0:
        with np.errstate(all="ignore"):
            # NumPy's x * 10**d overflows for d >= 309 (NaN) and for 1e10 at d = 308
            # (inf): no digits there to round, so x itself
            want = np.where(np.isinf(a * 10.0**min(decimals, 308)) | (decimals > 308), a,
                            np.round(a, min(decimals, 308)))
    else:
        want = a * 0.0
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    i = _on(device, np.array([12345, -7], dtype=np.int64))
    assert _read(i.round(decimals)).tolist() == ([12345, -7] if decimals > 0 else [0, 0])


@pytest.mark.parametrize("axes", [([-1], [0]), ([-1], [-2]), ((-1,), (0,)), (-1, 0),
                                  ([0, -1], [-1, 0])])
def test_tensordot_negative_axes_as_numpy(device, axes):
    a = np.arange(24.0).reshape(2, 3, 4)
    b = np.arange(12.0).reshape(4, 3) if axes != ([0, -1], [-1, 0]) else \
        np.arange(8.0).reshape(4, 2)
    want = np.tensordot(a, b, axes=axes)
    got = gpuarr.tensordot(_on(device, a), _on(device, b), axes=axes)
    np.testing.assert_allclose(_read(got), want)
    np.testing.assert_allclose(_read(np.tensordot(_on(device, a), _on(device, b),
                                                  axes=axes)), want)


def test_ravel_of_a_stepped_view_does_not_write_through(device):
    base = _on(device, np.arange(10.0))
    r = base[::2].ravel()
    r[0] = 99.0
    assert _read(base)[0] == 0.0
    c = base.ravel()  # contiguous: a view, as NumPy's
    c[1] = 7.0
    assert _read(base)[1] == 7.0
    assert _read(gpuarr.ravel(base[::3])).tolist() == [0.0, 3.0, 6.0, 9.0]


def test_numpy_outer_flattens_2d_inputs(device):
    a, b = np.arange(4.0).reshape(2, 2), np.arange(6.0).reshape(3, 2)
    got = np.outer(_on(device, a), _on(device, b))
    assert isinstance(got, gpuarr.Array)
    np.testing.assert_array_equal(_read(got), np.outer(a, b))


# --- SVD of NaN ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("shape", [(2, 2), (3, 2), (2, 3), (2, 3, 3)])
def test_svd_of_a_matrix_holding_nan_raises_linalg_error(device, dtype, shape):
    a = np.ones(shape, dtype=dtype)
    a[(0,) * len(shape)] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        np.linalg.svd(a)
    x = _on(device, a)
    for fn in (lambda: gpuarr.linalg.svd(x), lambda: gpuarr.linalg.svdvals(x),
               lambda: gpuarr.linalg.matrix_rank(x), lambda: gpuarr.linalg.pinv(x),
               lambda: gpuarr.linalg.svd(x, full_matrices=False)):
        with pytest.raises(gpuarr.linalg.LinAlgError, match="SVD did not converge"):
            fn()
    ok = _on(device, np.eye(shape[-1], dtype=dtype))  # and the device still works
    assert int(gpuarr.linalg.matrix_rank(ok)) == shape[-1]


# --- complex special values ---------------------------------------------------------

_VALS = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, np.inf, -np.inf, np.nan, 800.0, -800.0]
_GRID = np.array([complex(a, b) for a in _VALS for b in _VALS])
_FUNCS = ["exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos",
          "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh",
          "arccosh", "arctanh", "square", "reciprocal", "sign", "abs"]


def _mismatches(got, want, tol):
    bad = []
    for k, (g, w) in enumerate(zip(got.ravel().tolist(), want.ravel().tolist())):
        for x, y in ((complex(g).real, complex(w).real), (complex(g).imag, complex(w).imag)):
            if x != x and y != y:
                continue  # the sign of a NaN is not specified
            if y == 0 or x == 0 or np.isinf(y) or np.isinf(x):
                ok = x == y and np.signbit(x) == np.signbit(y)
            else:
                ok = abs(x - y) <= tol * abs(y)
            if not ok:
                bad.append((k, g, w))
                break
    return bad


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", _FUNCS)
def test_complex_functions_at_special_values_match_numpy(device, name, dtype):
    z = _GRID.astype(dtype)
    if name == "arccos" and dtype == "complex64":
        z = z[np.abs(z.real) != 800]  # pi/2 - asin(z) loses float32 digits there
    z = z[~numpy_windows_open_choices(name, z)]  # (none but on Windows: conftest.py)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
        if name == "expm1":
            # Annex G has no cexpm1: at a non-finite part or a zero the array API
            # standard's values, exp(z) - 1 from Annex G's exp (NumPy's formula gives
            # NaN + NaN j at inf + 0j and -0 at -0 + 0j there)
            special = ~np.isfinite(z) | (z == 0)
            want = np.where(special, np.exp(z) - 1, want)
    want = annex_g_oracle(name, z, want)
    got = _read(getattr(gpuarr, name)(_on(device, z)))
    tol = 2e-5 if dtype == "complex64" else 1e-12
    bad = _mismatches(got, want, tol)
    assert not bad, [(z[k], g, w) for k, g, w in bad[:6]]


def test_complex_pow_at_special_values_matches_numpy(device):
    vals = [0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan]
    zs = np.array([complex(a, b) for a in vals for b in vals])
    a, b = (np.array(v) for v in zip(*itertools.product(zs, zs[::5])))
    with np.errstate(all="ignore"):
        want = a ** b
    got = _read(_on(device, a) ** _on(device, b))
    bad = _mismatches(got, want, 1e-12)
    assert not bad, [(a[k], b[k], g, w) for k, g, w in bad[:6]]


# --- Dask over GPU chunks and like= -------------------------------------------------

def test_numpy_index_arrays_are_host_index_data_on_every_device(device):
    """A NumPy integer or bool array used as an index is host data like a list:
    checked on the host, then one counted upload to the array's device."""
    a = np.arange(12.0).reshape(3, 4)
    x = _on(device, a)
    idx = np.array([2, 0])
    np.testing.assert_array_equal(_read(x[idx]), a[idx])
    np.testing.assert_array_equal(_read(x[np.array([True, False, True])]),
                                  a[np.array([True, False, True])])
    grid = np.ogrid[0:3, 0:1]
    np.testing.assert_array_equal(_read(x[grid[0], _on(device, np.array([[1]]))]),
                                  a[grid[0], np.array([[1]])])
    with pytest.raises(IndexError, match="out of bounds"):
        x[np.array([5])]
    if device.type != "cpu":
        with pytest.raises(gpuarr.DeviceMismatchError):
            x[0] = np.ones(4)  # a NumPy value is data, not a key: still refused


def test_numpy_asarray_of_an_ndarray_like_a_gpu_array_builds_there(device):
    like = gpuarr.ones(2, device=device)
    got = np.asarray(np.arange(3), like=like)
    assert isinstance(got, gpuarr.Array) and got.device == device
    assert _read(got).tolist() == [0, 1, 2]
    got = np.array(np.ones((2, 2), np.float32), like=like)
    assert got.device == device and got.dtype == gpuarr.float32


def test_dask_argmax_along_an_axis_and_list_index_on_gpu_chunks(device):
    da = pytest.importorskip("dask.array")
    data = np.random.default_rng(3).normal(size=(10, 8))
    d = da.from_array(_on(device, data), chunks=(4, 3))
    for axis in (0, 1):
        for fn in ("argmax", "argmin"):
            got = getattr(d, fn)(axis=axis).compute(scheduler="threads")
            assert got.device == device
            np.testing.assert_array_equal(_read(got), getattr(data, fn)(axis=axis))
    got = d[[3, 1]].compute(scheduler="threads")
    assert got.device == device
    np.testing.assert_array_equal(_read(got), data[[3, 1]])
    got = d[:, [2, 0, 7]].compute(scheduler="threads")
    np.testing.assert_array_equal(_read(got), data[:, [2, 0, 7]])


def test_dlpack_byte_offset_that_misaligns_float64_is_refused():
    """A producer's byte_offset of 4 into host float64 data: no array NumPy makes, and
    BLAS/LAPACK assume aligned elements; refused with a BufferError naming the field."""
    import ctypes

    from test_dlpack_validation import Producer
    b = (ctypes.c_double * 4)(*range(4))
    with pytest.raises(BufferError, match="byte_offset"):
        gpuarr.from_dlpack(Producer(b, (2,), byte_offset=4))
    with pytest.raises(BufferError, match="aligned"):
        gpuarr.from_dlpack(Producer(b, (1,), dtype=(5, 128, 1), byte_offset=4))
    ok = gpuarr.from_dlpack(Producer(b, (2,), byte_offset=8))  # aligned: zero-copy
    assert ok.numpy().tolist() == [1.0, 2.0]
