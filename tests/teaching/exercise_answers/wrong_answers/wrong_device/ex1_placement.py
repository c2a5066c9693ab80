"""Wrong: the sum runs on X's device (Y is moved to X) instead of Y's."""
import gpuarr as ga


def ones_and_random(device):
    return ga.ones((2, 3), device=device), ga.rand(2, 3, device=device)


def add_on(X, Y):
    return X + Y.to(X.device)
