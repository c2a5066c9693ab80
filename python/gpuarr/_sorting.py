"""Sorting, searching and set functions of the array API: sort, argsort,
searchsorted, unique_all, unique_counts, unique_inverse, unique_values.

The sort itself is the backend's (csrc/ops/ga_sort.c: a stable merge sort on the CPU
and simulated GPUs, csrc/cpu/ga_cpu_sort.c; tiles in shared memory and merge passes by
rank on CUDA, csrc/cuda/kernels/k_sort.cu): nothing goes through the host. The
unique_* functions are built on it: sort, mark where a value differs from its left neighbour, then compact; only the
number of unique values is read back (the output's length depends on the data, as
with nonzero). NaNs sort last and, as the standard says, every NaN is its own unique
value (NaN != NaN).
"""
import builtins
import operator
from typing import NamedTuple

from . import _core
from ._core import Array, DeviceMismatchError
from ._manipulation import concat, moveaxis, reshape, take
from ._inspection import iinfo
from ._reduce import cumulative_sum

__all__ = ["sort", "argsort", "searchsorted", "unique_all", "unique_counts",
           "unique_inverse", "unique_values"]


def _check(x, fn):
    if not isinstance(x, Array):
        raise TypeError(f"{fn}: expected a gpuarr.Array, got {type(x).__name__} "
                        "(make one with gpuarr.asarray)")


def _sort(x, axis, descending, values, indices, fn):
    _check(x, fn)
    if axis is None:  # NumPy's spelling for "the flattened array"
        x, axis = reshape(x, (-1,)), -1
    if x.ndim == 0:
        raise ValueError(f"{fn} of a 0-d array: there is no axis to sort along")
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{fn}: axis {axis} is out of bounds for an array of "
                         f"dimension {x.ndim}")
    axis %= x.ndim
    last = x.ndim - 1
    moved = x if axis == last else moveaxis(x, axis, last)
    v, i = _core._sort(moved, builtins.bool(descending), values, indices)
    if axis != last:
        v = moveaxis(v, last, axis) if v is not None else None
        i = moveaxis(i, last, axis) if i is not None else None
    return v, i


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """sort(x, /, *, axis=-1, descending=False, stable=True)

    x sorted along ``axis`` (None: the flattened array), on x's device. The sort is
    always stable (equal elements keep their order, also when descending); NaNs go
    last; complex numbers sort by real part, then imaginary part."""
    return _sort(x, axis, descending, True, False, "sort")[0]


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """argsort(x, /, *, axis=-1, descending=False, stable=True)

    The int64 indices that sort x along ``axis`` (``take_along_axis(x, argsort(x),
    axis=-1)`` is ``sort(x)``): stable, NaNs last, on x's device."""
    return _sort(x, axis, descending, False, True, "argsort")[1]


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """searchsorted(x1, x2, /, *, side='left', sorter=None)

    For each element of x2, the index where it would be inserted into the 1-D
    ascending x1 to keep it sorted: before equal elements (side='left') or after
    them (side='right'). With ``sorter`` (argsort(x1)), x1 need not be sorted.
    Results are int64, on x1's device."""
    _check(x1, "searchsorted")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-D, got shape {x1.shape}")
    if sorter is not None:
        _check(sorter, "searchsorted")
        if sorter.shape != x1.shape:
            # NumPy's check: a shorter sorter would search a prefix of x1 in silence
            raise ValueError(f"searchsorted: sorter.size must equal x1.size, got "
                             f"sorter of shape {sorter.shape} for x1 of shape {x1.shape}")
        x1 = take(x1, sorter)
    if not isinstance(x2, Array):
        if (type(x2) is int and x1.dtype.kind in "iu"
                and not (iinfo(x1.dtype).min <= x2 <= iinfo(x1.dtype).max)):
            # NumPy 2 compares a Python int by value: one beyond x1's range goes
            # before (too small) or after (too large) every element
            return _core.full((), x1.shape[0] if x2 > 0 else 0, dtype=_core.int64,
                              device=x1.device)
        if isinstance(x2, (builtins.bool, int, float, complex)):
            x2 = _core.full((), x2, dtype=_core._ew_resolve("add", x1, x2)[1],
                            device=x1.device)
        else:
            raise TypeError(f"searchsorted: x2 must be a gpuarr.Array or a Python "
                            f"scalar, got {type(x2).__name__}")
    if x2.device != x1.device:
        raise DeviceMismatchError(f"searchsorted: x1 on {x1.device!r}, x2 on "
                                  f"{x2.device!r}; move one with .to(device)")
    dt = _core._ew_resolve("add", x1, x2)[1]
    if dt.kind == "b" and x1.dtype.kind != "b":
        dt = x1.dtype
    a = x1 if x1.dtype == dt else _core.astype(x1, dt)
    b = x2 if x2.dtype == dt else _core.astype(x2, dt)
    return _core._searchsorted(a, b, side == "right")


class UniqueAllResult(NamedTuple):
    """unique_all's result: values, indices, inverse_indices, counts."""

    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    """unique_counts's result: values, counts."""

    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    """unique_inverse's result: values, inverse_indices."""

    values: Array
    inverse_indices: Array


UniqueAllResult.__module__ = UniqueCountsResult.__module__ = "gpuarr"
UniqueInverseResult.__module__ = "gpuarr"


def _groups(x, fn):
    """(order, sorted values, first-of-group mask) of x flattened."""
    _check(x, fn)
    flat = reshape(x, (-1,))
    order = argsort(flat)
    v = take(flat, order)
    n = v.shape[0]
    first = _core.ones((n,), dtype=_core.bool, device=x.device)
    if n > 1:
        first[1:] = _core.not_equal(v[1:], v[:-1])  # NaN != NaN: each NaN its own group
    return order, v, first


def _counts(first, n, device):
    starts = _core._nonzero(first)[:, 0]
    ends = concat([starts[1:], _core.full((1,), n, dtype=_core.int64, device=device)])
    return starts, _core.subtract(ends, starts)


def _inverse(order, first, shape, device):
    group = _core.subtract(cumulative_sum(_core.astype(first, _core.int64)), 1)
    inv = _core.empty((order.shape[0],), dtype=_core.int64, device=device)
    inv[order] = group
    return reshape(inv, shape)


def unique_values(x, /):
    """unique_values(x, /)

    The distinct elements of x, sorted (1-D). Every NaN is distinct (NaN != NaN);
    -0.0 and 0.0 are one value."""
    _, v, first = _groups(x, "unique_values")
    return v[first]


def unique_counts(x, /):
    """unique_counts(x, /)

    (values, counts): the distinct elements of x, sorted, and how often each occurs
    (int64). Each NaN counts once."""
    _, v, first = _groups(x, "unique_counts")
    _, counts = _counts(first, v.shape[0], x.device)
    return UniqueCountsResult(v[first], counts)


def unique_inverse(x, /):
    """unique_inverse(x, /)

    (values, inverse_indices): the distinct elements, sorted, and for each element
    of x the index of its value (int64, x's shape): ``values[inverse_indices]`` is x."""
    order, v, first = _groups(x, "unique_inverse")
    return UniqueInverseResult(v[first], _inverse(order, first, x.shape, x.device))


def unique_all(x, /):
    """unique_all(x, /)

    (values, indices, inverse_indices, counts): the distinct elements, sorted; the
    flat index of each one's first occurrence in x; for each element of x the index
    of its value (x's shape); and how often each occurs."""
    order, v, first = _groups(x, "unique_all")
    starts, counts = _counts(first, v.shape[0], x.device)
    return UniqueAllResult(v[first], take(order, starts),
                           _inverse(order, first, x.shape, x.device), counts)
