"""gpuarr.linalg: norms, factorisations and the array API's linear-algebra names.

Every result stays on the input's device (a norm of a GPU array is a 0-d GPU array:
reading it is the only transfer). The norms are here; the rest comes from
- _composed.py: the functions gpuarr composes from its own operations (diagonal,
  trace, outer, cross, matrix_transpose), on every device kind;
- _factorizations.py: the ones built on a factorisation (LAPACK, cuSOLVER): solve,
  inv, det, eigh, svd, qr, ..., and matrix_power (negative powers invert);
- gpuarr/_matmul.py: matmul, tensordot, vecdot (also in the main namespace).
"""
import math as _math
import operator as _operator

from .. import _core
from .._core import Array
from .._manipulation import expand_dims as _expand_dims, permute_dims as _permute_dims
from .._matmul import matmul, tensordot, vecdot
from .._reduce import _normalize_axis
from .._reduce import max as _max, min as _min, sum as _sum

from ._composed import cross, diagonal, matrix_transpose, outer, trace
from ._factorizations import EighResult, LinAlgError, QRResult, SlogdetResult, SVDResult
from ._factorizations import cholesky, det, eigh, eigvalsh, inv, matrix_power, matrix_rank
from ._factorizations import pinv, qr, slogdet, solve, svd, svdvals

__all__ = ["matmul", "tensordot", "vecdot", "norm", "vector_norm", "matrix_norm",
           "matrix_transpose", "diagonal", "trace", "outer", "cross", "matrix_power",
           "LinAlgError", "cholesky", "det", "eigh", "eigvalsh", "inv", "matrix_rank",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals"]


def _check(x, name):
    if not isinstance(x, Array):
        raise TypeError(f"linalg.{name}() expects a gpuarr.Array, got {type(x).__name__}")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """vector_norm(x, /, *, axis=None, keepdims=False, ord=2)

    ``(sum |x|**ord)**(1/ord)`` over ``axis`` (None: every element, as one vector);
    ord inf / -inf give max / min of ``|x|``, ord 0 the count of nonzeros."""
    _check(x, "vector_norm")
    if isinstance(ord, str):
        raise ValueError(f"vector_norm: invalid ord {ord!r} (a number or +-inf)")
    axes = _normalize_axis(axis, x.ndim)
    return _core._vector_norm(x, axes, keepdims, float(ord))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """matrix_norm(x, /, *, keepdims=False, ord='fro')

    Norm of each matrix over the last two axes: 'fro', 1, -1, inf, -inf, and from
    the singular values (svdvals) 'nuc' (their sum), 2 (the largest), -2 (the
    smallest)."""
    _check(x, "matrix_norm")
    if x.ndim < 2:
        raise ValueError(f"matrix_norm needs at least 2 dimensions, got {x.ndim}")
    return _matrix_norm(x, (x.ndim - 2, x.ndim - 1), keepdims, ord)


def _matrix_norm(x, axes, keepdims, ord):
    row, col = axes
    if ord is None or ord == "fro":
        return _core._matrix_norm(x, row, col, keepdims, "f", 1)
    if ord == "nuc" or ord in (2, -2):
        return _singular_norm(x, row, col, keepdims, ord)
    if isinstance(ord, str):
        raise ValueError(f"invalid norm order {ord!r} for matrices")
    if ord in (1, -1):
        return _core._matrix_norm(x, row, col, keepdims, "1", 1 if ord > 0 else -1)
    if ord in (_math.inf, -_math.inf):
        return _core._matrix_norm(x, row, col, keepdims, "i", 1 if ord > 0 else -1)
    raise ValueError(f"invalid norm order {ord!r} for matrices")


def _singular_norm(x, row, col, keepdims, ord):
    """'nuc', 2, -2 of the matrices on axes (row, col): the sum, max or min of their
    singular values (those axes moved last for svdvals)."""
    rest = [i for i in range(x.ndim) if i not in (row, col)]
    s = svdvals(_permute_dims(x, tuple(rest) + (row, col)))
    r = _sum(s, axis=-1) if ord == "nuc" else _max(s, axis=-1) if ord == 2 else \
        _min(s, axis=-1)
    if keepdims:
        r = _expand_dims(_expand_dims(r, axis=min(row, col)), axis=max(row, col))
    return r


def norm(x, ord=None, axis=None, keepdims=False):
    """norm(x, ord=None, axis=None, keepdims=False)

    NumPy's ``linalg.norm``: with axis None, the 2-norm of the flattened array (ord
    None) or the matrix/vector norm by x's dimensions; an int axis gives vector norms,
    a pair of axes matrix norms."""
    _check(x, "norm")
    if axis is None:
        if ord is None:
            return _core._vector_norm(x, None, keepdims, 2.0)
        if x.ndim == 1:
            return vector_norm(x, keepdims=keepdims, ord=ord)
        if x.ndim == 2:
            return _matrix_norm(x, (0, 1), keepdims, ord)
        raise ValueError("Improper number of dimensions to norm.")
    if isinstance(axis, (tuple, list)):
        axes = _normalize_axis(tuple(axis), x.ndim)
        if len(axes) == 1:
            return vector_norm(x, axis=axes, keepdims=keepdims, ord=2 if ord is None else ord)
        if len(axes) == 2:
            return _matrix_norm(x, axes, keepdims, ord)
        raise ValueError("Improper number of dimensions to norm.")
    axis = _operator.index(axis)
    return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
