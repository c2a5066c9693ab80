"""Grades ex6_train.py: SGD steps of the cross-entropy on the device, compared with SGD
written by hand in NumPy; the model moved once, each batch once, the losses read once.
The batches come twice: as NumPy arrays (a data loader's) and as gpuarr arrays already
on the device (a prefetching loader's): a batch on the device reaches the host or the
CPU device only through a counted copy, so training there beside a few kernels on the
device (decoy work) fails."""
import numpy as np

import gpuarr as ga
from gpuarr import nn
from gpuarr.testing import assert_transfers, count_kernels

BATCHES, N, FEATURES, HIDDEN, CLASSES, LR = 12, 16, 4, 8, 3, 0.1


def data(rng):
    """Fresh batches each run: three blobs of points, one per class."""
    centers = rng.standard_normal((CLASSES, FEATURES)) * 2
    out = []
    for _ in range(BATCHES):
        y = rng.integers(0, CLASSES, N)
        X = (centers[y] + rng.standard_normal((N, FEATURES))).astype(np.float32)
        out.append((X, y.astype(np.int64)))
    return out


def model(rng):
    ga.random.seed(int(rng.integers(2**31)))
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def numpy_train(params, batches):
    """SGD on the cross-entropy of Linear-ReLU-Linear, gradients written by hand."""
    W1, b1, W2, b2 = (p.astype(np.float64) for p in params)
    losses = []
    for X, y in batches:
        h = X @ W1.T + b1
        a = np.maximum(h, 0)
        z = a @ W2.T + b2
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        losses.append(-np.log(p[np.arange(N), y]).mean())
        dz = (p - np.eye(CLASSES)[y]) / N
        dh = (dz @ W2) * (h > 0)
        W2, b2 = W2 - LR * dz.T @ a, b2 - LR * dz.sum(0)
        W1, b1 = W1 - LR * dh.T @ X, b1 - LR * dh.sum(0)
    return [W1, b1, W2, b2], np.array(losses)


def batch_products(prof, device):
    """The matrix products `device` ran with the batch's N rows as one of their
    dimensions (the profile records an (M, K) @ (K, N) product's shape as (batch, N,
    M, K)); N = 16 is no other size of the model (4 features, 8 hidden, 3 classes)."""
    return sum(1 for e in prof.events if e.kind == "op" and e.name == "matmul"
               and e.device == device and e.shape and N in e.shape[1:4])


LAYERS = 2  # the model's Linear layers


def run(ex, device, rng, budget=True):
    net, batches = model(rng), data(rng)
    start = [p.numpy() for p in net.parameters()]
    if not budget:
        return (*ex.train(net, batches, device, LR), start, batches, None)
    # the model once (4 arrays), each batch once (X and y); one read of the losses
    # (float32 or float64)
    with assert_transfers(max_h2d=4 + 2 * BATCHES, max_d2h=1,
                          max_d2h_bytes=8 * BATCHES) as t:
        with count_kernels(device) as k:
            trained, losses = ex.train(net, batches, device, LR)
    return trained, losses, start, batches, (t, k)


def test_train_takes_one_sgd_step_of_the_cross_entropy_per_batch(student, gpuarr_device,
                                                                  gpuarr_rng):
    ex = student("ex6_train")
    trained, losses, start, batches, _ = run(ex, gpuarr_device, gpuarr_rng, budget=False)
    if not isinstance(losses, np.ndarray) or losses.shape != (BATCHES,):
        raise AssertionError(f"train should return the losses as a NumPy array of "
                             f"{BATCHES} values, got {type(losses).__name__} of shape "
                             f"{getattr(losses, 'shape', None)}")
    params, expected = numpy_train(start, batches)
    wrong = np.flatnonzero(~np.isclose(losses, expected, rtol=1e-4, atol=1e-6))
    if wrong.size:
        k = wrong[0]
        hint = ("the first loss already differs: it is nn.CrossEntropyLoss() of net(X) "
                "and y of the first batch, before any step" if k == 0 else
                f"the first {k} loss{'es match' if k > 1 else ' matches'}, then they "
                "drift: each step must use the gradient of its own batch alone (clear "
                "the gradients before backward(): optimizer.zero_grad(), or they add up "
                "across steps) and step after loss.backward()")
        raise AssertionError(f"the loss of step {k} is {losses[k]:.6f}, but SGD with "
                             f"lr={LR} gives {expected[k]:.6f}: {hint}")
    for (name, p), want in zip(trained.named_parameters(), params):
        if p.device != gpuarr_device:
            raise AssertionError(f"the trained parameter {name} should live on "
                                 f"{gpuarr_device!r}, but it is on {p.device!r}")
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-4, atol=1e-5,
                                   err_msg=f"trained parameter {name}")


def test_train_moves_the_model_once_each_batch_once_and_reads_the_losses_once(
        student, gpuarr_device, gpuarr_rng):
    ex = student("ex6_train")
    trained, _, _, _, (t, k) = run(ex, gpuarr_device, gpuarr_rng)
    if gpuarr_device != ga.cpu() and t.h2d_count < 2 * BATCHES:
        raise AssertionError(
            f"each batch (X and y) should be moved to {gpuarr_device!r} and trained on "
            f"there: {2 * BATCHES} host->device copies of batches were expected, but only "
            f"{t.h2d_count} copies crossed in all (was the model trained on the CPU and "
            "moved at the end?)")
    if k.supported and k.launches < 3 * BATCHES:
        raise AssertionError(f"only {k.launches} kernels ran on {gpuarr_device!r} for "
                             f"{BATCHES} training steps: the work was done elsewhere")
    assert all(p.device == gpuarr_device for p in trained.parameters())


def test_train_computes_every_step_on_the_device_with_batches_already_there(
        student, gpuarr_device, gpuarr_rng):
    """The batches as a prefetching loader gives them, (X, y) on the device: the model
    moves (4 arrays), no batch crosses, the losses come back once; each step multiplies
    its batch in every layer, forward and backward (the weights' gradients), on the
    device."""
    ex = student("ex6_train")
    net, host = model(gpuarr_rng), data(gpuarr_rng)
    start = [p.numpy() for p in net.parameters()]
    batches = [(ga.asarray(X, device=gpuarr_device), ga.asarray(y, device=gpuarr_device))
               for X, y in host]
    with assert_transfers(max_h2d=4, max_d2h=1, max_d2d=0, max_d2h_bytes=8 * BATCHES), \
            ga.profile() as prof:
        trained, losses = ex.train(net, batches, gpuarr_device, LR)
    products, least = batch_products(prof, gpuarr_device), 2 * LAYERS * BATCHES
    if products < least:
        raise AssertionError(
            f"train should multiply each batch on {gpuarr_device!r}: {2 * LAYERS} matrix "
            f"products of its {N} rows per step (each Linear layer's forward product and "
            f"its weight's gradient), at least {least} for {BATCHES} steps; "
            f"{gpuarr_device!r} ran {products}: the training was done elsewhere (on the "
            "CPU, or in NumPy on the host)")
    _, expected = numpy_train(start, host)
    np.testing.assert_allclose(losses, expected, rtol=1e-4, atol=1e-6)
    assert all(p.device == gpuarr_device for p in trained.parameters())
