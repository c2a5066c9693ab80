"""Exercise 1: make data where it will be used, and compute where the data lives."""
import gpuarr as ga


def ones_and_random(device):
    """Return (X, Y): X a 2x3 array of ones and Y a 2x3 array of uniform random numbers
    in [0, 1), both created directly on `device` (no copy from the host)."""
    # TODO: use the device= argument of the creation functions
    raise NotImplementedError


def add_on(X, Y):
    """Return X + Y, computed on Y's device (the sum must run there, and land there).
    X may live on another device: move it there explicitly, once."""
    # TODO
    raise NotImplementedError
