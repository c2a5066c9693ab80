"""Grades ex1_placement.py: where arrays are made, and where a sum runs."""
import numpy as np

import gpuarr as ga
from gpuarr.testing import (assert_allclose, assert_array_equal, assert_on_device,
                            assert_transfers, assert_work)


def test_arrays_are_made_on_the_device(student, gpuarr_device):
    ex = student("ex1_placement")
    # made there: a fill and a random draw on the device, nothing copied, nothing
    # computed anywhere else
    with assert_work(gpuarr_device, total=2, elsewhere=0) as w, \
            assert_transfers(max_h2d=0, max_d2h=0, max_d2d=0):
        X, Y = ex.ones_and_random(gpuarr_device)
    # exactly those two: the exercise fixes the work, so more is work it did not ask for
    if w[gpuarr_device].total != 2:
        raise AssertionError(f"ones_and_random should run exactly 2 operations on "
                             f"{gpuarr_device!r} (a fill of ones and one random draw); it "
                             f"ran {w[gpuarr_device]}")
    assert_on_device(X, gpuarr_device, "X", shape=(2, 3))
    assert_array_equal(X, np.ones((2, 3)))
    assert_on_device(Y, gpuarr_device, "Y", shape=(2, 3))
    y = Y.numpy()
    if not (((0 <= y) & (y < 1)).all() and len(np.unique(y)) > 1):
        raise AssertionError(f"Y should hold uniform random numbers in [0, 1); got {y}")


DRAWS = 200  # calls of ones_and_random: 1200 numbers


def test_random_numbers_are_uniform(student, gpuarr_device):
    ex = student("ex1_placement")
    # Kolmogorov-Smirnov against the uniform distribution on [0, 1), written out (the
    # statistic is five lines; SciPy is not a dependency of the graders). rand() ** 2
    # or (rand() + rand()) / 2 stay in [0, 1) but are 0.25 and 0.125 away; the
    # threshold 2.69 / sqrt(n) (0.078 here) is the 10^-6 level: CI grades this test
    # some fifteen times a run, and a correct answer must not fail one run in a hundred.
    y = np.concatenate([ex.ones_and_random(gpuarr_device)[1].numpy().ravel()
                        for _ in range(DRAWS)]).astype(np.float64)
    y.sort()
    n = y.size
    d = max(np.max(np.arange(1, n + 1) / n - y), np.max(y - np.arange(n) / n))
    if not (((0 <= y) & (y < 1)).all() and d < 2.69 / np.sqrt(n)):
        raise AssertionError(
            f"Y should hold uniform random numbers in [0, 1): {n} draws are "
            f"{d:.3f} away from the uniform distribution (Kolmogorov-Smirnov; at most "
            f"{2.69 / np.sqrt(n):.3f} expected); mean {y.mean():.3f} (0.5 expected). "
            "Use gpuarr.rand(..., device=device) as it is")


def test_sum_runs_on_the_second_operands_device(student, gpuarr_device_pair, gpuarr_rng):
    ex = student("ex1_placement")
    here, there = gpuarr_device_pair  # X lives here, Y there: the sum belongs there
    Xh = gpuarr_rng.standard_normal((2, 3)).astype(np.float32)
    Yh = gpuarr_rng.standard_normal((2, 3)).astype(np.float32)
    X, Y = ga.asarray(Xh, device=here), ga.asarray(Yh, device=there)
    # one copy, of X, in the one direction from here to there
    one = {"h2d": 0, "d2h": 0, "d2d": 0}
    one["h2d" if here == ga.cpu() else "d2h" if there == ga.cpu() else "d2d"] = 1
    # (the inner block reports first: where the sum ran)
    with assert_transfers(max_h2d=one["h2d"], max_d2h=one["d2h"], max_d2d=one["d2d"],
                          max_h2d_bytes=X.nbytes, max_d2h_bytes=X.nbytes), \
            assert_work(there, elementwise=1, elsewhere=0):
        Z = ex.add_on(X, Y)
    assert_on_device(Z, there, "X + Y", shape=(2, 3))
    assert_allclose(Z, Xh + Yh)
