"""gpuarr.nn: enough of a neural-network library to train the chapter's models.

A model is a tree of modules whose leaves hold parameters (``nn.Parameter``, trained)
and buffers (``register_buffer``, moved and saved but not trained). ``net.to(device)``
moves them all (and returns the net), ``net(X)`` runs the forward pass where ``X`` and
the parameters live, autograd computes the gradients there (``loss.backward()``), and
``gpuarr.optim`` updates the parameters in place. ``state_dict()`` /
``load_state_dict()`` read and write parameters and buffers (with ``gpuarr.save`` /
``gpuarr.load`` for files). The layers and losses exist as functions too, in
``gpuarr.nn.functional``.

    >>> net = gpuarr.nn.Sequential(gpuarr.nn.Linear(3, 1))
    >>> net = net.to(gpuarr.try_gpu())
    >>> net[0].weight.device
    gpu(0)
"""
from . import functional  # noqa: F401
from ._layers import Dropout, Flatten, Linear, ReLU, Sequential, Sigmoid, Tanh
from ._loss import CrossEntropyLoss, MSELoss
from ._module import IncompatibleKeys, Module, Parameter  # noqa: F401
from ._parallel import DataParallel

__all__ = [
    "Parameter", "Module", "Linear", "ReLU", "Sigmoid", "Tanh", "Flatten", "Dropout",
    "Sequential", "MSELoss", "CrossEntropyLoss", "DataParallel",
]
