"""Exercise 4: d2l's Trainer moves the model once, before training, and each batch
once, at the edge of the loop; nothing comes back to the host until the loop ends."""
# Graded code may import: numpy (gpuarr and math always)
import gpuarr as ga


def prepare_model(params, device):
    """Return the dict of parameters `params` on `device` (called once, before training)."""
    # TODO
    raise NotImplementedError


def prepare_batch(batch, device):
    """Return `batch` as a gpuarr array on `device`. A batch is a NumPy array (as the
    data loader gives it, on the host) or a gpuarr array; a gpuarr array that already
    lives on `device` is returned as it is, not copied."""
    # TODO
    raise NotImplementedError


def fit(params, batches, device, lr=0.1):
    """Linear regression by minibatch SGD on `device`.

    `params` is {"w": (2,) array, "b": () array}, gpuarr arrays on the host; each batch
    has shape (n, 3): two features, then the label, either a NumPy array (a data
    loader's) or a gpuarr array already on `device` (a prefetching loader's: the grader
    gives both). For each batch: move it with prepare_batch, split it into X = B[:, :2] and y = B[:, 2], compute the
    residual r = X @ w + b - y, the loss mean(r * r), and update
    w -= lr * 2 * (X.T @ r) / n and b -= lr * 2 * mean(r).
    (Those are the loss's gradients written by hand; autograd gives the same:
    w.requires_grad_() once, loss.backward() each step, then w -= lr * w.grad under
    ga.no_grad() and w.grad = None.)
    The grader checks that every step's two products of its batch run on `device`,
    that no batch comes back to the host (no NumPy work on a batch), and that the
    parameters are not copied on `device` each step: move the model once, update it.

    Return (params, losses): the trained parameters (on `device`, float32 as they were
    given: the grader checks the dtype) and a NumPy array (float32 or float64: the
    grader accepts either) with the loss of each batch, read from the device once,
    after the loop."""
    # TODO
    raise NotImplementedError
