"""A correct but slow solution of exercise 3: one device-to-host copy per step. The
grader must fail it, with a report of what crossed."""
import numpy as np

import gpuarr as ga


def norm_log(A, steps):
    return np.array([ga.linalg.norm(A @ A).item() for _ in range(steps)], dtype=np.float32)
