"""Exercise 1: make data where it will be used."""
import gpuarr as ga


def ones_and_random(device):
    """Return (X, Y): X a 2x3 array of ones and Y a 2x3 array of uniform random numbers,
    both created directly on `device` (no copy from the host)."""
    # TODO: use the device= argument of the creation functions
    raise NotImplementedError


def add_on(X, Y):
    """Return X + Y computed on Y's device. X may live elsewhere: move it explicitly."""
    # TODO
    raise NotImplementedError
