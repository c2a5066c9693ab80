"""Grades ex4_trainer.py: the model moves once, each batch once, every step computes
on the device, and the losses come back once."""
import numpy as np

import gpuarr as ga
from gpuarr.testing import (assert_allclose, assert_numpy, assert_on_device,
                            assert_transfers, assert_work)

BATCHES, N = 20, 16


def data(rng):
    """Fresh batches of a fresh linear model: each (N, 3), two features and the label."""
    w, b = rng.uniform(-4, 4, 2), rng.uniform(-4, 4)
    X = rng.standard_normal((BATCHES, N, 2)).astype(np.float32)
    y = (X @ w.astype(np.float32) + np.float32(b)).astype(np.float32)
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


def test_prepare_batch_moves_a_numpy_batch(student, gpuarr_device, gpuarr_rng):
    ex = student("ex4_trainer")
    B = gpuarr_rng.standard_normal((4, 3)).astype(np.float32)
    with assert_transfers(max_h2d=1, max_d2h=0):
        moved = ex.prepare_batch(B, gpuarr_device)
    assert_on_device(moved, gpuarr_device, "the prepared batch", shape=(4, 3))
    assert_allclose(moved, B)


def test_fit_moves_each_batch_once_and_reads_the_losses_once(student, gpuarr_device,
                                                              gpuarr_rng):
    ex = student("ex4_trainer")
    batches = data(gpuarr_rng)
    params = {"w": ga.zeros(2), "b": ga.zeros(())}
    # the model once (2 arrays) and each batch once; every step's two products on the
    # device; one read of the losses at the end (its bytes checked from its dtype)
    budget = assert_transfers(max_h2d=2 + BATCHES, max_d2h=1)
    with assert_work(gpuarr_device, matmuls=2 * BATCHES), budget:
        trained, losses = ex.fit(params, batches, gpuarr_device)
    assert_numpy(losses, "the losses", shape=(BATCHES,), dtype=("float32", "float64"))
    budget.check(max_d2h_bytes=losses.nbytes,
                 why=f"the losses themselves, {BATCHES} {losses.dtype} values")
    w, b, expected = numpy_fit(batches)
    # float32 steps that cancel (a residual far smaller than the labels): up to 3e-5
    # apart from a float64 computation over 3000 draws
    np.testing.assert_allclose(losses, expected, rtol=1e-3)
    # the template's dtype rule: the parameters stay float32, as they were given
    assert_on_device(trained["w"], gpuarr_device, "the trained w", shape=(2,),
                     dtype="float32")
    assert_on_device(trained["b"], gpuarr_device, "the trained b", shape=(), dtype="float32")
    assert_allclose(trained["w"], w, rtol=1e-4, atol=1e-5)
    assert_allclose(trained["b"], b, rtol=1e-4, atol=1e-5)
