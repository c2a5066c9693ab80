"""Dask arrays whose chunks are gpuarr arrays (``dask.array.from_array(x, chunks=...)``).

Dask finds most of what it needs through NumPy's protocols (``np.exp(chunk)``,
``np.sum(chunk, axis=0)``, ``np.concatenate(chunks)`` run gpuarr's functions, see
_numpy_protocol.py). A few of its helpers are looked up by the chunk's type in
``dask.array.dispatch`` tables instead, and their fallbacks build NumPy arrays (the
element count behind ``mean`` and ``var``), which would meet a GPU chunk and raise. For
CuPy, Dask registers CuPy's functions in those tables itself; for gpuarr, this module
does it, the first time both are imported:

* ``import gpuarr`` after Dask: registered at once;
* Dask after ``import gpuarr``: a one-shot import hook registers them when
  ``dask.array.backends`` has been imported (Dask's tables exist from then on). Dask is
  never imported by gpuarr: a user without Dask pays nothing.
"""
import importlib.abc
import sys

from ._core import Array, int64
from ._creation import asarray
from ._manipulation import concat, reshape, take
from ._matmul import tensordot

_DONE = False
_WATCHED = "dask.array.backends"


def register():
    """Register gpuarr's functions in Dask's dispatch tables (idempotent)."""
    global _DONE
    if _DONE:
        return
    _DONE = True
    # Dask is optional, and imported only by the user: here it has been
    from dask.array import backends, dispatch

    # counts of elements (mean, var, std): arrays on the chunk's device, not NumPy's
    dispatch.numel_lookup.register(Array, backends._numel_arraylike)
    dispatch.nannumel_lookup.register(Array, backends._nannumel)
    dispatch.concatenate_lookup.register(Array, _concatenate)
    dispatch.tensordot_lookup.register(Array, tensordot)
    dispatch.take_lookup.register(Array, _take)
    # Dask's own to_numpy(): the explicit device-to-host copy, as x.numpy() is
    dispatch.to_numpy_dispatch.register(Array, lambda x, **kw: x.numpy())


def _concatenate(arrays, axis=0):
    if axis is None:
        return concat([reshape(a, (-1,)) for a in arrays], axis=0)
    return concat(list(arrays), axis=axis)


def _take(a, indices, axis=0):
    if not isinstance(indices, Array):
        # Dask's index lists are host data: they go where the chunk is (small, int64)
        indices = asarray(indices, dtype=int64, device=a.device)
    return take(a, indices, axis=axis)


class _Hook(importlib.abc.MetaPathFinder):
    """Calls register() right after Dask's dispatch backends are imported."""

    def find_spec(self, name, path, target=None):
        if name != _WATCHED:
            return None
        sys.meta_path.remove(self)  # one shot: the real finders locate the module
        for finder in sys.meta_path:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") \
                else None
            if spec is not None and spec.loader is not None:
                break
        else:
            return None
        exec_module = spec.loader.exec_module

        def exec_then_register(module):
            exec_module(module)
            register()

        spec.loader.exec_module = exec_then_register
        return spec


def install():
    """Register now if Dask's tables exist, else when Dask imports them."""
    if _WATCHED in sys.modules:
        register()
    elif not any(isinstance(f, _Hook) for f in sys.meta_path):
        sys.meta_path.insert(0, _Hook())
