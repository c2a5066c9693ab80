"""Small products are split into column tiles run on one BLAS thread each (and big
batches are not run concurrently): every layout, batch and size around the split
thresholds against NumPy."""
import numpy as np
import pytest

import gpuarr


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("m,k,n", [(70, 80, 90), (100, 100, 100), (64, 64, 64),
                                   (128, 128, 129), (3, 500, 300), (300, 500, 3)])
def test_tiled_products_match_numpy_in_every_layout(device, dtype, m, k, n):
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
def test_batched_tiled_products_match_numpy(device, batch):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((batch, 90, 80)).astype(np.float32)
    b = rng.standard_normal((batch, 80, 100)).astype(np.float32)
    got = (gpuarr.asarray(a, device=device) @ gpuarr.asarray(b, device=device)).numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-3)
    big = rng.standard_normal((2, 200, 200)).astype(np.float32)
    g = gpuarr.asarray(big, device=device)
    np.testing.assert_allclose((g @ g).numpy(), big @ big, rtol=1e-4, atol=1e-2)
