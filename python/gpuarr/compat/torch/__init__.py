"""gpuarr.compat.torch: the PyTorch edition of the GPU chapter, on gpuarr.

    import gpuarr.compat.torch as torch
    from gpuarr.compat.torch import nn

Tensors are gpuarr arrays in PyTorch's spelling (gpuarr.compat.torch.Tensor; ``x.array``
is the gpuarr array), made on the CPU unless ``device=`` says otherwise; ``torch.device``
values are gpuarr Devices and print as gpuarr's (``gpu(0)``). ``torch.cuda`` counts every
kind of gpuarr GPU (CUDA, simulated, emulated). Everything follows gpuarr's and
PyTorch's shared rule: operands on two devices raise, nothing is copied implicitly.
A name outside the chapter raises AttributeError naming gpuarr's spelling.
"""
import gpuarr

from .._shim import outside, wrapping
from . import autograd, cuda, nn
from ._tensor import DTYPES, Tensor, device, dtype_of, placement

__getattr__ = outside("torch", __name__)
globals().update(DTYPES)
no_grad, enable_grad = gpuarr.no_grad, gpuarr.enable_grad
exp, matmul, cat, stack = (wrapping(f, Tensor) for f in
                           (gpuarr.exp, gpuarr.matmul, gpuarr.concat, gpuarr.stack))


def mm(a, b):
    """mm(a, b)

    The matrix product of two 2-D tensors."""
    return a @ b


def is_tensor(x):
    """is_tensor(x)

    Whether x is a tensor of this shim."""
    return isinstance(x, Tensor)


def _shape(size):
    """PyTorch takes ``ones(2, 3)`` and ``ones((2, 3))`` alike."""
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) \
        else tuple(size)


def _made(fn, size, dtype, device, requires_grad):
    return Tensor(fn(_shape(size), dtype=dtype_of(dtype), device=placement(device),
                     requires_grad=requires_grad))


def tensor(data, dtype=None, device=None, requires_grad=False):
    """tensor(data, dtype=None, device=None, requires_grad=False)

    A new tensor from Python data (``gpuarr.array``): integers give int64, floats
    float32, as PyTorch's do."""
    data = data.array.numpy() if isinstance(data, Tensor) else data
    return Tensor(gpuarr.array(data, dtype=dtype_of(dtype), device=placement(device),
                               requires_grad=requires_grad))


def ones(*size, dtype=None, device=None, requires_grad=False):
    """ones(*size, dtype=None, device=None, requires_grad=False)

    Ones of shape `size` (``ones(2, 3)`` or ``ones((2, 3))``)."""
    return _made(gpuarr.ones, size, dtype, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """zeros(*size, dtype=None, device=None, requires_grad=False)

    Zeros of shape `size`."""
    return _made(gpuarr.zeros, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """empty(*size, dtype=None, device=None, requires_grad=False)

    A tensor of shape `size` whose values are not set (``gpuarr.empty``)."""
    return _made(gpuarr.empty, size, dtype, device, requires_grad)


def _like(fn, x, dtype, device):
    a = x.array
    return Tensor(fn(a.shape, dtype=a.dtype if dtype is None else dtype_of(dtype),
                     device=a.device if device is None else placement(device)))


def ones_like(input, dtype=None, device=None):
    """ones_like(input, dtype=None, device=None)

    Ones of input's shape, with its dtype and on its device unless given."""
    return _like(gpuarr.ones, input, dtype, device)


def zeros_like(input, dtype=None, device=None):
    """zeros_like(input, dtype=None, device=None)

    Zeros of input's shape, with its dtype and on its device unless given."""
    return _like(gpuarr.zeros, input, dtype, device)


def rand(*size, dtype=None, device=None, requires_grad=False):
    """rand(*size, dtype=None, device=None, requires_grad=False)

    Uniform [0, 1) values of shape `size`, drawn on `device`."""
    return Tensor(gpuarr.rand(*_shape(size), dtype=dtype_of(dtype), device=placement(device),
                              requires_grad=requires_grad))


def randn(*size, dtype=None, device=None, requires_grad=False):
    """randn(*size, dtype=None, device=None, requires_grad=False)

    Standard normal values of shape `size`, drawn on `device`."""
    return Tensor(gpuarr.randn(*_shape(size), dtype=dtype_of(dtype), device=placement(device),
                               requires_grad=requires_grad))


def manual_seed(seed):
    """manual_seed(seed)

    Seed gpuarr's generator (``gpuarr.random.seed``)."""
    gpuarr.random.seed(seed)


def from_numpy(a):
    """from_numpy(a)

    A CPU tensor of a NumPy array's values (gpuarr copies it)."""
    return Tensor(gpuarr.asarray(a))

