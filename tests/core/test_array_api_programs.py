"""Functions written only against the array API standard (the namespace comes from
array_api_compat.array_namespace, nothing gpuarr-specific) give NumPy's results on
gpuarr arrays, on the CPU and on every GPU of the process."""
import numpy as np
import pytest

import gpuarr

compat = pytest.importorskip("array_api_compat")


def standardize(x):
    xp = compat.array_namespace(x)
    mean = xp.mean(x, axis=0, keepdims=True)
    std = xp.std(x, axis=0, correction=1, keepdims=True)
    return (x - mean) / xp.where(std == 0, xp.ones_like(std), std)


def softmax(x, axis=-1):
    xp = compat.array_namespace(x)
    z = x - xp.max(x, axis=axis, keepdims=True)
    e = xp.exp(z)
    return e / xp.sum(e, axis=axis, keepdims=True)


def line_fit(x, y):
    """Least squares y ~ a + b x: the normal equations of two unknowns, solved in
    closed form."""
    xp = compat.array_namespace(x, y)
    n = x.shape[0]
    sx, sy = xp.sum(x), xp.sum(y)
    sxx, sxy = xp.vecdot(x, x), xp.vecdot(x, y)
    b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    a = (sy - b * sx) / n
    return xp.stack([a, b])


def least_squares(A, b):
    """min ||A x - b|| through the standard's linalg extension: A = QR, then R x = Q^T b
    (better conditioned than the normal equations)."""
    xp = compat.array_namespace(A, b)
    q, r = xp.linalg.qr(A)
    return xp.linalg.solve(r, xp.linalg.matrix_transpose(q) @ b)


def ridge(A, b, lam):
    """(A^T A + lam I)^-1 A^T b, with a Cholesky factor and two solves."""
    xp = compat.array_namespace(A, b)
    n = A.shape[1]
    g = xp.linalg.matrix_transpose(A) @ A + lam * xp.eye(n, dtype=A.dtype, device=A.device)
    c = xp.linalg.cholesky(g)
    y = xp.linalg.solve(c, xp.linalg.matrix_transpose(A) @ b)
    return xp.linalg.solve(xp.linalg.matrix_transpose(c), y)


def kmeans_step(points, centers):
    """One Lloyd iteration: assign each point to its nearest center, move each center
    to the mean of its points (a center without points stays)."""
    xp = compat.array_namespace(points, centers)
    d = xp.sum((points[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
    label = xp.argmin(d, axis=1)
    k = centers.shape[0]
    onehot = xp.astype(label[:, None] == xp.arange(k, device=points.device)[None, :],
                       points.dtype)
    counts = xp.sum(onehot, axis=0)
    sums = xp.matmul(xp.matrix_transpose(onehot), points)
    safe = xp.where(counts == 0, xp.ones_like(counts), counts)
    new = xp.where((counts == 0)[:, None], centers, sums / safe[:, None])
    return new, label, xp.unique_counts(label).counts


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(64, 3)), rng.normal(size=(4, 3))


def test_array_namespace_is_gpuarr(device):
    assert compat.array_namespace(gpuarr.ones(2, device=device)) is gpuarr


def test_standardize(device, data):
    a = data[0]
    got = standardize(gpuarr.asarray(a, device=device))
    assert got.device == device
    np.testing.assert_allclose(got.numpy(), standardize(a), rtol=1e-10)


@pytest.mark.parametrize("axis", [0, -1])
def test_softmax(device, data, axis):
    a = data[0]
    got = softmax(gpuarr.asarray(a, device=device), axis=axis)
    np.testing.assert_allclose(got.numpy(), softmax(a, axis=axis), rtol=1e-10)


def test_least_squares_line_fit(device):
    x = np.linspace(0, 1, 50)
    y = 2.0 - 3.0 * x + 0.01 * np.sin(40 * x)
    got = line_fit(gpuarr.asarray(x, device=device), gpuarr.asarray(y, device=device))
    np.testing.assert_allclose(got.numpy(), line_fit(x, y), rtol=1e-10)
    np.testing.assert_allclose(got.numpy(), np.polyfit(x, y, 1)[::-1], rtol=1e-8)


def test_least_squares_qr(device, data):
    rng = np.random.default_rng(1)
    A, b = rng.normal(size=(40, 5)), rng.normal(size=(40, 2))
    got = least_squares(gpuarr.asarray(A, device=device), gpuarr.asarray(b, device=device))
    assert got.device == device
    np.testing.assert_allclose(got.numpy(), least_squares(A, b), rtol=1e-10)
    np.testing.assert_allclose(got.numpy(), np.linalg.lstsq(A, b, rcond=None)[0],
                               rtol=1e-9)


def test_ridge_cholesky(device):
    rng = np.random.default_rng(2)
    A, b = rng.normal(size=(30, 4)), rng.normal(size=(30,))
    got = ridge(gpuarr.asarray(A, device=device), gpuarr.asarray(b, device=device), 0.5)
    want = np.linalg.solve(A.T @ A + 0.5 * np.eye(4), A.T @ b)
    np.testing.assert_allclose(got.numpy(), ridge(A, b, 0.5), rtol=1e-10)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_kmeans_step(device, data):
    points, centers = data
    want = kmeans_step(points, centers)
    got = kmeans_step(gpuarr.asarray(points, device=device),
                      gpuarr.asarray(centers, device=device))
    for g, w in zip(got, want):
        assert g.device == device
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-10)

