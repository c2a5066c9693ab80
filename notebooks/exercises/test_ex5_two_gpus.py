"""Grades ex5_two_gpus.py: the products run on both devices, queued before one wait."""
import numpy as np

import gpuarr as ga
from gpuarr.testing import (assert_allclose, assert_on_device, assert_transfers,
                            assert_work, count_transfers)

STEPS, N = 4, 32


def two_devices():
    """gpu(0) and gpu(1); with one GPU, it and the CPU (the plugin's second pass grades
    two GPUs); with none, the CPU twice."""
    if ga.num_gpus() >= 2:
        return ga.gpu(0), ga.gpu(1)
    return ga.try_gpu(0), ga.cpu()


def test_powers_are_queued_on_both_devices_before_one_wait(student, gpuarr_rng):
    ex = student("ex5_two_gpus")
    d0, d1 = two_devices()
    # near-orthogonal matrices: their powers stay of size 1
    H0, H1 = (np.linalg.qr(gpuarr_rng.standard_normal((N, N)))[0].astype(np.float32)
              for _ in range(2))
    A0, A1 = ga.asarray(H0, device=d0), ga.asarray(H1, device=d1)
    with count_transfers() as one:
        ga.synchronize()  # what one wait for every device counts here
    same = d0 == d1
    work = (assert_work(d0, matmuls=2 * STEPS) if same else assert_work(d0, matmuls=STEPS))
    other = assert_work(d1, matmuls=0 if same else STEPS)
    with work as w0, other, assert_transfers(max_h2d=0, max_d2h=0, max_d2d=0,
                                             max_syncs=one.syncs, waits_last=True) as t:
        P0, P1 = ex.powers_on_two_devices(A0, A1, STEPS)
    # exactly `steps` products per device: the template fixes them, so fewer (a power
    # by squaring) or more (a product for show) is not the exercise's work
    for d in dict.fromkeys((d0, d1)):
        want = 2 * STEPS if same else STEPS
        if w0[d].matmuls != want:
            raise AssertionError(
                f"powers_on_two_devices should run exactly {want} matrix products on "
                f"{d!r} ({STEPS} steps: P = P @ A, {STEPS} times"
                f"{', for each matrix' if same else ''}); it ran {w0[d].matmuls}")
    # the wait is part of the exercise: at most one, and not none
    if t.syncs < one.syncs:
        raise AssertionError(
            f"powers_on_two_devices returned without waiting for the devices "
            f"({t.syncs} waits; one gpuarr.synchronize() expected, at the end, after "
            "the work of both devices was queued)")
    assert_on_device(P0, d0, "P0", shape=(N, N))
    assert_on_device(P1, d1, "P1", shape=(N, N))
    assert_allclose(P0, np.linalg.matrix_power(H0.astype(np.float64), STEPS + 1),
                    rtol=1e-3, atol=1e-4)
    assert_allclose(P1, np.linalg.matrix_power(H1.astype(np.float64), STEPS + 1),
                    rtol=1e-3, atol=1e-4)
