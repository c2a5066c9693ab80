"""gpuarr.linalg's factorisations (LAPACK on the CPU and simulated GPUs, cuSOLVER on
CUDA devices: emulated ones compute with the CPU's LAPACK behind cuSOLVER's API)
against numpy.linalg: solve, inv, det, slogdet, cholesky, eigh, eigvalsh, svd,
svdvals, qr, pinv, matrix_rank and the singular-value matrix norms, over dtypes,
shapes, batches and devices; singular, ill-conditioned and empty inputs; the errors;
the host waits a CUDA call may make."""
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuarr
from gpuarr.linalg import LinAlgError

LA = gpuarr.linalg
DTYPES = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def _on_cuda(device):
    return device.type != "cpu" and gpuarr._core._gpu_mode()[0] in ("cuda", "emulated")


@pytest.fixture
def dev(device):
    """Each device of the mode, with nothing left queued from an earlier test."""
    gpuarr.synchronize(device)
    return device


def _rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _spd(shape, dtype, seed=0):
    """Hermitian positive definite: a a^H + n I."""
    a = _rand(shape, dtype, seed)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _close(got, want, device, dtype=None, tol=None):
    assert isinstance(got, gpuarr.Array), type(got)
    assert got.device == device
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert str(got.dtype) == str(dtype or want.dtype), (got.dtype, want.dtype)
    t = tol if tol is not None else TOL.get(str(want.dtype), 1e-10)
    np.testing.assert_allclose(got.numpy(), want, rtol=t, atol=t)


def _g(a, device):
    return gpuarr.asarray(a, device=device)


# --- solve and inv ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)),
                                   ((2, 3, 3), (2, 3, 1)), ((4, 1, 3, 3), (2, 3, 4)),
                                   ((1, 1), (1,)), ((5, 5), (1, 5, 3))])
def test_solve_matches_numpy_with_the_array_api_vector_rule(dev, dtype, sa, sb):
    a, b = _rand(sa, dtype) + 4 * np.eye(sa[-1], dtype=dtype), _rand(sb, dtype, seed=1)
    _close(LA.solve(_g(a, dev), _g(b, dev)), np.linalg.solve(a, b), dev)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 2, 2), (2, 1, 5, 5)])
def test_inv_matches_numpy(dev, dtype, shape):
    a = _rand(shape, dtype) + 3 * np.eye(shape[-1], dtype=dtype)
    _close(LA.inv(_g(a, dev)), np.linalg.inv(a), dev)


@pytest.mark.parametrize("ldtype", ["float32", "float64"])
def test_solve_promotes_like_numpy(dev, ldtype):
    a = np.eye(3, dtype=ldtype) * 2
    b = np.arange(3)  # int64: computed in float64
    _close(LA.solve(_g(a, dev), _g(b, dev)), np.linalg.solve(a, b), dev)
    c = np.ones(3, dtype="complex64")
    _close(LA.solve(_g(a, dev), _g(c, dev)), np.linalg.solve(a, c), dev)


def test_ill_conditioned_solve_has_a_small_residual(dev):
    n = 8
    h = 1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1)  # Hilbert, cond ~1e10
    b = np.ones(n)
    x = LA.solve(_g(h, dev), _g(b, dev)).numpy()
    assert np.linalg.norm(h @ x - b) < 1e-6
    np.testing.assert_allclose(x, np.linalg.solve(h, b), rtol=1e-4)


@pytest.mark.parametrize("fn", ["solve", "inv"])
def test_singular_matrix_raises_linalg_error(dev, fn):
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    x = _g(a, dev)
    with pytest.raises(LinAlgError, match="Singular matrix"):
        LA.solve(x, _g(np.ones(2), dev)) if fn == "solve" else LA.inv(x)
    # one singular matrix in a batch names its position
    batch = _g(np.stack([np.eye(2), a, np.eye(2)]), dev)
    with pytest.raises(LinAlgError, match=r"Singular matrix \(matrix 1 of the batch\)"):
        LA.inv(batch)


def test_linalg_error_is_a_value_error_exported_from_linalg():
    assert issubclass(LinAlgError, ValueError)
    assert LA.LinAlgError is gpuarr._core.LinAlgError
    assert LinAlgError.__module__ == "gpuarr.linalg"
    assert "LinAlgError" in LA.__all__


@pytest.mark.parametrize("fn", ["solve", "inv", "det", "slogdet", "cholesky", "eigh",
                                "eigvalsh"])
def test_square_functions_refuse_non_square_and_1d_input(dev, fn):
    f = getattr(LA, fn)
    args = (lambda x: (x, _g(np.ones(3), dev))) if fn == "solve" else (lambda x: (x,))
    with pytest.raises(ValueError, match="square"):
        f(*args(_g(np.ones((3, 2)), dev)))
    with pytest.raises(ValueError, match="at least two-dimensional|square"):
        f(*args(_g(np.ones(3), dev)))


def test_solve_shape_errors(dev):
    a = _g(np.eye(3), dev)
    with pytest.raises(ValueError, match="x2 has 2 elements"):
        LA.solve(a, _g(np.ones(2), dev))
    with pytest.raises(ValueError, match="x2 has 4 rows"):
        LA.solve(a, _g(np.ones((4, 1)), dev))
    with pytest.raises(ValueError):  # batch axes that do not broadcast
        LA.solve(_g(np.ones((2, 3, 3)), dev), _g(np.ones((3, 3, 1)), dev))


def test_float16_is_refused_and_integers_run_in_float64(dev):
    with pytest.raises(TypeError, match="float16"):
        LA.inv(_g(np.eye(2, dtype="float16"), dev))
    a = np.array([[2, 1], [1, 3]], dtype="int32")
    _close(LA.inv(_g(a, dev)), np.linalg.inv(a), dev)
    _close(LA.det(_g(a, dev)), np.linalg.det(a), dev)
    _close(LA.eigvalsh(_g(a, dev)), np.linalg.eigvalsh(a), dev)
    _close(LA.svdvals(_g(a.astype(bool), dev)), np.linalg.svdvals(a.astype(bool)), dev)


# --- det and slogdet ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 4, 4), (2, 3, 6, 6)])
def test_det_and_slogdet_match_numpy(dev, dtype, shape):
    a = _rand(shape, dtype)
    _close(LA.det(_g(a, dev)), np.linalg.det(a), dev, tol=TOL[dtype] * 10)
    sign, logabs = LA.slogdet(_g(a, dev))
    want = np.linalg.slogdet(a)
    _close(sign, want.sign, dev, tol=TOL[dtype] * 10)
    _close(logabs, want.logabsdet, dev, tol=TOL[dtype] * 10)


def test_det_sign_follows_row_swaps(dev):
    perms = np.array([np.eye(3)[[1, 0, 2]], np.eye(3)[[1, 2, 0]], np.eye(3)[[2, 1, 0]]])
    _close(LA.det(_g(perms, dev)), [-1.0, 1.0, -1.0], dev)
    assert LA.slogdet(_g(perms, dev)).sign.numpy().tolist() == [-1.0, 1.0, -1.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_singular_det_is_zero_and_slogdet_minus_inf(dev, dtype):
    a = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], dtype=dtype)
    assert LA.det(_g(a, dev)).numpy() == 0
    r = LA.slogdet(_g(a, dev))
    assert r.sign.numpy() == 0 and r.logabsdet.numpy() == -np.inf
    assert str(r.logabsdet.dtype) == str(np.linalg.slogdet(a).logabsdet.dtype)


# --- cholesky -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5)])
def test_cholesky_matches_numpy(dev, dtype, upper, shape):
    a = _spd(shape, dtype)
    _close(LA.cholesky(_g(a, dev), upper=upper), np.linalg.cholesky(a, upper=upper), dev)


def test_cholesky_of_a_non_positive_definite_matrix_raises(dev):
    with pytest.raises(LinAlgError, match="not positive definite"):
        LA.cholesky(_g(np.array([[1.0, 2.0], [2.0, 1.0]]), dev))


# --- eigh and eigvalsh --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 6, 6)])
def test_eigh_matches_numpy_and_diagonalises(dev, dtype, shape):
    a = _rand(shape, dtype)
    a = a + np.conj(np.swapaxes(a, -1, -2))
    w, v = LA.eigh(_g(a, dev))
    want = np.linalg.eigh(a)
    _close(w, want.eigenvalues, dev)
    _close(LA.eigvalsh(_g(a, dev)), want.eigenvalues, dev)
    assert v.device == dev and str(v.dtype) == dtype and v.shape == shape
    vn = v.numpy()
    t = TOL[dtype] * 10
    np.testing.assert_allclose(a @ vn, vn * w.numpy()[..., None, :], rtol=t, atol=t)
    np.testing.assert_allclose(np.conj(np.swapaxes(vn, -1, -2)) @ vn,
                               np.broadcast_to(np.eye(shape[-1]), shape), atol=t)


def test_eigh_reads_only_the_lower_triangle(dev):
    a = np.array([[2.0, 99.0], [1.0, 3.0]])
    _close(LA.eigvalsh(_g(a, dev)), np.linalg.eigvalsh(a), dev)


# --- svd, svdvals and the norms they give -------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (5, 3), (2, 4, 4), (2, 1, 6, 2)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_matches_numpy_and_reconstructs(dev, dtype, shape, full):
    a = _rand(shape, dtype)
    u, s, vh = LA.svd(_g(a, dev), full_matrices=full)
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
    _close(s, ws, dev)
    assert u.shape == wu.shape and vh.shape == wvh.shape
    assert str(u.dtype) == str(vh.dtype) == dtype
    k = min(shape[-2:])
    un, vn = u.numpy(), vh.numpy()
    t = TOL[dtype] * 10
    np.testing.assert_allclose((un[..., :k] * s.numpy()[..., None, :]) @ vn[..., :k, :], a,
                               rtol=t, atol=t)
    m, n = shape[-2:]
    eye_u = np.conj(np.swapaxes(un, -1, -2)) @ un
    np.testing.assert_allclose(eye_u, np.broadcast_to(np.eye(un.shape[-1]), eye_u.shape),
                               atol=t)
    _close(LA.svdvals(_g(a, dev)), ws, dev)


def test_svd_of_a_rank_deficient_matrix(dev):
    a = np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5, 2.0])
    _close(LA.svdvals(_g(a, dev)), np.linalg.svdvals(a), dev)


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int64"])
def test_matrix_norms_from_singular_values(dev, ord, dtype):
    a = (_rand((2, 3, 4), "complex128" if dtype.startswith("complex") else "float64") * 5
         ).astype(dtype)
    x = _g(a, dev)
    t = 1e-4 if dtype == "float32" else 1e-10
    _close(LA.matrix_norm(x, ord=ord), np.linalg.matrix_norm(a, ord=ord), dev, tol=t)
    _close(LA.matrix_norm(x, ord=ord, keepdims=True),
           np.linalg.matrix_norm(a, ord=ord, keepdims=True), dev, tol=t)
    _close(LA.norm(x, ord=ord, axis=(2, 0)), np.linalg.norm(a, ord=ord, axis=(2, 0)), dev,
           tol=t)
    _close(LA.norm(x[0], ord=ord), np.linalg.norm(a[0], ord=ord), dev, tol=t)


# --- qr -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (3, 5), (2, 4, 4), (2, 1, 6, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_matches_numpy(dev, dtype, shape, mode):
    a = _rand(shape, dtype)
    q, r = LA.qr(_g(a, dev), mode=mode)
    wq, wr = np.linalg.qr(a, mode=mode)
    # the same Householder QR as NumPy's LAPACK: the same signs
    _close(q, wq, dev, tol=TOL[dtype] * 10)
    _close(r, wr, dev, tol=TOL[dtype] * 10)


def test_qr_refuses_numpy_only_modes(dev):
    with pytest.raises(ValueError, match="'reduced' or 'complete'"):
        LA.qr(_g(np.eye(2), dev), mode="raw")


# --- pinv and matrix_rank -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (5, 3), (2, 4, 4)])
def test_pinv_matches_numpy(dev, dtype, shape):
    a = _rand(shape, dtype)
    _close(LA.pinv(_g(a, dev)), np.linalg.pinv(a, rtol=None), dev, tol=TOL[dtype] * 10)


def test_pinv_and_matrix_rank_of_rank_deficient_matrices(dev):
    a = np.stack([np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5]), np.eye(3),
                  np.zeros((3, 3))])
    _close(LA.matrix_rank(_g(a, dev)), np.linalg.matrix_rank(a), dev)
    _close(LA.pinv(_g(a, dev)), np.linalg.pinv(a, rtol=None), dev)
    # rtol as a float and as an array over the batch
    b = np.diag([1.0, 1e-3, 1e-6])
    for rtol in (1e-2, 1e-4, 1e-8):
        _close(LA.matrix_rank(_g(b, dev), rtol=rtol), np.linalg.matrix_rank(b, rtol=rtol),
               dev)
        _close(LA.pinv(_g(b, dev), rtol=rtol), np.linalg.pinv(b, rtol=rtol), dev)
    rt = np.array([1e-2, 1e-8])
    bb = np.stack([b, b])
    _close(LA.matrix_rank(_g(bb, dev), rtol=_g(rt, dev)),
           np.linalg.matrix_rank(bb, rtol=rt), dev)


# --- empty inputs -------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 0), (0, 3, 3), (2, 0, 0)])
def test_square_functions_on_empty_input_match_numpy(dev, shape):
    a = np.zeros(shape)
    x = _g(a, dev)
    _close(LA.inv(x), np.linalg.inv(a), dev)
    _close(LA.det(x), np.linalg.det(a), dev)
    _close(LA.slogdet(x).logabsdet, np.linalg.slogdet(a).logabsdet, dev)
    _close(LA.slogdet(x).sign, np.linalg.slogdet(a).sign, dev)
    _close(LA.cholesky(x), np.linalg.cholesky(a), dev)
    _close(LA.eigvalsh(x), np.linalg.eigvalsh(a), dev)
    _close(LA.eigh(x).eigenvectors, np.linalg.eigh(a).eigenvectors, dev)
    _close(LA.solve(x, _g(np.zeros(shape[:-1] + (2,)), dev)),
           np.linalg.solve(a, np.zeros(shape[:-1] + (2,))), dev)
    # rank 0 per matrix (NumPy before 2.3 raises on empty input: not the oracle here)
    _close(LA.matrix_rank(x), np.zeros(shape[:-2], dtype=np.int64), dev)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3), (0, 2, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_qr_pinv_on_empty_input_match_numpy(dev, shape, full):
    a = np.zeros(shape)
    x = _g(a, dev)
    for got, want in zip(LA.svd(x, full_matrices=full), np.linalg.svd(a, full_matrices=full)):
        _close(got, want, dev)
    mode = "complete" if full else "reduced"
    for got, want in zip(LA.qr(x, mode=mode), np.linalg.qr(a, mode=mode)):
        _close(got, want, dev)
    _close(LA.pinv(x), np.linalg.pinv(a), dev)
    _close(LA.svdvals(x), np.linalg.svdvals(a), dev)


# --- devices ------------------------------------------------------------------------------

def test_mixed_devices_raise_device_mismatch(gpu_device):
    a = gpuarr.asarray(np.eye(2))
    b = gpuarr.asarray(np.ones(2), device=gpu_device)
    with pytest.raises(gpuarr.DeviceMismatchError):
        LA.solve(a, b)
    with pytest.raises(gpuarr.DeviceMismatchError):
        LA.solve(a.to(gpu_device), gpuarr.asarray(np.ones(2)))


def _cuda_device(device):
    if not _on_cuda(device):
        pytest.skip("needs CUDA GPUs: counts cuSOLVER's work (GPUARR_CUDA_EMULATE=2)")
    return device


@pytest.mark.parametrize("fn", ["inv", "solve", "cholesky", "eigh", "svd", "svdvals"])
def test_a_checked_factorisation_waits_once_per_call_not_per_matrix(device, fn):
    """Reading devInfo back is the one host wait of a call that can fail; a batch of
    four matrices still waits once."""
    dev = _cuda_device(device)
    a = _spd((4, 5, 5), "float64")
    x = gpuarr.asarray(a, device=dev)
    y = gpuarr.asarray(np.ones(5), device=dev)
    gpuarr.synchronize(dev)
    with gpuarr.testing.count_kernels(dev) as k:
        r = LA.solve(x, y) if fn == "solve" else getattr(LA, fn)(x)
    assert k.supported
    assert k.syncs == 1 and k.d2h == 1 and k.h2d == 0, k
    assert k.launches >= 4, k  # a routine per matrix at least
    first = r[0] if isinstance(r, tuple) else r
    assert first.device == dev


@pytest.mark.parametrize("fn", ["det", "slogdet", "qr"])
def test_det_slogdet_and_qr_never_wait(device, fn):
    """LU's zero pivot is a determinant of 0 and QR has no numerical failure: no
    devInfo to read, no host wait."""
    dev = _cuda_device(device)
    x = gpuarr.asarray(_rand((3, 4, 4), "float32"), device=dev)
    gpuarr.synchronize(dev)
    with gpuarr.testing.count_kernels(dev) as k:
        getattr(LA, fn)(x)
    assert k.syncs == 0 and k.d2h == 0, k


def test_without_lapack_linalg_says_what_to_install(device):
    info = gpuarr.blas_info()
    if info is None:
        pytest.skip("no BLAS: gpuarr found no CPU BLAS to unload")
    x = gpuarr.asarray(np.eye(2), device=device)
    gpuarr._core._set_blas(None)
    try:
        if _on_cuda(device) and gpuarr._core._gpu_mode()[0] == "cuda":
            # a real GPU's cuSOLVER needs no CPU LAPACK: the inverse is computed
            np.testing.assert_allclose(LA.inv(x).numpy(), np.eye(2))
        else:
            want = "emulated cuSOLVER computes with the CPU's LAPACK" if _on_cuda(device) \
                else "needs LAPACK"
            with pytest.raises((TypeError, RuntimeError), match=want):
                LA.inv(x)
    finally:
        gpuarr._core._set_blas(info["path"])
    np.testing.assert_allclose(LA.inv(x).numpy(), np.eye(2))


# --- NumPy's functions on gpuarr arrays ---------------------------------------------------

def test_numpy_linalg_functions_dispatch_to_gpuarr(dev):
    a = _spd((3, 3), "float64")
    b = np.arange(3.0)
    x, y = _g(a, dev), _g(b, dev)
    for name, args, kw in [("solve", (x, y), {}), ("inv", (x,), {}), ("det", (x,), {}),
                           ("cholesky", (x,), {}), ("eigvalsh", (x,), {}),
                           ("svdvals", (x,), {}), ("pinv", (x,), {}),
                           ("matrix_rank", (x,), {}), ("qr", (x,), {"mode": "complete"})]:
        got = getattr(np.linalg, name)(*args, **kw)
        nargs = tuple(v.numpy() for v in args)
        want = getattr(np.linalg, name)(*nargs, **kw)
        if name == "qr":
            _close(got.Q, want.Q, dev)
            continue
        _close(got, want, dev)
    w, v = np.linalg.eigh(x)
    _close(w, np.linalg.eigh(a).eigenvalues, dev)
    s = np.linalg.svd(x, compute_uv=False)
    _close(s, np.linalg.svd(a, compute_uv=False), dev)
    _close(np.linalg.slogdet(x).logabsdet, np.linalg.slogdet(a).logabsdet, dev)
    with pytest.raises(TypeError, match="UPLO"):
        np.linalg.eigh(x, UPLO="U")


# --- the CPU's LAPACK ---------------------------------------------------------------------

def test_an_lp64_lapack_gives_the_same_answers():
    """NumPy's OpenBLAS is ILP64 (64-bit LAPACK integers); scipy-openblas32 is LP64:
    the driver is compiled for both, and this runs the 32-bit one in a fresh process."""
    try:
        import scipy_openblas32 as ob
    except ImportError:
        pytest.skip("no BLAS: scipy-openblas32 is not installed")
    lib = os.path.join(ob.get_lib_dir(), f"lib{ob.get_library()}.so")
    code = ("import numpy as np, gpuarr\n"
            "assert gpuarr.blas_info()['path'].endswith('%s')\n"
            "a = np.random.default_rng(0).standard_normal((2, 4, 4)) + 4 * np.eye(4)\n"
            "x = gpuarr.asarray(a)\n"
            "L = gpuarr.linalg\n"
            "assert np.allclose(L.inv(x).numpy(), np.linalg.inv(a))\n"
            "assert np.allclose(L.det(x).numpy(), np.linalg.det(a))\n"
            "assert np.allclose(L.svdvals(x).numpy(), np.linalg.svdvals(a))\n"
            "assert np.allclose(L.qr(x).R.numpy(), np.linalg.qr(a).R)\n"
            "s = a + np.swapaxes(a, -1, -2)\n"
            "assert np.allclose(L.eigvalsh(gpuarr.asarray(s)).numpy(), np.linalg.eigvalsh(s))\n"
            "print('ok')\n" % os.path.basename(lib))
    env = dict(os.environ, GPUARR_BLAS=lib)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
