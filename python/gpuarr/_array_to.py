"""Array.to(device, dtype), a bare .cuda() to the current GPU, and PyTorch's cast names.

The C method ``to(device)`` (csrc/binding/py_array.c) moves; this wraps it so that
``to`` also takes a dtype, as PyTorch's ``x.to(torch.float16)`` and
``x.to(device, dtype)`` do, and adds ``half()``, ``float()``, ``double()``, ``long()``,
``int()`` and ``bool()``. A cast is ``astype``, so autograd records it and the gradient
comes back in the input's dtype.
"""
import numpy as np

from . import _core
from ._current_device import current_device
from ._methods import method

__all__ = []

_move = _core.Array.to  # the C move: a device only
_cuda = _core.Array.cuda


def _is_dtype(obj):
    return (isinstance(obj, (_core.DType, np.dtype))
            or (isinstance(obj, type) and issubclass(obj, np.generic)))


def _split_to_args(args, device, dtype, what):
    """(device, dtype) from PyTorch's forms: to(device), to(dtype), to(device, dtype),
    to(other_array), and the keywords device= and dtype=."""
    if len(args) > 2:
        raise TypeError(f"{what}: takes at most a device and a dtype, got {len(args)} "
                        f"arguments")
    for a in args:
        if isinstance(a, _core.Array):
            device, dtype = a.device, a.dtype
        elif _is_dtype(a):
            if dtype is not None:
                raise TypeError(f"{what}: two dtypes given ({dtype!r} and {a!r})")
            dtype = a
        elif device is not None:
            raise TypeError(f"{what}: two devices given ({device!r} and {a!r}); the "
                            f"second argument is a dtype, e.g. x.to('gpu:0', "
                            f"gpuarr.float16)")
        else:
            device = a
    return device, dtype


@method("to")
def to(self, *args, device=None, dtype=None, non_blocking=False, copy=False):
    """to(*args, device=None, dtype=None, non_blocking=False, copy=False)

    This array on ``device`` and/or in ``dtype``, in any of PyTorch's forms:
    ``x.to(gpu(1))``, ``x.to('cuda:1')``, ``x.to(gpuarr.float16)``,
    ``x.to(gpu(0), gpuarr.float16)``, ``x.to(other)`` (other's device and dtype), and
    the keywords ``device=`` / ``dtype=``. The array itself (no copy) when it is
    already there in that dtype, unless ``copy=True``. A move to a GPU is queued
    without waiting; from a GPU to the host it waits unless ``non_blocking=True``
    (a pinned host array that waits when touched). Casts are recorded by autograd.

    Example::

        >>> X = gpuarr.ones(3).to(gpuarr.try_gpu())   # one host-to-device copy
        >>> X.to(X.device) is X                        # already there: no copy
        True
        >>> X.to("cuda:0", gpuarr.float16).dtype       # PyTorch's spelling
        float16
    """
    if (len(args) == 1 and device is None and dtype is None and not copy
            and isinstance(args[0], (_core.Device, str))):
        # the common x.to(device): straight to the C move (this wrapper costs ~14x
        # the move's own 0.35 us when it parses everything)
        return _move(self, args[0], non_blocking=non_blocking)
    device, dtype = _split_to_args(args, device, dtype, "to")
    x = self
    if dtype is not None:
        dtype = _core.DType(dtype) if not isinstance(dtype, _core.DType) else dtype
    # Cast where it is cheaper: before the move when it makes the array smaller (fewer
    # bytes cross), after it otherwise.
    cast_first = dtype is not None and dtype.itemsize < x.dtype.itemsize
    if cast_first:
        x = x.astype(dtype, copy=copy)
    if device is not None:
        x = _move(x, device, non_blocking=non_blocking)
    if dtype is not None and not cast_first:
        x = x.astype(dtype, copy=copy and x is self)
    if copy and x is self:
        x = x.copyto(x.device)
    return x


@method("cuda")
def cuda(self, device=None, non_blocking=False):
    """cuda(device=None, non_blocking=False)

    ``x.to(gpu(device))``; without ``device``, the current GPU of this thread
    (``gpuarr.cuda.current_device()``: gpu(0) unless ``gpuarr.cuda.set_device``,
    ``with gpuarr.cuda.device(i):``, ``with gpu(i):`` or ``set_default_device(gpu(i))``
    chose another), as in PyTorch."""
    if device is None:
        device = current_device()
    if not isinstance(device, int) or isinstance(device, bool):
        device = _core.Device(device)
        if device.type != "gpu":
            raise ValueError(f"cuda({device!r}): not a GPU; use x.cpu() or x.to(device)")
        device = device.index
    return _move(self, _core.gpu(device), non_blocking=non_blocking)


def _cast(name, dtype):
    def cast(self):
        return self.astype(dtype, copy=False)

    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = (f"{name}()\n\n``x.astype(gpuarr.{dtype}, copy=False)`` (PyTorch's "
                    f"``x.{name}()``): the array itself when it is {dtype} already; "
                    f"recorded by autograd.")
    return method(name)(cast)


for _name, _dtype in (("half", _core.float16), ("float", _core.float32),
                      ("double", _core.float64), ("long", _core.int64),
                      ("int", _core.int32), ("bool", _core.bool)):
    _cast(_name, _dtype)
