"""Cheat: gpuarr.testing's private _host copies A to the host out of the ledger's
sight (so it was, before counting blocks saw every copy), then NumPy does the work."""
import numpy as np

import gpuarr.testing


def norm_log(A, steps):
    a = gpuarr.testing._host(A)
    return np.array([np.linalg.norm(a @ a) for _ in range(steps)], dtype=np.float32)
