import numpy as np

import gpuarr as ga
from gpuarr.testing import assert_allclose, assert_transfers

BATCHES, N = 20, 16


def data():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((BATCHES, N, 2)).astype(np.float32)
    y = X @ np.array([2.0, -3.4], np.float32) + 4.2
    return [np.concatenate([X[i], y[i][:, None]], axis=1) for i in range(BATCHES)]


def numpy_fit(batches, lr=0.1):
    w, b, losses = np.zeros(2, np.float32), np.float32(0), []
    for B in batches:
        X, y = B[:, :2], B[:, 2]
        r = X @ w + b - y
        losses.append((r * r).mean())
        w = w - lr * 2 * (X.T @ r) / len(B)
        b = b - lr * 2 * r.mean()
    return w, b, np.array(losses)


def test_prepare_batch_leaves_a_batch_in_place(student, gpuarr_device):
    ex = student("ex4_trainer")
    B = ga.ones((4, 3), device=gpuarr_device)
    if ex.prepare_batch(B, gpuarr_device) is not B:  # no pytest repr of the arrays
        raise AssertionError(
            f"prepare_batch copied a batch that already lives on {gpuarr_device!r}: "
            "B.to(device) returns B itself there, copyto(device) always copies")


def test_fit_moves_each_batch_once_and_reads_the_losses_once(student, gpuarr_device):
    ex = student("ex4_trainer")
    batches = data()
    params = {"w": ga.zeros(2), "b": ga.zeros(())}
    # the model once (2 arrays) and each batch once; one read of the losses at the end
    with assert_transfers(max_h2d=2 + BATCHES, max_d2h=1, max_d2h_bytes=4 * BATCHES):
        trained, losses = ex.fit(params, batches, gpuarr_device)
    w, b, expected = numpy_fit(batches)
    assert isinstance(losses, np.ndarray) and losses.shape == (BATCHES,)
    np.testing.assert_allclose(losses, expected, rtol=1e-4)
    assert_allclose(trained["w"], w, rtol=1e-4, device=gpuarr_device)
    assert_allclose(trained["b"], b, rtol=1e-4, device=gpuarr_device)
