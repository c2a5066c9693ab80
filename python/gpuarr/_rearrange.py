"""The array API's rearranging and searching functions that gpuarr composes from its
own operations: meshgrid, tril, triu, repeat, roll, tile, unstack, take_along_axis,
count_nonzero, diff.

Each runs on its input's device with no host copy: index arrays come from
``arange`` on that device, masks from comparisons, gathers from ``take``. The one
host read is ``repeat`` with an array of counts, whose output length depends on the
data (a single scalar, as ``nonzero`` reads its count).
"""
import builtins
import operator

from . import _core
from ._core import Array, DeviceMismatchError
from ._creation import arange, zeros
from ._core import astype, floor_divide, not_equal, subtract, where
from ._manipulation import broadcast_shapes, broadcast_to, concat, reshape, take
from ._reduce import any, cumulative_sum, sum

__all__ = ["meshgrid", "tril", "triu", "repeat", "roll", "tile", "unstack",
           "take_along_axis", "count_nonzero", "diff"]


def _check(x, fn):
    if not isinstance(x, Array):
        raise TypeError(f"{fn}: expected a gpuarr.Array, got {type(x).__name__} "
                        "(make one with gpuarr.asarray)")


def _axis(axis, ndim, fn):
    """One axis, non-negative (the core's rule: AxisError when out of range)."""
    return _core.normalize_axis(operator.index(axis), ndim)[0]


def _along(ndim, axis, sl):
    """An index tuple that applies slice ``sl`` along ``axis`` only."""
    return (slice(None),) * axis + (sl,)


def meshgrid(*arrays, indexing="xy"):
    """meshgrid(*arrays, indexing='xy')

    Coordinate grids from 1-D arrays: with n inputs, n arrays of one shape. 'xy'
    (Cartesian) puts the first input along the columns, 'ij' (matrix) along the rows.
    The outputs are new arrays (not views)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    for a in arrays:
        _check(a, "meshgrid")
        if a.ndim != 1:
            raise ValueError(f"meshgrid takes 1-D arrays, got one of shape {a.shape}")
    if len({a.device for a in arrays}) > 1:
        raise DeviceMismatchError(
            f"meshgrid of arrays on {sorted({a.device for a in arrays})}: move them to "
            f"one device with .to(device)")
    sizes = [a.shape[0] for a in arrays]
    where_axis = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
        where_axis[0], where_axis[1] = 1, 0
    out = []
    for a, ax in zip(arrays, where_axis):
        shape = [1] * len(arrays)
        shape[ax] = a.shape[0]
        out.append(_core._copy(broadcast_to(reshape(a, tuple(shape)), tuple(sizes))))
    return out


def _triangle(x, k, keep_lower, fn):
    _check(x, fn)
    if x.ndim < 2:
        raise ValueError(f"{fn} needs at least 2 dimensions, got shape {x.shape}")
    k = operator.index(k)
    m, n = x.shape[-2:]
    rows = reshape(arange(m, device=x.device), (m, 1))
    cols = reshape(arange(n, device=x.device), (1, n))
    offset = subtract(cols, rows)
    mask = (offset <= k) if keep_lower else (offset >= k)
    return where(mask, x, zeros((), dtype=x.dtype, device=x.device))


def tril(x, /, *, k=0):
    """tril(x, /, *, k=0)

    The lower triangle of each matrix (last two axes): elements above the k-th
    diagonal set to zero (k > 0 keeps diagonals above the main one)."""
    return _triangle(x, k, True, "tril")


def triu(x, /, *, k=0):
    """triu(x, /, *, k=0)

    The upper triangle of each matrix (last two axes): elements below the k-th
    diagonal set to zero (k < 0 keeps diagonals below the main one)."""
    return _triangle(x, k, False, "triu")


def repeat(x, repeats, /, *, axis=None):
    """repeat(x, repeats, /, *, axis=None)

    Each element repeated ``repeats`` times along ``axis`` (None: of the flattened
    array). repeats is an int, or a 1-D integer array with one count per element
    along the axis (its total is read on the host: the output length depends on it)."""
    _check(x, "repeat")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = _axis(axis, x.ndim, "repeat")
    n = x.shape[axis]
    if isinstance(repeats, Array):
        if repeats.dtype.kind not in "iu" or repeats.ndim > 1:
            raise TypeError(f"repeat: repeats must be an int or a 1-D integer array, got "
                            f"{repeats.dtype.name} of shape {repeats.shape}")
        if repeats.device != x.device:
            raise DeviceMismatchError(f"repeat: x on {x.device!r}, repeats on "
                                      f"{repeats.device!r}; move one with .to(device)")
        counts = broadcast_to(astype(repeats, _core.int64), (n,))
        if n and builtins.bool(any(counts < 0)):
            raise ValueError("repeat: repeats must not be negative")
        ends = cumulative_sum(counts)
        total = int(ends[-1]) if n else 0
        # Output position j takes element i, the number of ends <= j: a comparison
        # of (total, n) and a row sum, all on the device.
        pos = reshape(arange(total, device=x.device), (total, 1))
        idx = sum(astype(reshape(ends, (1, n)) <= pos, _core.int64), axis=1)
        return take(x, idx, axis=axis)
    r = operator.index(repeats)
    if r < 0:
        raise ValueError(f"repeat: repeats must not be negative, got {r}")
    idx = floor_divide(arange(n * r, device=x.device), r) if r else \
        arange(0, device=x.device)
    return take(x, idx, axis=axis)


def roll(x, /, shift, *, axis=None):
    """roll(x, /, shift, *, axis=None)

    Elements shifted by ``shift`` positions along ``axis`` (None: the flattened
    array, then reshaped back), wrapping around. shift and axis may be tuples of the
    same length."""
    _check(x, "roll")
    if axis is None:
        flat = roll(reshape(x, (-1,)), builtins.sum(_ints(shift)), axis=0)
        return reshape(flat, x.shape)
    shifts, axes = _ints(shift), _ints(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    out = x
    for s, ax in zip(shifts, axes):
        ax = _axis(ax, x.ndim, "roll")
        n = x.shape[ax]
        s = s % n if n else 0
        if s:
            out = concat([out[_along(x.ndim, ax, slice(n - s, None))],
                          out[_along(x.ndim, ax, slice(0, n - s))]], axis=ax)
    return _core._copy(out) if out is x else out


def _ints(v):
    if isinstance(v, (tuple, list)):
        return tuple(operator.index(i) for i in v)
    return (operator.index(v),)


def tile(x, repetitions, /):
    """tile(x, repetitions, /)

    x repeated ``repetitions[i]`` times along each axis i (the shorter of x's shape
    and repetitions is padded with leading ones)."""
    _check(x, "tile")
    reps = _ints(repetitions)
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must not be negative, got {reps}")
    d = builtins.max(x.ndim, len(reps))
    shape = (1,) * (d - x.ndim) + x.shape
    reps = (1,) * (d - len(reps)) + reps
    # (r0, s0, r1, s1, ...) as a broadcast of (1, s0, 1, s1, ...), then merged pairs.
    spread = tuple(v for s in shape for v in (1, s))
    big = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    tiled = broadcast_to(reshape(x, spread), big)
    return reshape(_core._copy(tiled), tuple(r * s for r, s in zip(reps, shape)))


def unstack(x, /, *, axis=0):
    """unstack(x, /, *, axis=0)

    The arrays that ``stack(..., axis=axis)`` would join back into x: a tuple of
    views, one per index along ``axis``."""
    _check(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack needs at least one dimension")
    axis = _axis(axis, x.ndim, "unstack")
    return tuple(x[_along(x.ndim, axis, i)] for i in range(x.shape[axis]))


def take_along_axis(x, indices, /, *, axis=-1):
    """take_along_axis(x, indices, /, *, axis=-1)

    ``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along ``axis``: indices
    has x's number of dimensions and broadcasts with x on the other axes (as the
    output of argsort or argmax with keepdims=True). Negative indices count from the
    end."""
    _check(x, "take_along_axis")
    _check(indices, "take_along_axis")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take_along_axis: indices must be integers, got "
                        f"{indices.dtype.name}")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices have {indices.ndim} dimensions, x "
                         f"has {x.ndim}: they must have the same number")
    axis = _axis(axis, x.ndim, "take_along_axis")
    # One advanced index per axis (NumPy's own construction): the gather checks each
    # index against its own axis, so [[5]] on a 3x3 array is an IndexError, not a
    # read from the next row as a flat index into x would be.
    key = tuple(astype(indices, _core.int64) if d == axis else
                reshape(arange(x.shape[d], device=x.device),
                        (1,) * d + (x.shape[d],) + (1,) * (x.ndim - d - 1))
                for d in range(x.ndim))
    return x[key]


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """count_nonzero(x, /, *, axis=None, keepdims=False)

    The number of nonzero elements (True for booleans; nonzero real or imaginary part
    for complex) over ``axis``, as int64."""
    _check(x, "count_nonzero")
    return sum(astype(x != 0, _core.int64), axis=axis, keepdims=keepdims)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """diff(x, /, *, axis=-1, n=1, prepend=None, append=None)

    The n-th discrete difference along ``axis``: ``x[i+1] - x[i]``, applied n times
    (for booleans, ``x[i+1] != x[i]``). prepend / append are joined to x along the
    axis first."""
    _check(x, "diff")
    if x.ndim == 0:
        raise ValueError("diff needs at least one dimension")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    axis = _axis(axis, x.ndim, "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        parts = [p if isinstance(p, Array) else
                 _full_slab(p, x, axis) for p in parts]
        x = concat(parts, axis=axis)
    for _ in range(n):
        hi = x[_along(x.ndim, axis, slice(1, None))]
        lo = x[_along(x.ndim, axis, slice(None, -1))]
        x = not_equal(hi, lo) if x.dtype == _core.bool else subtract(hi, lo)
    return x if n else _core._copy(x)


def _full_slab(value, x, axis):
    shape = x.shape[:axis] + (1,) + x.shape[axis + 1:]
    return _core.full(shape, value, dtype=x.dtype, device=x.device)
