"""gpuarr.compat.jax: the JAX edition of the GPU chapter, on gpuarr.

    import gpuarr.compat.jax as jax
    import gpuarr.compat.jax.numpy as jnp      # or: from gpuarr.compat.jax import numpy as jnp

JAX's rules, where they differ from gpuarr's, are followed here:
- **Immutable arrays.** ``x[i] = v`` raises TypeError, ``x += 1`` makes a new array,
  and ``x.at[i].set(v)`` returns a changed copy (gpuarr's own arrays change in place).
- **The default device** is the first GPU when there is one (JAX's), not the CPU.
- ``x.device()`` is the array's device (the d2l edition's spelling).
As in JAX and gpuarr, operands committed to two devices raise. The chapter's model
cells use Flax (``flax.linen``), a separate library: its shim is gpuarr.compat.flax
(``from gpuarr.compat.flax import linen as nn``); ``jax.device_put`` and
``jax.tree_util.tree_map`` take its parameter trees (dicts of arrays).
A name outside the chapter raises AttributeError naming gpuarr's spelling.
"""
import types

import gpuarr

from .._shim import outside
from . import numpy, tree_util
from ._array import Array
from .devices import device_count, device_put, devices

__getattr__ = outside("jax", __name__)


def _key(seed):
    """PRNGKey(seed): a key is a seed here. gpuarr has one generator, so a draw seeds
    it with its key: the same key gives the same values, as in JAX."""
    return ("key", int(seed))


def _split(key, num=2):
    """split(key, num=2): `num` new keys."""
    return [("key", (key[1] * 1000003 + i + 1) & 0x7FFFFFFF) for i in range(num)]


def _draw(fn):
    def draw(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
        gpuarr.random.seed(key[1])
        return Array(fn(minval, maxval, size=tuple(shape), dtype=dtype,
                        device=numpy.default_device()))
    return draw


def _normal(key, shape=(), dtype=None):
    """normal(key, shape=(), dtype=None): standard normal values on the default device."""
    gpuarr.random.seed(key[1])
    return Array(gpuarr.random.normal(0.0, 1.0, size=tuple(shape), dtype=dtype,
                                      device=numpy.default_device()))


random = types.SimpleNamespace(PRNGKey=_key, key=_key, split=_split,
                               uniform=_draw(gpuarr.random.uniform), normal=_normal)
