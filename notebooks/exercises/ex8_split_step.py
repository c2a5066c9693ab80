"""Exercise 8 (the book's "Training on Multiple GPUs"): one training step of a linear
model split over two devices, with no round trip through the host."""
import gpuarr as ga


def train_step(replicas, X, y, lr):
    """replicas is [(w0, b0), (w1, b1)]: the same linear model, y ~ X @ w + b (w of
    shape (features,), b of shape (1,)), on two devices, w0 and b0 on the first. X
    (n, features) and y (n,) live on the first device. Take one gradient step of the
    mean squared error over the whole batch, mean((X @ w + b - y) ** 2), splitting the
    work: the first half of the rows (the larger one when n is odd) on the first device,
    the rest on the second, each computing its half's gradient there; then add the two
    gradients up on the devices (an allreduce) and update both replicas in place, so
    they stay equal. No copy to or from the host and no wait for a device. Return
    nothing."""
    # TODO
    raise NotImplementedError
