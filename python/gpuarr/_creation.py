"""Creating arrays from Python data, NumPy arrays and buffers; reading them back."""
import builtins

import numpy as _np

from . import _core
from ._core import Array

__all__ = ["array", "asarray", "asnumpy"]


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


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """asarray(obj, /, *, dtype=None, device=None, copy=None)

    An array from ``obj``: a gpuarr array, a NumPy array, anything with the buffer
    protocol or DLPack, nested sequences, or a scalar. ``copy=None`` copies only when
    needed (another dtype or device), ``copy=True`` always, ``copy=False`` never
    (ValueError when a copy would be needed). Creating on a GPU from host data is one
    host-to-device transfer.
    """
    if isinstance(obj, Array):
        if device is None:
            device = obj.device
        same = (dtype is None or obj.dtype == dtype) and obj.device == _core.Device(device)
        if same and copy is not True:
            return obj
        if copy is False:
            raise ValueError("copy=False, but a copy is needed (another dtype or device)")
        out = obj.copyto(device)
        return out if dtype is None or out.dtype == dtype else out.astype(dtype)
    if not isinstance(obj, (_np.ndarray, _np.generic, list, tuple, builtins.bool, int, float,
                            complex, memoryview, bytes, bytearray)):
        if hasattr(obj, "__dlpack__") and hasattr(_core, "from_dlpack"):
            return _core.from_dlpack(obj, device=device, copy=copy) if dtype is None else \
                asarray(_core.from_dlpack(obj, device=device, copy=copy), dtype=dtype, copy=False)
    if isinstance(obj, (memoryview, bytes, bytearray)):
        return _core._from_buffer(obj, dtype=dtype, device=device, copy=copy)
    a = _infer_numpy(obj, dtype)
    if a is not obj and copy is None and not isinstance(obj, _np.ndarray):
        copy = None  # freshly made by NumPy: wrapping it is safe
    return _core._from_buffer(a, dtype=dtype, device=device, copy=copy)


def array(obj, /, *, dtype=None, device=None, copy=True):
    """array(obj, /, *, dtype=None, device=None, copy=True)

    A new array from ``obj`` (a copy unless ``copy`` is False or None); otherwise as
    :func:`asarray`. ``gpuarr.array([1., 2., 3.])`` is float32, ``[1, 2]`` int64.
    """
    return asarray(obj, dtype=dtype, device=device, copy=copy)


def asnumpy(x):
    """asnumpy(x)

    A NumPy array with a copy of ``x``'s values (an explicit device-to-host transfer
    for a GPU array). NumPy arrays and other array-likes pass through ``numpy.asarray``.
    """
    if isinstance(x, Array):
        return x.numpy()
    return _np.asarray(x)
