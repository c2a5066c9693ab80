"""Accident: output without end."""
import gpuarr as ga


def ones_and_random(device):
    while True:
        print("x" * 4096)


def add_on(X, Y):
    return X.to(Y.device) + Y
