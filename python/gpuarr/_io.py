"""Saving arrays and parameters to files, and loading them onto any device.

The files are NumPy's own formats, written by NumPy's writer: one array is a ``.npy``
file, a dict of arrays (a model's ``state_dict()``) is a ``.npz`` archive. So
``numpy.load`` reads what ``gpuarr.save`` writes, and the other way round. Every
dtype round-trips bit for bit (NaN payloads included): the bytes are copied, never
converted. A file in the other byte order (NumPy writes one on request, e.g.
``numpy.save(f, a.astype(">f4"))``) is byte-swapped on the host when loaded: gpuarr's
arrays are in the machine's order.
"""
import os

import numpy as _np

from ._core import Array, Device, cpu
from ._creation import asarray

__all__ = ["save", "load"]


def _host(value, key=None):
    """A NumPy array with value's bytes (a device-to-host copy for device arrays)."""
    if isinstance(value, Array):
        return value.numpy()
    if isinstance(value, _np.ndarray):
        return value
    if isinstance(value, (_np.generic, int, float, complex, bool)):
        return _np.asarray(value)
    where = f" under key {key!r}" if key is not None else ""
    raise TypeError(f"gpuarr.save writes arrays, or a dict of arrays; got "
                    f"{type(value).__name__}{where}")


def save(path, obj):
    """save(path, obj)

    Write ``obj`` to the file ``path`` (the name is used exactly as given): an array
    in NumPy's ``.npy`` format, or a dict from string keys to arrays (for instance
    ``net.state_dict()``) as a ``.npz`` archive. Device arrays are copied to the host
    first (a device-to-host transfer each). ``numpy.load(path)`` reads the file."""
    if isinstance(obj, (str, os.PathLike)) and not isinstance(path, (str, os.PathLike)):
        raise TypeError("gpuarr.save(path, obj) takes the path first (unlike torch.save)")
    if isinstance(obj, dict):
        arrays = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError(f"gpuarr.save: dict keys must be strings, got {k!r}")
            arrays[k] = _host(v, k)
        with open(path, "wb") as f:
            _np.savez(f, **arrays)
        return
    a = _host(obj)
    with open(path, "wb") as f:
        _np.save(f, a, allow_pickle=False)


def _native(a):
    """`a` in the machine's byte order (the same values; a host copy only when swapped)."""
    if a.dtype.isnative:
        return a
    return a.astype(a.dtype.newbyteorder("="))


def load(path, device=None):
    """load(path, device=None)

    Read a file written by ``gpuarr.save`` (or by ``numpy.save`` / ``numpy.savez``)
    and return its array, or a dict of arrays for a ``.npz`` archive, on ``device``
    (default ``cpu()``; like PyTorch's ``map_location``). Loading onto a GPU is one
    host-to-device transfer per array. The values are bit-for-bit those saved."""
    dev = cpu() if device is None else Device(device)
    data = _np.load(path, allow_pickle=False)
    if isinstance(data, _np.ndarray):
        return asarray(_native(data), device=dev)
    try:  # an .npz archive: a lazily read zip file
        return {k: asarray(_native(data[k]), device=dev) for k in data.files}
    finally:
        data.close()
