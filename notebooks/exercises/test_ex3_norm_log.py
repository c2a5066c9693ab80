import numpy as np

import gpuarr as ga
from gpuarr.testing import assert_transfers


def test_norm_log_values_and_one_transfer(student, gpuarr_device):
    ex = student("ex3_norm_log")
    A_host = (np.arange(16, dtype=np.float32).reshape(4, 4) / 10).astype(np.float32)
    A = ga.asarray(A_host, device=gpuarr_device)
    with assert_transfers(max_d2h=1):
        log = ex.norm_log(A, 50)
    assert isinstance(log, np.ndarray) and log.shape == (50,)
    expected = np.linalg.norm(A_host @ A_host)
    np.testing.assert_allclose(log, expected, rtol=1e-5)
