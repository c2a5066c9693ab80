"""``torch.nn`` over gpuarr.nn: the layers the chapter builds, taking and giving the
shim's tensors, with ``.cuda()`` on the current device and ``LazyLinear``."""
import gpuarr
from gpuarr import nn as _nn

from .._shim import outside, unwrap, wrap
from . import cuda as _cuda
from ._tensor import Tensor, placement, split_to_args

__getattr__ = outside("torch.nn", __name__)
Parameter = _nn.Parameter
functional = _nn.functional


class _Torch:
    """The PyTorch spellings of a gpuarr module: called with the shim's tensors and
    giving them back, parameters read as tensors (``net[0].weight.data``)."""

    def __call__(self, *inputs, **kwargs):
        return wrap(super().__call__(*unwrap(inputs), **unwrap(kwargs)), Tensor)

    def __getattr__(self, name):
        return wrap(super().__getattr__(name), Tensor)

    def cuda(self, device=None):
        """cuda(device=None)

        Move the parameters to GPU `device`, by default the current one."""
        where = gpuarr.gpu(_cuda.current_device()) if device is None else placement(device)
        return self.to(where)

    def to(self, *args, **kwargs):
        """to(device=None, dtype=None)

        Move the parameters and buffers to a device (and cast them, where this gpuarr
        has Module.to(dtype))."""
        where, dtype = split_to_args(args, dict(kwargs))
        if where is not None:
            super().to(where)
            for m in self.modules():  # a lazy layer makes its parameters there later
                if isinstance(m, LazyLinear):
                    object.__setattr__(m, "home", where)
        if dtype is not None:
            super().to(dtype)  # gpuarr's Module.to(dtype); a clear error where it lacks it
        return self


class Module(_Torch, _nn.Module):
    """Module()

    ``torch.nn.Module``: gpuarr.nn.Module in PyTorch's spelling."""


class Linear(_Torch, _nn.Linear):
    """Linear(in_features, out_features, bias=True, device=None, dtype=None)

    gpuarr.nn.Linear in PyTorch's spelling."""


class ReLU(_Torch, _nn.ReLU):
    """ReLU()

    gpuarr.nn.ReLU in PyTorch's spelling."""


class Flatten(_Torch, _nn.Flatten):
    """Flatten(start_dim=1, end_dim=-1)

    gpuarr.nn.Flatten in PyTorch's spelling."""


class MSELoss(_Torch, _nn.MSELoss):
    """MSELoss(reduction='mean')

    gpuarr.nn.MSELoss in PyTorch's spelling."""


class Sequential(_Torch, _nn.Sequential):
    """Sequential(*modules)

    gpuarr.nn.Sequential in PyTorch's spelling (``net[0]`` is its first layer)."""


class LazyLinear(_Torch, _nn.Module):
    """LazyLinear(out_features, bias=True)

    A Linear layer whose input size is read from its first input: its parameters are
    made then, on the device the module was moved to (the CPU if it was not), drawn as
    Linear draws them."""

    def __init__(self, out_features, bias=True):
        super().__init__()
        self.out_features = int(out_features)
        self.has_bias = bool(bias)
        object.__setattr__(self, "home", gpuarr.cpu())

    def forward(self, x):
        """forward(x)

        ``x @ weight.T + bias``, making the parameters at the first call."""
        if "weight" not in dict(self.named_parameters(recurse=False)):
            made = _nn.Linear(x.shape[-1], self.out_features, bias=self.has_bias,
                              device=self.home)
            self.weight = made.weight
            if self.has_bias:
                self.bias = made.bias
        return _nn.functional.linear(x, unwrap(self.weight),
                                     unwrap(self.bias) if self.has_bias else None)
