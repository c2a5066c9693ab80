import numpy as np

import gpuarr as ga
from gpuarr.testing import assert_transfers

STEPS = 50
N = 128  # A is 64 KiB: copying it to the host cannot hide in the byte budget


def test_norm_log_values_and_one_transfer(student, gpuarr_device):
    ex = student("ex3_norm_log")
    rng = np.random.default_rng(0)
    A_host = (rng.standard_normal((N, N)) / N).astype(np.float32)
    A = ga.asarray(A_host, device=gpuarr_device)
    # one copy to the host, of the log alone (STEPS float32 values)
    with assert_transfers(max_d2h=1, max_d2h_bytes=4 * STEPS, max_h2d_bytes=0):
        log = ex.norm_log(A, STEPS)
    assert isinstance(log, np.ndarray) and log.shape == (STEPS,)
    expected = np.linalg.norm(A_host.astype(np.float64) @ A_host)
    np.testing.assert_allclose(log, expected, rtol=1e-4)
