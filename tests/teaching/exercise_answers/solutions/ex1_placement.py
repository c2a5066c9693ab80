"""Reference solution of exercise 1."""
import gpuarr as ga


def ones_and_random(device):
    return ga.ones((2, 3), device=device), ga.rand(2, 3, device=device)


def add_on(X, Y):
    return X.to(Y.device) + Y
