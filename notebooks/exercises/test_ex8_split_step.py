"""Grades ex8_split_step.py: one step of a linear model's gradient descent split over
two devices equals the step on the whole batch, both replicas updated in place and
equal, the products run on both devices, no copy through the host and no wait."""
import numpy as np

import gpuarr as ga
from gpuarr.testing import assert_allclose, assert_on_device, assert_transfers, assert_work

# 11 rows: halves of 6 and 5, sizes that no other dimension of the step has (4
# features, 1 bias), so the products' shapes say which rows each device multiplied
N, FEATURES, LR = 11, 4, 0.05


def two_devices():
    """gpu(0) and gpu(1); with one GPU, it and the CPU (the plugin's second pass grades
    two GPUs); with none, the CPU twice."""
    if ga.num_gpus() >= 2:
        return ga.gpu(0), ga.gpu(1)
    return ga.try_gpu(0), ga.cpu()


def product_rows(prof, device):
    """The sizes of the row dimension in the matrix products `device` ran: the profile
    records a product's shape as (batch, N, M, K) for an (M, K) @ (K, N) product;
    the rows of the batch are M (X @ w) or K (r @ X, X.T @ r)."""
    sizes = set()
    for e in prof.events:
        if e.kind == "op" and e.name == "matmul" and e.device == device and e.shape:
            sizes.update(e.shape[2:4])
    return sizes


def check_rows_per_device(prof, devices):
    """Each device multiplied its half of the batch and nothing more: not the whole
    batch (the work done on one device and a dummy product on the other), not the
    other half, not a split of other sizes."""
    halves = {devices[0]: (N + 1) // 2, devices[1]: N // 2}
    for d, rows in halves.items():
        sizes = product_rows(prof, d)
        wrong = sizes - {rows, FEATURES, 1}  # the whole batch, the other half...
        if rows not in sizes or wrong:
            raise AssertionError(
                f"{d!r} should multiply its half of the batch, {rows} of the {N} rows (the "
                f"first {halves[devices[0]]} on the first device, the rest on the second); "
                f"its matrix products had row counts {sorted(sizes - {FEATURES, 1}) or 'none'}")


def test_the_split_step_equals_one_step_on_the_whole_batch(student, gpuarr_rng):
    ex = student("ex8_split_step")
    d0, d1 = two_devices()
    X = gpuarr_rng.standard_normal((N, FEATURES)).astype(np.float32)
    y = gpuarr_rng.standard_normal(N).astype(np.float32)
    w = gpuarr_rng.standard_normal(FEATURES).astype(np.float32)
    b = gpuarr_rng.standard_normal(1).astype(np.float32)
    r = X.astype(np.float64) @ w + b - y  # the step on the whole batch, in NumPy
    want_w, want_b = w - LR * 2 * (r @ X) / N, b - LR * 2 * r.sum(keepdims=True) / N
    replicas = [(ga.asarray(w.copy(), device=d), ga.asarray(b.copy(), device=d))
                for d in (d0, d1)]
    Xd, yd = ga.asarray(X, device=d0), ga.asarray(y, device=d0)
    # half the batch to the second device; each gradient (w's and b's) there and back
    gpus = d0.type != "cpu" and d1.type != "cpu"
    host = 0 if gpus or d0 == d1 else 4
    budget = assert_transfers(max_d2d=6 if gpus else 0, max_h2d=host, max_d2h=host,
                              max_syncs=host)
    if d0 == d1:
        work = assert_work(d0, matmuls=2)
    else:
        work = assert_work(d1, matmuls=1)
    with budget, work, ga.profile() as prof:
        ex.train_step([tuple(p) for p in replicas], Xd, yd, LR)
    if d0 != d1:
        check_rows_per_device(prof, (d0, d1))
    for i, ((wi, bi), d) in enumerate(zip(replicas, (d0, d1))):
        assert_on_device(wi, d, f"w{i}", shape=(FEATURES,))
        assert_on_device(bi, d, f"b{i}", shape=(1,))
        assert_allclose(wi, want_w, rtol=1e-4, atol=1e-5, err_msg=(
            f"w{i} after the step (updated in place on {d!r}): the mean squared error's "
            "gradient over the whole batch is the sum of the halves' gradients over n"))
        assert_allclose(bi, want_b, rtol=1e-4, atol=1e-5, err_msg=f"b{i} after the step")
