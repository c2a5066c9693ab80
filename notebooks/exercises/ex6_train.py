"""Exercise 6: train a classifier on the device with autograd and an optimizer, as a
course's training loop does: move the model once, make the optimizer for the moved
parameters, move each batch once, and read the losses back once, after the loop."""
# Graded code may import: numpy (gpuarr and math always)
import gpuarr as ga
from gpuarr import nn, optim


def train(net, batches, device, lr=0.1):
    """Train `net` (a gpuarr.nn model whose parameters are on the CPU) on `device`,
    one SGD step per batch, and return (net, losses).

    - Move the model to `device` once, then make the optimizer
      `optim.SGD(net.parameters(), lr=lr)`.
    - Each batch is a pair (X, y): X, float32 features of shape (n, 4); y, int64
      class labels of shape (n,); NumPy arrays (a data loader's) or gpuarr arrays
      already on `device` (a prefetching loader's: the grader gives both). Move both
      to `device` once (`ga.asarray(X, device=device)` leaves an array already there
      as it is). The grader checks that each step multiplies its batch on `device`
      in every layer and that no batch comes back to the host.
    - Each step: the loss `nn.CrossEntropyLoss()(net(X), y)`; clear the gradients,
      `loss.backward()`, then the optimizer's step.
    - Keep each step's loss on the device (for example in an array made with
      `ga.zeros(..., device=device)`) and read them to the host once, after the loop.

    Return the trained model (on `device`) and a NumPy array with the loss of each
    step (float32 or float64: the grader accepts either)."""
    # TODO
    raise NotImplementedError
