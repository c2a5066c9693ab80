import numpy as np

import gpuarr as ga
from gpuarr.testing import assert_array_equal, assert_transfers


def test_arrays_are_made_on_the_device(student, gpuarr_device):
    ex = student("ex1_placement")
    with assert_transfers(max_h2d=0, max_d2h=0, max_d2d=0):
        X, Y = ex.ones_and_random(gpuarr_device)
    assert_array_equal(X, np.ones((2, 3)), device=gpuarr_device)
    assert Y.shape == (2, 3)
    if Y.device != gpuarr_device:
        raise AssertionError(f"Y should live on {gpuarr_device!r}, but it lives on "
                             f"{Y.device!r}")
    y = Y.numpy()
    assert ((0 <= y) & (y < 1)).all()


def test_sum_runs_on_the_second_operands_device(student):
    ex = student("ex1_placement")
    target = ga.try_gpu(1)
    X = ga.ones((2, 3))
    Y = ga.ones((2, 3), device=target)
    Z = ex.add_on(X, Y)
    assert_array_equal(Z, 2 * np.ones((2, 3)), device=target)
