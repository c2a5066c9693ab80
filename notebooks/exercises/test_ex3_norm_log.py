"""Grades ex3_norm_log.py: every step computes on A's device, one copy to the host."""
import numpy as np

import gpuarr as ga
from gpuarr.testing import assert_numpy, assert_transfers, assert_work

STEPS = 50
N = 64  # A is 16 KiB: copying it to the host cannot hide in the log's bytes


def test_norm_log_values_and_one_transfer(student, gpuarr_device, gpuarr_rng):
    ex = student("ex3_norm_log")
    A_host = (gpuarr_rng.standard_normal((N, N)) / N).astype(np.float32)
    A = ga.asarray(A_host, device=gpuarr_device)
    # every step: a product and a norm on A's device (the norm by any route: norm(),
    # a reduction of the squares, vecdot; so at least one more operation per step,
    # of any kind); one copy to the host, of the log alone (its bytes are checked
    # below, from the dtype it has)
    budget = assert_transfers(max_d2h=1, max_h2d_bytes=0)
    with assert_work(gpuarr_device, matmuls=STEPS, total=2 * STEPS), budget:
        log = ex.norm_log(A, STEPS)
    assert_numpy(log, "the log", shape=(STEPS,), dtype=("float32", "float64"))
    budget.check(max_d2h_bytes=log.nbytes, why=f"the log itself, {STEPS} {log.dtype} values")
    expected = np.linalg.norm(A_host.astype(np.float64) @ A_host)
    np.testing.assert_allclose(log, expected, rtol=1e-4)
