"""The PyTorch shim's tensor and device spellings (gpuarr.compat.torch.Tensor)."""
import gpuarr

from .._shim import Tensor as _Wrapper
from . import cuda as _cuda

# PyTorch's dtype names, each gpuarr's dtype of that meaning.
DTYPES = {
    "float16": gpuarr.float16, "half": gpuarr.float16,
    "float32": gpuarr.float32, "float": gpuarr.float32,
    "float64": gpuarr.float64, "double": gpuarr.float64,
    "int8": gpuarr.int8, "int16": gpuarr.int16, "short": gpuarr.int16,
    "int32": gpuarr.int32, "int": gpuarr.int32, "int64": gpuarr.int64,
    "long": gpuarr.int64, "uint8": gpuarr.uint8, "bool": gpuarr.bool,
}


def device(type, index=None):
    """device(type, index=None)

    ``torch.device``: 'cpu', 'cuda', 'cuda:1' or ('cuda', 1) as a gpuarr Device
    (``cpu(0)``, ``gpu(1)``). A bare 'cuda' is the current device
    (``torch.cuda.current_device()``), as PyTorch resolves it when placing data."""
    if isinstance(type, gpuarr.Device):
        return type
    if not isinstance(type, str):
        raise TypeError(f"torch.device takes a string such as 'cuda:1' or 'cpu', "
                        f"not {type.__class__.__name__}")
    kind, _, num = type.partition(":")
    if num:
        index = int(num)
    if kind == "cpu":
        return gpuarr.cpu()
    if kind in ("cuda", "gpu"):
        return gpuarr.gpu(_cuda.current_device() if index is None else int(index))
    raise ValueError(f"torch.device: unknown device type {kind!r}: use 'cpu' or "
                     f"'cuda:<index>'")


def placement(where):
    """A gpuarr Device for a torch device argument (None stays None)."""
    if where is None or isinstance(where, gpuarr.Device):
        return where
    if isinstance(where, int):
        return gpuarr.gpu(where)
    return device(where)


def dtype_of(dtype):
    """A gpuarr dtype for a dtype argument (a gpuarr dtype or a name)."""
    if dtype is None or not isinstance(dtype, str):
        return dtype
    if dtype not in DTYPES:
        raise TypeError(f"unknown dtype {dtype!r}; the shim knows {sorted(DTYPES)}")
    return DTYPES[dtype]


def split_to_args(args, kwargs):
    """(device, dtype) from ``.to(device)``, ``.to(dtype)``, ``.to(device, dtype)`` or
    their keywords."""
    where, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    for a in args:
        if isinstance(a, gpuarr.DType):
            dtype = a
        else:
            where = a
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f".to() got unexpected keywords {sorted(kwargs)}")
    return placement(where), dtype


class Tensor(_Wrapper):
    """Tensor(array)

    A gpuarr array in PyTorch's spelling: ``is_cuda``, ``get_device()``, ``mm``,
    ``.data``, ``.cuda()`` on the current device and ``.to(device, dtype)``; all else is
    gpuarr's (``x.device`` prints as ``gpu(0)``, not ``device(type='cuda', index=0)``)."""

    __slots__ = ()

    @property
    def is_cuda(self):
        """True for an array on a GPU (of any kind: CUDA, simulated or emulated)."""
        return self._a.device.type != "cpu"

    def get_device(self):
        """get_device()

        The GPU's index, or -1 on the CPU (as PyTorch)."""
        d = self._a.device
        return -1 if d.type == "cpu" else d.index

    def mm(self, other):
        """mm(other)

        The matrix product ``self @ other``."""
        return self @ other

    @property
    def data(self):
        """The same memory outside the autograd graph (``x.detach()``)."""
        return self._wrap(self._a.detach())

    def cuda(self, device=None, non_blocking=False):
        """cuda(device=None, non_blocking=False)

        On GPU `device`, by default the current device (``torch.cuda.set_device``);
        the tensor itself when already there."""
        where = gpuarr.gpu(_cuda.current_device()) if device is None else placement(device)
        return self._wrap(self._a.to(where, non_blocking=non_blocking))

    def to(self, *args, **kwargs):
        """to(device=None, dtype=None)

        ``.to(device)``, ``.to(dtype)`` or ``.to(device, dtype)``: the tensor itself when
        nothing changes, else a new one (a copy across devices, a cast)."""
        where, dtype = split_to_args(args, dict(kwargs))
        a = self._a if where is None else self._a.to(where)
        if dtype is not None and a.dtype != dtype:
            a = a.astype(dtype)
        return self._wrap(a)

    def type(self, dtype=None):
        """type(dtype=None)

        The dtype's name without ``dtype``, or the tensor cast to ``dtype``."""
        if dtype is None:
            return str(self._a.dtype)
        return self.to(dtype_of(dtype))
