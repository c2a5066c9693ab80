"""Exercise 7 (the book's "Training on Multiple GPUs from scratch"): allreduce. Each
device computed a gradient of the same shape; every device needs their sum before it
updates its copy of the parameters."""
import gpuarr as ga


def allreduce(grads):
    """grads is a list of arrays of one shape, each on its own device. Make every one of
    them the elementwise sum of all, in place (each stays the same array, on its own
    device), with the additions on the devices: no copy to the host and no wait for a
    device. Return nothing."""
    # TODO
    raise NotImplementedError
