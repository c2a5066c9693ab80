"""gpuarr.random: random numbers made directly on the device.

One generator for the process: a (seed, counter) pair. Every call takes the next n
counters (n = the number of elements), and element i of a call is a pure function of
(seed, counter + i) (Philox4x32-10, csrc/kernels/ga_philox.h), so the same seed gives
the same numbers on the CPU, on simulated GPUs and on CUDA GPUs.
"""
import math
import numbers
import os

import numpy as _np

from . import _core

__all__ = ["seed", "uniform", "normal", "integers", "rand", "randn", "get_state",
           "set_state"]

# the core's distribution codes, by name (ga_ops.h GA_RAND_DISTS, exported by _core)
_UNIFORM, _NORMAL, _INTEGERS = (_core.random_dists[n] for n in ("uniform", "normal", "integers"))


def seed(n=None):
    """seed(n=None)

    Restart the generator from seed ``n`` (an int in [0, 2**64)); ``None`` draws a
    fresh seed from the operating system."""
    if n is None:
        n = int.from_bytes(os.urandom(8), "little")
    if isinstance(n, (bool, _np.bool_)) or not isinstance(n, (numbers.Integral, _np.integer)):
        raise TypeError(f"seed must be an integer, not {type(n).__name__}")
    n = int(n)
    if not 0 <= n < 2**64:
        raise ValueError(f"seed must be in [0, 2**64), got {n}")
    _core._random_set_state(n, 0)


def get_state():
    """get_state()

    The generator's state, a (seed, counter) tuple, for set_state()."""
    return _core._random_get_state()


def set_state(state):
    """set_state(state)

    Restore a state returned by get_state()."""
    s, c = state
    _core._random_set_state(int(s), int(c))


def _shape(size):
    if size is None:
        return ()
    if isinstance(size, (numbers.Integral, _np.integer)):
        return (int(size),)
    return tuple(size)


def _finite(name, v):
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def _leaf(x, requires_grad):
    return x.requires_grad_() if requires_grad else x


def uniform(low=0.0, high=1.0, size=None, dtype=None, device=None, requires_grad=False):
    """uniform(low=0.0, high=1.0, size=None, dtype=None, device=None, requires_grad=False)

    Uniform samples in ``[low, high)`` of shape ``size`` (None: a 0-d array), made on
    ``device``; float32 unless ``dtype`` says otherwise."""
    low, high = _finite("low", low), _finite("high", high)
    if high < low:
        raise ValueError(f"uniform: high ({high}) must not be less than low ({low})")
    return _leaf(_core._random(_UNIFORM, _shape(size), dtype or "float32", device, low,
                               high, 0, 0), requires_grad)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, device=None, requires_grad=False):
    """normal(loc=0.0, scale=1.0, size=None, dtype=None, device=None, requires_grad=False)

    Normal (Gaussian) samples with mean ``loc`` and standard deviation ``scale``, made
    on ``device``; float32 unless ``dtype`` says otherwise."""
    loc, scale = _finite("loc", loc), _finite("scale", scale)
    if scale < 0:
        raise ValueError(f"normal: scale must be non-negative, got {scale}")
    return _leaf(_core._random(_NORMAL, _shape(size), dtype or "float32", device, loc,
                               scale, 0, 0), requires_grad)


def integers(low, high=None, size=None, dtype=None, device=None, requires_grad=False):
    """integers(low, high=None, size=None, dtype=None, device=None, requires_grad=False)

    Random integers in ``[low, high)`` (``[0, low)`` when high is None), made on
    ``device``; int64 unless ``dtype`` says otherwise."""
    if high is None:
        low, high = 0, low
    for name, v in (("low", low), ("high", high)):
        if isinstance(v, (bool, _np.bool_)) or not isinstance(v, (numbers.Integral,
                                                                    _np.integer)):
            raise TypeError(f"integers: {name} must be an integer, not {type(v).__name__}")
    low, high = int(low), int(high)
    if low >= high:
        raise ValueError(f"integers: low ({low}) must be less than high ({high})")
    dt = _core.DType(dtype or "int64")
    npdt = _np.dtype(dt.name)
    if npdt.kind not in "iu":
        raise TypeError(f"integers makes integer dtypes, not {dt.name}")
    info = _np.iinfo(npdt)
    if low < info.min or high - 1 > info.max:
        raise ValueError(f"integers: [{low}, {high}) does not fit in {dt.name} "
                         f"([{info.min}, {info.max}])")
    if not (-(2**63) <= low and high <= 2**63 - 1):
        raise ValueError("integers: low and high must fit in int64")
    return _leaf(_core._random(_INTEGERS, _shape(size), dt, device, 0.0, 0.0, low, high),
                 requires_grad)


def _varshape(shape):
    if len(shape) == 1 and not isinstance(shape[0], (numbers.Integral, _np.integer)):
        return tuple(shape[0])
    return shape


def rand(*shape, device=None, dtype=None, requires_grad=False):
    """rand(*shape, device=None, dtype=None, requires_grad=False)

    Uniform samples in [0, 1) of the given shape (ints, or one tuple)."""
    return uniform(0.0, 1.0, _varshape(shape), dtype=dtype, device=device,
                   requires_grad=requires_grad)


def randn(*shape, device=None, dtype=None, requires_grad=False):
    """randn(*shape, device=None, dtype=None, requires_grad=False)

    Standard normal samples of the given shape (ints, or one tuple)."""
    return normal(0.0, 1.0, _varshape(shape), dtype=dtype, device=device,
                  requires_grad=requires_grad)


seed()
