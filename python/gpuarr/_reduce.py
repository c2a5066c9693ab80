"""Reductions, scans and statistics (sum, max, mean, std, cumulative_sum, ...).

Each runs on the device of its input and returns an array there: a full reduction
gives a 0-d array (read it with ``float()`` or ``.item()``, a transfer for a GPU
array). Result dtypes follow NumPy 2: sum/prod of bool and small integers give
int64 (uint64 for unsigned), mean/var/std of integers give float64.
"""
import numpy as _np

from . import _core
from ._core import Array
from ._methods import method

__all__ = [
    "sum", "prod", "mean", "max", "min", "argmax", "argmin", "all", "any", "std", "var",
    "cumulative_sum", "cumulative_prod", "cumsum", "cumprod", "AxisError", "logsumexp",
]

# the core's reduction codes, by name (ga_ops.h GA_REDUCE_OPS, exported by _core)
_SUM, _PROD, _MAX, _MIN, _ARGMAX, _ARGMIN, _ALL, _ANY = (
    _core.reduce_ops[n] for n in ("sum", "prod", "max", "min", "argmax", "argmin", "all", "any"))
# and its scan codes (GA_SCAN_OPS)
_CUMSUM, _CUMPROD = (_core.scan_ops[n] for n in ("cumsum", "cumprod"))

AxisError = _np.exceptions.AxisError


def _check(x, name):
    if not isinstance(x, Array):
        raise TypeError(f"{name}() expects a gpuarr.Array, got {type(x).__name__}; "
                        f"make one with gpuarr.asarray(...) first")


# axis as the core wants it (None or a tuple of non-negative ints); NumPy's AxisError
# (a ValueError and an IndexError) for an axis out of range: the core's rule
_normalize_axis = _core.normalize_axis


def _reduce(x, op, name, axis, keepdims, dtype=None):
    if hasattr(x, "_fuse_reduce"):  # inside gpuarr.fuse's trace (gpuarr/_fuse.py)
        return x._fuse_reduce(name, axis, keepdims, dtype)
    _check(x, name)
    return _core._reduce(x, op, _normalize_axis(axis, x.ndim), keepdims, dtype)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    """sum(x, /, *, axis=None, dtype=None, keepdims=False)

    Sum over ``axis`` (None: every axis; an int or a tuple). Floating sums are
    pairwise-accurate; bool and small integers sum in int64 (unsigned in uint64)."""
    return _reduce(x, _SUM, "sum", axis, keepdims, dtype)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """prod(x, /, *, axis=None, dtype=None, keepdims=False)

    Product over ``axis``; the product of nothing is 1."""
    return _reduce(x, _PROD, "prod", axis, keepdims, dtype)


def max(x, /, *, axis=None, keepdims=False):
    """max(x, /, *, axis=None, keepdims=False)

    Largest element over ``axis``; NaN propagates. ValueError for an empty
    reduction (there is no identity)."""
    return _reduce(x, _MAX, "max", axis, keepdims)


def min(x, /, *, axis=None, keepdims=False):
    """min(x, /, *, axis=None, keepdims=False)

    Smallest element over ``axis``; NaN propagates. ValueError for an empty
    reduction."""
    return _reduce(x, _MIN, "min", axis, keepdims)


def _arg(x, op, name, axis, keepdims):
    _check(x, name)
    if axis is not None and not isinstance(axis, (int, _np.integer)):
        raise TypeError(f"{name}: axis must be None or an int, not {type(axis).__name__}")
    if axis is None:
        # the flat C-order index over every axis
        r = _core._reduce(x, op, None, keepdims)
        return r
    return _core._reduce(x, op, _normalize_axis(axis, x.ndim), keepdims)


def argmax(x, /, *, axis=None, keepdims=False):
    """argmax(x, /, *, axis=None, keepdims=False)

    Index (int64) of the first largest element along ``axis`` (None: the flat
    index); the first NaN counts as the largest."""
    return _arg(x, _ARGMAX, "argmax", axis, keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    """argmin(x, /, *, axis=None, keepdims=False)

    Index (int64) of the first smallest element along ``axis``."""
    return _arg(x, _ARGMIN, "argmin", axis, keepdims)


def all(x, /, *, axis=None, keepdims=False):
    """all(x, /, *, axis=None, keepdims=False)

    True where every element over ``axis`` is nonzero (True for an empty one)."""
    return _reduce(x, _ALL, "all", axis, keepdims)


def any(x, /, *, axis=None, keepdims=False):
    """any(x, /, *, axis=None, keepdims=False)

    True where some element over ``axis`` is nonzero (False for an empty one)."""
    return _reduce(x, _ANY, "any", axis, keepdims)


def mean(x, /, *, axis=None, keepdims=False, dtype=None):
    """mean(x, /, *, axis=None, keepdims=False, dtype=None)

    Arithmetic mean over ``axis``: float64 for integers, float16 computed in
    float32. The mean of nothing is NaN."""
    if hasattr(x, "_fuse_reduce"):
        return x._fuse_reduce("mean", axis, keepdims, dtype)
    _check(x, "mean")
    return _core._stat(x, "mean", _normalize_axis(axis, x.ndim), keepdims, 0.0, dtype)


def _correction(correction, ddof):
    if ddof is not None:
        if correction not in (None, 0, 0.0):
            raise ValueError("give correction= or ddof= (NumPy's name), not both")
        return float(ddof)
    return 0.0 if correction is None else float(correction)


def var(x, /, *, axis=None, correction=0.0, keepdims=False, dtype=None, ddof=None):
    """var(x, /, *, axis=None, correction=0.0, keepdims=False, dtype=None, ddof=None)

    Variance over ``axis``: sum(|x - mean|**2) / (N - correction). ``ddof`` is
    NumPy's name for ``correction``. Complex input gives a real result."""
    _check(x, "var")
    return _core._stat(x, "var", _normalize_axis(axis, x.ndim), keepdims,
                       _correction(correction, ddof), dtype)


def std(x, /, *, axis=None, correction=0.0, keepdims=False, dtype=None, ddof=None):
    """std(x, /, *, axis=None, correction=0.0, keepdims=False, dtype=None, ddof=None)

    Standard deviation: the square root of :func:`var`."""
    _check(x, "std")
    return _core._stat(x, "std", _normalize_axis(axis, x.ndim), keepdims,
                       _correction(correction, ddof), dtype)


def logsumexp(x, /, *, axis=None, keepdims=False):
    """logsumexp(x, /, *, axis=None, keepdims=False)

    ``log(sum(exp(x)))`` over ``axis``, computed without overflow (the largest
    element is factored out first). Its gradient is the softmax of x along axis."""
    _check(x, "logsumexp")
    axes = _normalize_axis(axis, x.ndim)
    mask = 0
    for i in range(x.ndim) if axes is None else axes:
        mask |= 1 << i
    with _core_no_grad():
        m = _core._reduce(x, _MAX, axes, True)
        m = _core.where(_core.isfinite(m), m, 0.0)
        s = _core._reduce(_core.exp(_core.subtract(x, m)), _SUM, axes, True)
        r = _core.add(_core.log(s), m)
        if not keepdims:
            r = _core._reshape(r, tuple(n for i, n in enumerate(x.shape)
                                        if not mask >> i & 1), None)
    return _core._ag_record(_LOGSUMEXP, r, (x,), (mask, keepdims))


class _core_no_grad:
    """Grad mode off inside a composite that records itself as one node."""

    def __enter__(self):
        self.prev = _core._set_grad_enabled(False)

    def __exit__(self, *exc):
        _core._set_grad_enabled(self.prev)


_LOGSUMEXP = _core.autograd_ops["logsumexp"]


def _scan(x, op, name, axis, dtype, include_initial):
    _check(x, name)
    if x.ndim == 0:
        raise ValueError(f"{name} needs an array with at least one dimension")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for an array with more than one "
                             f"dimension (got shape {x.shape})")
        axis = 0
    (axis,) = _normalize_axis(axis, x.ndim)
    return _core._scan(x, op, axis, dtype, bool(include_initial))


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False)

    Running sums along ``axis`` (optional for 1-d input); ``include_initial`` puts
    a 0 first. Small integers accumulate in int64 as in :func:`sum`."""
    return _scan(x, _CUMSUM, "cumulative_sum", axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False)

    Running products along ``axis``; ``include_initial`` puts a 1 first."""
    return _scan(x, _CUMPROD, "cumulative_prod", axis, dtype, include_initial)


def cumsum(x, /, axis=None, dtype=None):
    """cumsum(x, /, axis=None, dtype=None)

    NumPy's cumsum: with ``axis=None`` the running sum of the flattened array."""
    _check(x, "cumsum")
    if axis is None and x.ndim != 1:
        x = _flatten(x)
    return cumulative_sum(x, axis=0 if axis is None else axis, dtype=dtype)


def cumprod(x, /, axis=None, dtype=None):
    """cumprod(x, /, axis=None, dtype=None)

    NumPy's cumprod: with ``axis=None`` the running product of the flattened array."""
    _check(x, "cumprod")
    if axis is None and x.ndim != 1:
        x = _flatten(x)
    return cumulative_prod(x, axis=0 if axis is None else axis, dtype=dtype)


def _flatten(x):
    reshape = getattr(x, "reshape", None)
    if reshape is None:
        raise NotImplementedError("cumsum over a flattened array needs reshape")
    return reshape(-1)


# --- methods --------------------------------------------------------------------------

@method("sum")
def _m_sum(self, axis=None, dtype=None, keepdims=False):
    """sum(axis=None, dtype=None, keepdims=False)

    gpuarr.sum(self, ...)."""
    return sum(self, axis=axis, dtype=dtype, keepdims=keepdims)


@method("prod")
def _m_prod(self, axis=None, dtype=None, keepdims=False):
    """prod(axis=None, dtype=None, keepdims=False)

    gpuarr.prod(self, ...)."""
    return prod(self, axis=axis, dtype=dtype, keepdims=keepdims)


@method("max")
def _m_max(self, axis=None, keepdims=False):
    """max(axis=None, keepdims=False)

    gpuarr.max(self, ...)."""
    return max(self, axis=axis, keepdims=keepdims)


@method("min")
def _m_min(self, axis=None, keepdims=False):
    """min(axis=None, keepdims=False)

    gpuarr.min(self, ...)."""
    return min(self, axis=axis, keepdims=keepdims)


@method("argmax")
def _m_argmax(self, axis=None, keepdims=False):
    """argmax(axis=None, keepdims=False)

    gpuarr.argmax(self, ...)."""
    return argmax(self, axis=axis, keepdims=keepdims)


@method("argmin")
def _m_argmin(self, axis=None, keepdims=False):
    """argmin(axis=None, keepdims=False)

    gpuarr.argmin(self, ...)."""
    return argmin(self, axis=axis, keepdims=keepdims)


@method("all")
def _m_all(self, axis=None, keepdims=False):
    """all(axis=None, keepdims=False)

    gpuarr.all(self, ...)."""
    return all(self, axis=axis, keepdims=keepdims)


@method("any")
def _m_any(self, axis=None, keepdims=False):
    """any(axis=None, keepdims=False)

    gpuarr.any(self, ...)."""
    return any(self, axis=axis, keepdims=keepdims)


@method("mean")
def _m_mean(self, axis=None, dtype=None, keepdims=False):
    """mean(axis=None, dtype=None, keepdims=False)

    gpuarr.mean(self, ...)."""
    return mean(self, axis=axis, keepdims=keepdims, dtype=dtype)


@method("var")
def _m_var(self, axis=None, dtype=None, ddof=None, keepdims=False, *, correction=None):
    """var(axis=None, dtype=None, ddof=None, keepdims=False, *, correction=None)

    gpuarr.var(self, ...)."""
    return var(self, axis=axis, correction=correction, keepdims=keepdims, dtype=dtype,
               ddof=ddof)


@method("std")
def _m_std(self, axis=None, dtype=None, ddof=None, keepdims=False, *, correction=None):
    """std(axis=None, dtype=None, ddof=None, keepdims=False, *, correction=None)

    gpuarr.std(self, ...)."""
    return std(self, axis=axis, correction=correction, keepdims=keepdims, dtype=dtype,
               ddof=ddof)


@method("cumsum")
def _m_cumsum(self, axis=None, dtype=None):
    """cumsum(axis=None, dtype=None)

    gpuarr.cumsum(self, ...)."""
    return cumsum(self, axis=axis, dtype=dtype)


@method("cumprod")
def _m_cumprod(self, axis=None, dtype=None):
    """cumprod(axis=None, dtype=None)

    gpuarr.cumprod(self, ...)."""
    return cumprod(self, axis=axis, dtype=dtype)
