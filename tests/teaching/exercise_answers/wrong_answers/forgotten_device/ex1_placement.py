"""Wrong: made on the host (no device=), then copied to the device."""
import gpuarr as ga


def ones_and_random(device):
    return ga.ones((2, 3)).to(device), ga.rand(2, 3).to(device)


def add_on(X, Y):
    return X.to(Y.device) + Y
