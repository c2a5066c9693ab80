"""Products around the size below which BLAS runs on one thread (GA_BLAS_SMALL_WORK):
every layout and batch against NumPy, and the BLAS thread count restored after."""
import numpy as np
import pytest

import gpuarr


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("m,k,n", [(70, 80, 90), (100, 100, 100), (64, 64, 64),
                                   (128, 128, 129), (3, 500, 300), (300, 500, 3),
                                   (130, 130, 130)])
def test_small_and_large_products_match_numpy_in_every_layout(device, dtype, m, k, n):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    ga_, gb = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    for x, y, gx, gy in [(a, b, ga_, gb),
                         (a.T.copy().T, b, gpuarr.asarray(a.T.copy(), device=device).T, gb),
                         (a, b.T.copy().T, ga_, gpuarr.asarray(b.T.copy(), device=device).T)]:
        np.testing.assert_allclose((gx @ gy).numpy(), x @ y, rtol=tol, atol=tol * k)


@pytest.mark.parametrize("batch", [1, 3, 7])
def test_batched_products_match_numpy(device, batch):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((batch, 90, 80)).astype(np.float32)
    b = rng.standard_normal((batch, 80, 100)).astype(np.float32)
    got = (gpuarr.asarray(a, device=device) @ gpuarr.asarray(b, device=device)).numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-3)
    big = rng.standard_normal((2, 200, 200)).astype(np.float32)
    g = gpuarr.asarray(big, device=device)
    np.testing.assert_allclose((g @ g).numpy(), big @ big, rtol=1e-4, atol=1e-2)


def test_blas_thread_count_is_restored_after_a_small_product():
    import ctypes
    info = gpuarr.blas_info()
    if info is None:
        pytest.skip("no BLAS loaded")
    lib = ctypes.CDLL(info["path"])
    getter = None
    for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                 "openblas_get_num_threads"):
        getter = getattr(lib, name, None)
        if getter is not None:
            break
    if getter is None:
        pytest.skip("not OpenBLAS")
    before = getter()
    a = gpuarr.ones((50, 50))
    (a @ a).numpy()
    assert getter() == before
