"""Attack (or accident): a segmentation fault when the module is imported."""
import ctypes

ctypes.string_at(0)


def ones_and_random(device):
    raise NotImplementedError


def add_on(X, Y):
    raise NotImplementedError
