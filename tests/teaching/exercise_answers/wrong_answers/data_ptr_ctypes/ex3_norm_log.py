"""Cheat: ctypes reads a simulated or emulated GPU's memory (host memory behind a GPU's
rules) at x._data_ptr, with no copy for the ledger to count; NumPy does the work. No
library can stop ctypes inside its own process: the grading run's static check
refuses the file before importing it."""
import ctypes

import numpy as np


def norm_log(A, steps):
    n = A.shape[0]
    buf = (ctypes.c_float * (n * n)).from_address(A._data_ptr)
    a = np.frombuffer(buf, dtype=np.float32).reshape(n, n).copy()
    return np.array([np.linalg.norm(a @ a) for _ in range(steps)], dtype=np.float32)
