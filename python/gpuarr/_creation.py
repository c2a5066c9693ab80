"""Creating arrays: from Python data, NumPy arrays, buffers and DLPack producers, and
filled, ranged and diagonal arrays made directly on their device."""
import builtins
import numbers

import numpy as _np

from . import _core
from ._core import Array, full, ones, zeros
from ._core import empty as _empty
from ._methods import method as _method

__all__ = [
    "array", "asarray", "asnumpy", "from_dlpack", "zeros", "ones", "empty", "full", "arange", "linspace",
    "eye", "zeros_like", "ones_like", "full_like", "empty_like",
]


def _infer_numpy(obj, dtype):
    """NumPy parses nested sequences and scalars for us; gpuarr's defaults differ
    only for Python floats and complexes (float32 / complex64, as in the textbook)."""
    if dtype is not None:
        return _np.asarray(obj)
    a = _np.asarray(obj)
    if a.dtype == _np.float64 and not isinstance(obj, (_np.ndarray, _np.generic)):
        a = a.astype(_np.float32)
    elif a.dtype == _np.complex128 and not isinstance(obj, (_np.ndarray, _np.generic)):
        a = a.astype(_np.complex64)
    elif a.dtype.kind in "OUSV":
        raise TypeError(f"cannot make a gpuarr array from {type(obj).__name__} data "
                        f"(NumPy sees dtype {a.dtype}); use numbers or nested lists of numbers")
    return a


def _leaf(x, obj, requires_grad):
    """requires_grad=True of a creation function: `x` as a new leaf that requires grad
    (a detached alias when x is the caller's `obj` itself or was computed from it)."""
    if not requires_grad:
        return x
    if x is obj or not x.is_leaf:
        x = x.detach()
    return x.requires_grad_()


def asarray(obj, /, *, dtype=None, device=None, copy=None, requires_grad=False):
    """asarray(obj, /, *, dtype=None, device=None, copy=None, requires_grad=False)

    An array from ``obj``: a gpuarr array, a NumPy array, anything with the buffer
    protocol or DLPack, nested sequences, or a scalar. ``copy=None`` copies only when
    needed (another dtype or device), ``copy=True`` always, ``copy=False`` never
    (ValueError when a copy would be needed). Creating on a GPU from host data is one
    host-to-device transfer. ``requires_grad=True`` gives a leaf that autograd
    records (sharing ``obj``'s memory when no copy is made).
    """
    return _leaf(_asarray(obj, dtype, device, copy), obj, requires_grad)


def _asarray(obj, dtype, device, copy):
    if copy not in (None, True, False):
        raise ValueError(f"copy must be True, False or None, not {copy!r}")
    if isinstance(obj, Array):
        return _from_array(obj, dtype, device, copy)
    if not isinstance(obj, (_np.ndarray, _np.generic, list, tuple, builtins.bool, int, float,
                            complex, memoryview, bytes, bytearray)):
        if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
            x = from_dlpack(obj, device=device, copy=copy)
            return x if dtype is None else _from_array(x, dtype, None, False if copy is
                                                       False else None)
    if isinstance(obj, (memoryview, bytearray)):
        return _core._from_buffer(obj, dtype=dtype, device=device, copy=copy)
    if isinstance(obj, bytes):
        # NumPy reads bytes as one string, not as a buffer of uint8: b"abc" with
        # dtype=float32 is a ValueError there, never three floats
        raise TypeError("cannot make a gpuarr array from bytes (NumPy reads them as a "
                        "string); for their values use bytearray(b) or memoryview(b), "
                        "to reinterpret them numpy.frombuffer(b, dtype)")
    if isinstance(obj, _np.ndarray) and not obj.dtype.isnative:
        # a byte-swapped NumPy array ('>i4'): converted as NumPy converts it, the
        # values kept (gpuarr stores native-order elements only)
        if copy is False:
            raise ValueError(f"copy=False, but a {obj.dtype.str!r} array needs a copy "
                             f"into the machine's byte order")
        obj, copy = obj.astype(obj.dtype.newbyteorder("=")), None
    a = _infer_numpy(obj, dtype)
    if a is not obj and not isinstance(obj, _np.ndarray):
        # NumPy just made `a` from Python data: it is already a private copy
        if copy is False:
            raise ValueError(f"copy=False, but an array made from {type(obj).__name__} "
                             f"data is always a copy; use copy=None")
        copy = None
    return _core._from_buffer(a, dtype=dtype, device=device, copy=copy)


def _from_array(obj, dtype, device, copy):
    """asarray of a gpuarr array: the same object when nothing changes, else an explicit
    copy (to another device: a counted transfer)."""
    device = obj.device if device is None else _core.Device(device)
    same_dtype = dtype is None or obj.dtype == dtype
    if same_dtype and obj.device == device and copy is not True:
        return obj
    if copy is False:
        raise ValueError(f"copy=False, but a copy is needed (from {obj.device} "
                         f"{obj.dtype} to {device} {dtype or obj.dtype})")
    out = obj.copyto(device)
    if not same_dtype:
        out = out.astype(dtype)
    return out


def from_dlpack(x, /, *, device=None, copy=None):
    """from_dlpack(x, /, *, device=None, copy=None)

    An array sharing memory with the DLPack producer ``x`` (a NumPy array, a tensor of
    another library...). ``device=None`` keeps ``x``'s device; another device copies
    (``copy=False`` then raises). For data on a CUDA GPU, ``x.__dlpack__`` is given
    ``stream=`` gpuarr's own stream of that GPU, on which ``x``'s producer makes its
    pending writes visible. Defined in the C core."""
    return _core.from_dlpack(x, device=device, copy=copy)


def array(obj, /, *, dtype=None, device=None, copy=True, requires_grad=False):
    """array(obj, /, *, dtype=None, device=None, copy=True, requires_grad=False)

    A new array from ``obj`` (a copy unless ``copy`` is False or None); otherwise as
    :func:`asarray`. ``gpuarr.array([1., 2., 3.])`` is float32, ``[1, 2]`` int64.
    """
    return asarray(obj, dtype=dtype, device=device, copy=copy,
                   requires_grad=requires_grad)


def asnumpy(x):
    """asnumpy(x)

    A NumPy array with a copy of ``x``'s values (an explicit device-to-host transfer
    for a GPU array). NumPy arrays and other array-likes pass through ``numpy.asarray``.
    """
    if isinstance(x, Array):
        return x.numpy()
    return _np.asarray(x)


def _is_int(v):
    return isinstance(v, (numbers.Integral, _np.integer)) and not isinstance(v, _np.bool_)


def _to_int64(v, what):
    v = int(v)
    if not -(2**63) <= v < 2**63:
        raise OverflowError(f"arange: {what}={v} does not fit in int64")
    return v


def arange(start, /, stop=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """arange(start, /, stop=None, step=1, *, dtype=None, device=None, requires_grad=False)

    Evenly spaced values in ``[start, stop)``, made on ``device``. ``arange(n)`` is
    ``0, 1, ..., n-1``. Integers give int64, floats float32 (gpuarr's default float).
    """
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, (complex, _np.complexfloating)) or not isinstance(
                v, (numbers.Real, _np.number)):
            raise TypeError(f"arange: {name} must be a real number, not {type(v).__name__}")
    all_int = _is_int(start) and _is_int(stop) and _is_int(step)
    if dtype is None:
        dtype = "int64" if all_int else "float32"
    dt = _core.DType(dtype)
    if dt.kind in ("signed integer", "unsigned integer", "integer") or \
            _np.dtype(dt.name).kind in "iu":
        if not all_int:
            if all(float(v).is_integer() for v in (start, stop, step)):
                start, stop, step = int(start), int(stop), int(step)
            else:
                raise TypeError("arange with an integer dtype needs integer start, stop "
                                "and step")
        # the core counts the elements (exactly, in 128-bit integers)
        ints = [_to_int64(v, w) for v, w in ((start, "start"), (stop, "stop"), (step, "step"))]
        return _leaf(_core._arange(True, dt, device, float(start), float(stop),
                                   float(step), *ints), None, requires_grad)
    return _leaf(_core._arange(False, dt, device, float(start), float(stop), float(step),
                               0, 0, 0), None, requires_grad)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True,
             requires_grad=False):
    """linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True, requires_grad=False)

    ``num`` evenly spaced values from ``start`` to ``stop`` (included when
    ``endpoint``), made on ``device``; float32 unless ``dtype`` says otherwise.
    """
    if not _is_int(num):
        raise TypeError(f"linspace: num must be an integer, not {type(num).__name__}")
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, not {num}")
    dt = _core.DType(dtype if dtype is not None else "float32")
    if _np.dtype(dt.name).kind in "iub":
        if not hasattr(Array, "astype"):
            raise TypeError("linspace with an integer dtype needs astype (not built)")
        return _leaf(linspace(start, stop, num, dtype="float64", device=device,
                              endpoint=endpoint).astype(dt), None, requires_grad)
    return _leaf(_core._linspace(int(num), dt, device, float(start), float(stop),
                                 bool(endpoint)), None, requires_grad)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None, requires_grad=False):
    """eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None, requires_grad=False)

    The ``n_rows x n_cols`` matrix with ones on diagonal ``k`` (0: the main diagonal,
    > 0 above it) and zeros elsewhere, made on ``device``.
    """
    if n_cols is None:
        n_cols = n_rows
    for name, v in (("n_rows", n_rows), ("n_cols", n_cols), ("k", k)):
        if not _is_int(v):
            raise TypeError(f"eye: {name} must be an integer, not {type(v).__name__}")
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"negative dimensions are not allowed ({n_rows}, {n_cols})")
    return _leaf(_core._eye(int(n_rows), int(n_cols), int(k), dtype, device), None,
                 requires_grad)


def _like(x, fn, dtype, device, requires_grad, *extra):
    if not isinstance(x, Array):
        x = asarray(x)
    return fn(x.shape, *extra, dtype=x.dtype if dtype is None else dtype,
              device=x.device if device is None else device, requires_grad=requires_grad)


def zeros_like(x, /, *, dtype=None, device=None, requires_grad=False):
    """zeros_like(x, /, *, dtype=None, device=None, requires_grad=False)

    Zeros with ``x``'s shape, and its dtype and device unless given."""
    return _like(x, zeros, dtype, device, requires_grad)


def ones_like(x, /, *, dtype=None, device=None, requires_grad=False):
    """ones_like(x, /, *, dtype=None, device=None, requires_grad=False)

    Ones with ``x``'s shape, and its dtype and device unless given."""
    return _like(x, ones, dtype, device, requires_grad)


def empty(shape, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """empty(shape, *, dtype=None, device=None, requires_grad=False, pin_memory=False)

    An uninitialised array. ``pin_memory=True`` (only on the CPU) asks for page-locked
    host memory (PyTorch's ``torch.empty(..., pin_memory=True)``): with a CUDA GPU it is
    ``cudaHostAlloc`` memory, which copies to and from the GPU read and write after
    the call returned, so they overlap the host's work; without one (simulated GPUs)
    host memory is the device's already and this is a flag. ``is_pinned()`` is True
    (docs/DESIGN.md, "Non-blocking copies and pinned memory")."""
    if not pin_memory:
        return _empty(shape, dtype=dtype, device=device, requires_grad=requires_grad)
    probe = _empty(0, dtype=dtype, device=device)  # the dtype and device as empty() sees them
    if probe.device.type != "cpu":
        raise ValueError(f"pin_memory=True is for host memory, not {probe.device!r}: "
                         "make the array with device=gpuarr.cpu()")
    x = _core._empty_pinned(shape, probe.dtype)
    if requires_grad:
        x.requires_grad_(True)
    return x


@_method("pin_memory")
def pin_memory(self):
    """pin_memory()

    This array in page-locked host memory: itself when it is pinned already, else a
    pinned copy (PyTorch's ``Tensor.pin_memory()``). Only for arrays on the CPU: move a
    GPU array with ``x.to(gpuarr.cpu())`` first."""
    if self.device.type != "cpu":
        raise ValueError(f"pin_memory() is for arrays on the CPU, this one is on "
                         f"{self.device!r} (only host memory can be page-locked)")
    if self._pinned:
        return self
    out = empty(self.shape, dtype=self.dtype, pin_memory=True)
    out[...] = self.detach()
    return out


@_method("is_pinned")
def is_pinned(self):
    """is_pinned()

    True when the array's memory is page-locked host memory (``x.pin_memory()``,
    ``gpuarr.empty(..., pin_memory=True)``, or a view of such an array)."""
    return bool(self._pinned)


def empty_like(x, /, *, dtype=None, device=None, requires_grad=False):
    """empty_like(x, /, *, dtype=None, device=None, requires_grad=False)

    An uninitialised array with ``x``'s shape, and its dtype and device unless given."""
    return _like(x, _empty, dtype, device, requires_grad)


def full_like(x, /, fill_value, *, dtype=None, device=None, requires_grad=False):
    """full_like(x, /, fill_value, *, dtype=None, device=None, requires_grad=False)

    ``fill_value`` everywhere, with ``x``'s shape, and its dtype and device unless
    given."""
    return _like(x, full, dtype, device, requires_grad, fill_value)
