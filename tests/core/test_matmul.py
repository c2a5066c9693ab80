"""matmul / @, tensordot, vecdot against NumPy, with and without the CPU BLAS; and the
row-major -> column-major GEMM plan that cuBLAS receives too."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuarr
from gpuarr import _core
from conftest import INT_DTYPES, NUMERIC_DTYPES, to_numpy

_BLAS = _core._blas_info()


@pytest.fixture(params=["blas", "portable"])
def blas(request):
    """Run the test with the loaded BLAS and with the portable C kernel."""
    if request.param == "blas" and _BLAS is None:
        pytest.skip("no CPU BLAS installed (pip install scipy-openblas32)")
    _core._set_blas(_BLAS["path"] if request.param == "blas" else None)
    yield request.param
    if _BLAS is not None:
        _core._set_blas(_BLAS["path"])


def _data(dtype, shape, seed=0):
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.integers(0, 2, shape).astype(bool)
    if dtype in INT_DTYPES:
        return r.integers(0 if dtype[0] == "u" else -4, 5, shape).astype(dtype)
    a = r.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * r.standard_normal(shape)
    return a.astype(dtype)


def _check(got, want):
    got = to_numpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    if want.dtype.kind in "fc":
        eps = np.finfo(want.dtype).eps
        tol = 3e-2 if eps > 1e-4 else 1e-4 if eps > 1e-10 else 1e-11
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


SHAPES = [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((5,), (5,)), ((2, 3, 4), (4, 2)),
          ((2, 1, 3, 4), (5, 4, 6)), ((1, 4), (4, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
          ((2, 3, 0), (0, 4))]


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES + ["bool"])
def test_matmul_matches_numpy_over_dtypes(device, blas, dtype):
    for sa, sb in SHAPES:
        a, b = _data(dtype, sa, 1), _data(dtype, sb, 2)
        got = gpuarr.asarray(a, device=device) @ gpuarr.asarray(b, device=device)
        assert got.device == device
        _check(got, np.matmul(a, b))


def test_matmul_of_transposed_sliced_and_negative_views(blas):
    # on the CPU, asarray keeps NumPy's strides, so these reach the GEMM plan as views
    r = np.random.default_rng(3)
    base = r.standard_normal((12, 10, 9))
    views = [(base[0].T, base[1]), (base[0, ::2], base[1, 1:, 1:6]),
             (base[0, :, ::-1], base[1, :9]), (base[:3, ::3, :].transpose(0, 2, 1), base[3:6, 1:5]),
             (base[0, 1:8:2, 2:9:3], base[2, 1:4, :]), (base[0, :4, :5].T, base[1, :4, ::-2])]
    for a, b in views:
        for dt in ("float32", "float64", "complex128", "int32"):
            aa, bb = a.astype(dt), b.astype(dt)
            if dt == "float64":  # keep the original (non-contiguous) strides
                aa, bb = a, b
            _check(gpuarr.asarray(aa) @ gpuarr.asarray(bb), aa @ bb)


def test_matmul_of_broadcast_batches(device, blas):
    a = _data("float32", (3, 1, 4, 5), 4)
    b = _data("float32", (2, 5, 3), 5)
    _check(gpuarr.asarray(a, device=device) @ gpuarr.asarray(b, device=device), a @ b)
    # a stride-0 batch (NumPy broadcast_to view)
    c = np.broadcast_to(_data("float64", (4, 5), 6), (3, 4, 5))
    d = _data("float64", (3, 5, 2), 7)
    _check(gpuarr.asarray(c, device=device) @ gpuarr.asarray(d, device=device), c @ d)


def test_large_matmul_uses_all_paths(blas):
    a = _data("float32", (150, 70), 8)
    b = _data("float32", (70, 300), 9)
    _check(gpuarr.asarray(a) @ gpuarr.asarray(b), a @ b)
    ai = _data("int64", (130, 300), 10)
    bi = _data("int64", (300, 70), 11)
    _check(gpuarr.asarray(ai) @ gpuarr.asarray(bi), ai @ bi)


def test_matmul_errors():
    a = gpuarr.asarray(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="mismatch"):
        a @ a
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        a @ gpuarr.asarray(np.float32(1))
    with pytest.raises(ValueError):
        gpuarr.asarray(np.ones((2, 2, 3))) @ gpuarr.asarray(np.ones((3, 3, 2)))
    with pytest.raises(TypeError):
        a @ 2.0
    with pytest.raises(TypeError):
        a.__imatmul__(a)


def test_matmul_across_devices_raises(two_gpus):
    a = gpuarr.asarray(np.ones((2, 2), np.float32), device=two_gpus[0])
    b = gpuarr.asarray(np.ones((2, 2), np.float32), device=two_gpus[1])
    with pytest.raises(gpuarr.DeviceMismatchError):
        a @ b
    with pytest.raises(gpuarr.DeviceMismatchError):
        gpuarr.asarray(np.ones((2, 2), np.float32)) @ a


def test_matmul_promotes_mixed_dtypes():
    a = gpuarr.asarray(np.ones((2, 3), np.float32))
    b = gpuarr.asarray(np.ones((3, 2), np.float64))
    r = a @ b
    assert r.dtype == gpuarr.float64
    np.testing.assert_array_equal(to_numpy(r), np.full((2, 2), 3.0))


def test_blas_info_and_switch():
    if _BLAS is None:
        pytest.skip("no BLAS")
    assert "path" in _BLAS
    _core._set_blas(None)
    assert gpuarr.blas_info() is None
    _core._set_blas(_BLAS["path"])
    assert gpuarr.blas_info()["path"] == _BLAS["path"]
    with pytest.raises(RuntimeError):
        _core._set_blas("/nonexistent/libblas.so")
    assert gpuarr.blas_info() is not None


# --- the plan ------------------------------------------------------------------------

def _plan(a, b, c, batch=1, dtype="float32"):
    return _core._gemm_plan(dtype, a, b, c, batch)


def test_plan_of_contiguous_operands_swaps_into_column_major():
    # A 3x4, B 4x5, C 3x5 all row-major float32: C^T = B^T A^T
    p = _plan((3, 4, 16, 4, 0), (4, 5, 20, 4, 0), (3, 5, 20, 4, 0))
    assert p["a"] == "B" and (p["m"], p["n"], p["k"]) == (5, 3, 4)
    assert (p["transa"], p["transb"]) == (0, 0)
    assert (p["lda"], p["ldb"], p["ldc"]) == (5, 4, 5)


def test_plan_passes_transposed_and_sliced_operands_without_copies():
    # A = X.T for a row-major X (4x3): strides (4, 12) bytes -> transposed operand
    p = _plan((3, 4, 4, 12, 0), (4, 5, 20, 4, 0), (3, 5, 20, 4, 0))
    assert "need_copy" not in p and p["transb"] == 1 and p["ldb"] == 3
    # B a column slice of a wider matrix (row stride 40 bytes = ld 10)
    p = _plan((3, 4, 16, 4, 0), (4, 5, 40, 4, 0), (3, 5, 20, 4, 0))
    assert p["lda"] == 10
    # batch-broadcast A (stride 0) and batched B
    p = _plan((3, 4, 16, 4, 0), (4, 5, 20, 4, 80), (3, 5, 20, 4, 60), batch=7)
    assert p["stride_b"] == 0 and p["stride_a"] == 20 and p["stride_c"] == 15
    assert p["batch"] == 7


def test_plan_reports_copies_for_unplannable_operands():
    # element stride 2 in both directions of A: no leading dimension fits
    p = _plan((3, 4, 32, 8, 0), (4, 5, 20, 4, 0), (3, 5, 20, 4, 0))
    assert p == {"need_copy": 1}
    # negative stride in B
    p = _plan((3, 4, 16, 4, 0), (4, 5, -20, 4, 0), (3, 5, 20, 4, 0))
    assert p == {"need_copy": 2}
    # a stride that is not a multiple of the item size
    p = _plan((3, 4, 16, 4, 0), (4, 5, 20, 4, 0), (3, 5, 20, 6, 0))
    assert p["need_copy"] & 4


def test_plan_of_column_major_output():
    p = _plan((3, 4, 16, 4, 0), (4, 5, 20, 4, 0), (3, 5, 4, 12, 0))
    assert p["a"] == "A" and (p["m"], p["n"]) == (3, 5) and p["ldc"] == 3
    assert p["transa"] == 1 and p["lda"] == 4


def test_plan_rejects_inconsistent_sizes():
    with pytest.raises(ValueError):
        _plan((3, 4, 16, 4, 0), (5, 5, 20, 4, 0), (3, 5, 20, 4, 0))


# --- tensordot / vecdot -------------------------------------------------------------

def test_tensordot_matches_numpy(device, blas):
    a = _data("float64", (3, 4, 5), 12)
    b = _data("float64", (4, 5, 2), 13)
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    _check(gpuarr.tensordot(x, y), np.tensordot(a, b))
    at = gpuarr.asarray(a.T.copy(), device=device)
    _check(gpuarr.tensordot(x, at, axes=([0, 2], [2, 0])),
           np.tensordot(a, a.T, axes=([0, 2], [2, 0])))
    _check(gpuarr.tensordot(x, y, axes=0), np.tensordot(a, b, axes=0))
    _check(gpuarr.linalg.tensordot(x, y, axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])))
    with pytest.raises(ValueError):
        gpuarr.tensordot(x, y, axes=([0], [0]))


def test_vecdot_matches_numpy(device, blas):
    a = _data("float32", (3, 4), 14)
    b = _data("float32", (4,), 15)
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    _check(gpuarr.vecdot(x, y), np.vecdot(a, b))
    c = _data("float32", (3, 1), 16)
    _check(gpuarr.linalg.vecdot(x, gpuarr.asarray(np.broadcast_to(c, (3, 4)).copy(), device=device), axis=0),
           np.vecdot(a, np.broadcast_to(c, (3, 4)), axis=0))
    with pytest.raises(ValueError):
        gpuarr.vecdot(x, gpuarr.asarray(np.ones(3, np.float32), device=device))


@settings(max_examples=30, deadline=None)
@given(m=st.integers(0, 6), k=st.integers(0, 6), n=st.integers(0, 6),
       ba=st.sampled_from([(), (1,), (3,), (2, 1)]), bb=st.sampled_from([(), (1,), (3,), (1, 3)]),
       ta=st.booleans(), tb=st.booleans())
def test_matmul_random_shapes_and_transposes(m, k, n, ba, bb, ta, tb):
    r = np.random.default_rng(m * 100 + k * 10 + n)
    a = r.standard_normal(ba + ((k, m) if ta else (m, k)))
    b = r.standard_normal(bb + ((n, k) if tb else (k, n)))
    a = np.swapaxes(a, -1, -2) if ta else a
    b = np.swapaxes(b, -1, -2) if tb else b
    _check(gpuarr.asarray(a) @ gpuarr.asarray(b), a @ b)
