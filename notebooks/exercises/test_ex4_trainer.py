"""Grades ex4_trainer.py: the model moves once, each batch once, every step computes
on the device, and the losses come back once. The batches come twice: as NumPy arrays
(a data loader's) and as gpuarr arrays already on the device (a prefetching loader's):
a batch on the device can only reach host NumPy through a counted copy, so training in
NumPy beside a few products on the device (decoy work) fails there."""
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


def batch_products(prof, device):
    """The matrix products `device` ran with the batch's N rows as one of their
    dimensions: the profile records an (M, K) @ (K, N) product's shape as (batch, N,
    M, K); N = 16 is no other size of the exercise (2 features, 1 label)."""
    return sum(1 for e in prof.events if e.kind == "op" and e.name == "matmul"
               and e.device == device and e.shape and N in e.shape[1:4])


def model_copies(prof, device, w):
    """The copies of w (its 2 float32 values) made within `device`, element by element
    or byte by byte: the model copied each step shows there once per step. Two copies
    of that size are not the model's: a loss stored into the log (one value), and
    autograd's gradient of w, copied right after the product that makes it (an (M, K)
    @ (K, N) product with M * N = 2 values; the profile's shape is (batch, N, M, K))."""
    ops = [e for e in prof.events if e.kind == "op" and e.device == device]
    copies = 0
    for before, e in zip([None] + ops, ops):
        if not (e.name == "copy" and e.shape and len(e.shape) == 1 and e.shape[0] > 1
                and e.shape[0] in (w.size, w.nbytes) and e.bytes == 2 * w.nbytes):
            continue
        gradient = (before is not None and before.name == "matmul" and before.shape
                    and before.shape[1] * before.shape[2] == w.size)
        copies += not gradient
    return copies


def check_steps_on_device(prof, device, w):
    """Every step's two products of its batch (the residual and the gradient) on the
    device, and the model not copied within the device each step (moved once: at most
    one copy of it, made before training)."""
    products = batch_products(prof, device)
    if products < 2 * BATCHES:
        raise AssertionError(
            f"fit should multiply each batch on {device!r}, 2 matrix products of its {N} "
            f"rows per step (X @ w and X.T @ r, or autograd's backward), "
            f"{2 * BATCHES} for {BATCHES} batches; {device!r} ran {products}: the "
            "training was done elsewhere (NumPy on the host, another device)")
    copies = model_copies(prof, device, w)
    if copies > 1:
        raise AssertionError(
            f"fit copied the parameters within {device!r} {copies} times: move the model "
            "once, before the loop (prepare_model), and update those arrays; a copy of "
            "the model each step (prepare_model or copyto inside the loop) is work and "
            "memory the step does not need")


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
    with assert_work(gpuarr_device, matmuls=2 * BATCHES), budget, ga.profile() as prof:
        trained, losses = ex.fit(params, batches, gpuarr_device)
    check_steps_on_device(prof, gpuarr_device, params["w"])
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


def test_fit_trains_on_the_device_with_batches_already_there(student, gpuarr_device,
                                                             gpuarr_rng):
    """The batches as a prefetching loader gives them, gpuarr arrays on the device: the
    model moves (2 arrays), no batch crosses, the losses come back once. Host NumPy
    work on a batch would need a copy of it to the host, which the budget refuses."""
    ex = student("ex4_trainer")
    host = data(gpuarr_rng)
    batches = [ga.asarray(B, device=gpuarr_device) for B in host]
    params = {"w": ga.zeros(2), "b": ga.zeros(())}
    budget = assert_transfers(max_h2d=2, max_d2h=1, max_d2d=0)
    with budget, ga.profile() as prof:
        trained, losses = ex.fit(params, batches, gpuarr_device)
    assert_numpy(losses, "the losses", shape=(BATCHES,), dtype=("float32", "float64"))
    budget.check(max_d2h_bytes=losses.nbytes,
                 why=f"the losses alone: no batch comes back to the host, {BATCHES} "
                     f"{losses.dtype} values")
    check_steps_on_device(prof, gpuarr_device, params["w"])
    w, b, expected = numpy_fit(host)
    np.testing.assert_allclose(losses, expected, rtol=1e-3)
    assert_on_device(trained["w"], gpuarr_device, "the trained w", shape=(2,),
                     dtype="float32")
    assert_allclose(trained["w"], w, rtol=1e-4, atol=1e-5)
    assert_allclose(trained["b"], b, rtol=1e-4, atol=1e-5)
