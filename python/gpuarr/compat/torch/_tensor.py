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


class device(str):
    """device(type, index=None)

    ``torch.device``: 'cpu', 'cuda', 'cuda:1' or ('cuda', 1), with PyTorch's
    ``.type`` ('cpu' or 'cuda') and ``.index``, printed as gpuarr's device
    (``cpu(0)``, ``gpu(1)``) and equal to it. A bare 'cuda' (index None) means the
    current device when data is placed with it, as in PyTorch: made outside
    ``with torch.cuda.device(1):`` and used inside, it places on GPU 1.

    A str subclass ('cuda:1'), because gpuarr takes device strings everywhere: a
    torch.device handed to any gpuarr function through a tensor's methods works."""

    def __new__(cls, type, index=None):
        if isinstance(type, device):
            return type
        if isinstance(type, gpuarr.Device):
            type, index = ("cpu", None) if type.type == "cpu" else ("cuda", type.index)
        if not isinstance(type, str):
            raise TypeError(f"torch.device takes a string such as 'cuda:1' or 'cpu', "
                            f"not {type.__class__.__name__}")
        kind, _, num = type.partition(":")
        if num:
            index = int(num)
        if kind == "gpu":
            kind = "cuda"
        if kind not in ("cpu", "cuda"):
            raise ValueError(f"torch.device: unknown device type {kind!r}: use 'cpu' or "
                             f"'cuda:<index>'")
        if kind == "cpu":
            index = None
        elif index is not None and int(index) < 0:
            raise ValueError(f"torch.device: a GPU index is 0 or more, got {index}")
        self = super().__new__(cls, kind if index is None else f"{kind}:{int(index)}")
        self.type, self.index = kind, None if index is None else int(index)
        return self

    def gpuarr_device(self):
        """gpuarr_device()

        The gpuarr Device this stands for now (a bare 'cuda': the current GPU)."""
        if self.type == "cpu":
            return gpuarr.cpu()
        return gpuarr.gpu(_cuda.current_device() if self.index is None else self.index)

    def __repr__(self):
        if self.type == "cuda" and self.index is None:
            return "gpu(current)"
        return repr(self.gpuarr_device())

    def __eq__(self, other):
        if isinstance(other, gpuarr.Device):
            other = device(other)
        if isinstance(other, device):
            return (self.type, self.index) == (other.type, other.index)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        # equal to a gpuarr Device, so the same key in a dict or set
        return hash(self.gpuarr_device()) if self.index is not None or \
            self.type == "cpu" else str.__hash__(self)


def placement(where):
    """The gpuarr Device for a torch device argument (a device, 'cuda:1', an index, a
    gpuarr Device), resolved now; None stays None."""
    if where is None or isinstance(where, gpuarr.Device):
        return where
    if isinstance(where, int):
        return gpuarr.gpu(where)
    return device(where).gpuarr_device()


def _size(size):
    """A shape from an int or a sequence of ints ([3, 2] or (3, 2))."""
    return (int(size),) if isinstance(size, int) else tuple(size)


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
    kwargs.pop("non_blocking", None)   # read by the caller that copies
    for a in args:
        if isinstance(a, gpuarr.DType):
            dtype = a
        else:
            where = a
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
    def device(self):
        """Where the tensor lives, as a torch.device: ``.type`` is 'cuda' or 'cpu', and
        it prints and compares as gpuarr's (``gpu(0)``)."""
        return device(self._a.device)

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
        """to(device=None, dtype=None, non_blocking=False)

        ``.to(device)``, ``.to(dtype)`` or ``.to(device, dtype)``: the tensor itself when
        nothing changes, else a new one (a copy across devices, a cast). With
        ``non_blocking=True`` a copy to the CPU lands in pinned memory without waiting
        for the device: ``torch.cuda.synchronize()`` before reading it, as in PyTorch."""
        where, dtype = split_to_args(args, dict(kwargs))
        a = self._a if where is None else \
            self._a.to(where, non_blocking=bool(kwargs.get("non_blocking", False)))
        if dtype is not None and a.dtype != dtype:
            a = a.astype(dtype)
        return self._wrap(a)

    def _new(self, fn, size, dtype, device, **kw):
        where = self._a.device if device is None else placement(device)
        return self._wrap(fn(_size(size), dtype=self._a.dtype if dtype is None
                             else dtype_of(dtype), device=where, **kw))

    def new_full(self, size, fill_value, dtype=None, device=None):
        """new_full(size, fill_value, dtype=None, device=None)

        A tensor of `size` filled with `fill_value`, with this one's dtype and device
        unless given (the notes' device-agnostic creation)."""
        return self._new(gpuarr.full, size, dtype, device, fill_value=fill_value)

    def new_zeros(self, size, dtype=None, device=None):
        """new_zeros(size, dtype=None, device=None)

        Zeros of `size`, with this tensor's dtype and device unless given."""
        return self._new(gpuarr.zeros, size, dtype, device)

    def new_ones(self, size, dtype=None, device=None):
        """new_ones(size, dtype=None, device=None)

        Ones of `size`, with this tensor's dtype and device unless given."""
        return self._new(gpuarr.ones, size, dtype, device)

    def new_tensor(self, data, dtype=None, device=None):
        """new_tensor(data, dtype=None, device=None)

        A tensor of `data`, with this tensor's dtype and device unless given."""
        where = self._a.device if device is None else placement(device)
        return self._wrap(gpuarr.array(data, dtype=self._a.dtype if dtype is None
                                       else dtype_of(dtype), device=where))

    def type(self, dtype=None):
        """type(dtype=None)

        The dtype's name without ``dtype``, or the tensor cast to ``dtype``."""
        if dtype is None:
            return str(self._a.dtype)
        return self.to(dtype_of(dtype))
