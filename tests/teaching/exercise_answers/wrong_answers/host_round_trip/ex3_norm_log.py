"""Wrong: each step's norm is read to the host (float()), one copy per step."""
import numpy as np

import gpuarr as ga


def norm_log(A, steps):
    log = []
    for _ in range(steps):
        log.append(float(ga.linalg.norm(A @ A)))
    return np.array(log, dtype=np.float32)
