import numpy as np

import gpuarr as ga
from gpuarr.testing import assert_transfers


def test_arrays_are_made_on_the_device(student, gpuarr_device):
    ex = student("ex1_placement")
    with assert_transfers(max_h2d=0, max_d2h=0, max_d2d=0):
        X, Y = ex.ones_and_random(gpuarr_device)
    assert X.device == gpuarr_device and Y.device == gpuarr_device
    assert X.shape == (2, 3) and Y.shape == (2, 3)
    np.testing.assert_array_equal(X.numpy(), np.ones((2, 3)))
    y = Y.numpy()
    assert ((0 <= y) & (y < 1)).all()


def test_sum_runs_on_the_second_operands_device(student):
    ex = student("ex1_placement")
    target = ga.try_gpu(1)
    X = ga.ones((2, 3))
    Y = ga.ones((2, 3), device=target)
    Z = ex.add_on(X, Y)
    assert Z.device == target
    np.testing.assert_array_equal(Z.numpy(), 2 * np.ones((2, 3)))
