"""The array API's linalg extension functions that gpuarr composes from its own
operations (no LAPACK): matrix_transpose, diagonal, trace, outer, cross. They run on
every device kind, CUDA included.

The factorisation-based names (cholesky, det, eigh, eigvalsh, inv, matrix_rank, pinv,
qr, slogdet, solve, svd, svdvals) are in _factorizations.py, with matrix_power (its
negative powers invert); they use this module, never the other way round.
"""
import operator

from .. import _core
from .._core import Array
from .._creation import arange
from .._manipulation import broadcast_arrays, matrix_transpose, moveaxis
from .._manipulation import reshape, stack, take
from .._reduce import sum

__all__ = ["matrix_transpose", "diagonal", "trace", "outer", "cross"]


def _check(x, name, min_ndim=0):
    if not isinstance(x, Array):
        raise TypeError(f"linalg.{name}() expects a gpuarr.Array, got {type(x).__name__}")
    if x.ndim < min_ndim:
        raise ValueError(f"linalg.{name} needs at least {min_ndim} dimensions, got "
                         f"shape {x.shape}")


def diagonal(x, /, *, offset=0):
    """diagonal(x, /, *, offset=0)

    The ``offset`` diagonal of each matrix (last two axes; offset > 0 above the main
    diagonal, < 0 below), as a new array of shape ``x.shape[:-2] + (k,)``."""
    _check(x, "diagonal", 2)
    offset = operator.index(offset)
    m, n = x.shape[-2:]
    if offset >= 0:
        start, k = offset, max(0, min(m, n - offset))
    else:
        start, k = -offset * n, max(0, min(m + offset, n))
    # Element (i, i + offset) sits at flat position start + i * (n + 1) of a matrix.
    flat = reshape(x, x.shape[:-2] + (m * n,))
    idx = arange(k, device=x.device) * (n + 1) + start if k else arange(0, device=x.device)
    return take(flat, idx, axis=-1)


def trace(x, /, *, offset=0, dtype=None):
    """trace(x, /, *, offset=0, dtype=None)

    The sum of the ``offset`` diagonal of each matrix (last two axes), accumulated
    in ``dtype`` (None: as gpuarr.sum chooses)."""
    _check(x, "trace", 2)
    return sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1, x2, /):
    """outer(x1, x2, /)

    The outer product of two 1-D arrays: ``out[i, j] = x1[i] * x2[j]``."""
    _check(x1, "outer")
    _check(x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"linalg.outer takes 1-D arrays, got shapes {x1.shape} and "
                         f"{x2.shape}")
    return _core.multiply(reshape(x1, (-1, 1)), reshape(x2, (1, -1)))


def cross(x1, x2, /, *, axis=-1):
    """cross(x1, x2, /, *, axis=-1)

    The cross product of 3-element vectors along ``axis`` (the inputs broadcast
    against each other on the other axes)."""
    _check(x1, "cross", 1)
    _check(x2, "cross", 1)
    a, b = broadcast_arrays(x1, x2)
    axis = operator.index(axis)
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"linalg.cross: axis {axis} is out of bounds for {a.ndim} "
                         f"dimensions")
    if a.shape[axis] != 3:
        raise ValueError(f"linalg.cross needs vectors of 3 elements along axis {axis}, "
                         f"got {a.shape[axis]}")
    a, b = moveaxis(a, axis, -1), moveaxis(b, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    mul, sub = _core.multiply, _core.subtract
    out = stack([sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
                 sub(mul(a0, b1), mul(a1, b0))], axis=-1)
    return moveaxis(out, -1, axis)
