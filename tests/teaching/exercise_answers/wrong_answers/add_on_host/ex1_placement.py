"""Wrong: the sum runs on the CPU, and only the result is moved to Y's device."""
import gpuarr as ga


def ones_and_random(device):
    return ga.ones((2, 3), device=device), ga.rand(2, 3, device=device)


def add_on(X, Y):
    return (X.to(ga.cpu()) + Y.to(ga.cpu())).to(Y.device)
