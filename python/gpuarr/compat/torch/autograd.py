"""``torch.autograd`` over gpuarr.autograd: ``Variable`` (a plain tensor since PyTorch
0.4) and ``grad``."""
from gpuarr import autograd as _autograd

from .._shim import outside, wrapping
from ._tensor import Tensor

__getattr__ = outside("torch.autograd", __name__)
grad = wrapping(_autograd.grad, Tensor)


def Variable(data, requires_grad=False):
    """Variable(data, requires_grad=False)

    The tensor itself, requiring grad when asked (PyTorch's Variable is a Tensor)."""
    if requires_grad:
        data.requires_grad_(True)
    return data
