"""Shape manipulation: views (reshape, permute_dims, squeeze, flip, broadcast_to, ...),
joining (concat, stack), nonzero and take.

Views share memory with their input (``y._storage_id == x._storage_id``): writing
through one is seen by the other. Functions that need new memory (concat, stack,
take, copy, reshape of a layout that no strides can describe) allocate on the
inputs' device; arrays on different devices raise DeviceMismatchError.
"""
import operator

from . import _core
from ._core import Array
from ._creation import asarray as _asarray
from ._methods import method, prop

__all__ = [
    "reshape", "permute_dims", "transpose", "matrix_transpose", "squeeze", "expand_dims",
    "flip", "moveaxis", "swapaxes", "ravel", "broadcast_to", "broadcast_arrays",
    "broadcast_shapes", "concat", "concatenate", "stack", "copy", "nonzero", "take",
]


def _check(x, fn):
    if not isinstance(x, Array):
        raise TypeError(f"{fn}: expected a gpuarr.Array, got {type(x).__name__} "
                        "(make one with gpuarr.asarray)")


def _axes(axis):
    if isinstance(axis, (tuple, list)):
        return tuple(operator.index(a) for a in axis)
    return (operator.index(axis),)


def _norm_axis(axis, ndim):
    """One axis, non-negative (the core's rule: AxisError when out of range)."""
    return _core.normalize_axis(operator.index(axis), ndim)[0]


def reshape(x, /, shape, *, copy=None):
    """reshape(x, /, shape, *, copy=None)

    ``x`` with a new shape (one entry may be -1, inferred). A view when the strides
    allow it, even for some non-contiguous inputs; otherwise a copy. ``copy=True``
    always copies, ``copy=False`` raises ValueError instead of copying.
    """
    _check(x, "reshape")
    return _core._reshape(x, shape, copy)


@method("reshape")
def _reshape_method(self, *shape, copy=None):
    """reshape(*shape, copy=None)

    ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``: see :func:`gpuarr.reshape`.
    """
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return _core._reshape(self, shape, copy)


def permute_dims(x, /, axes):
    """permute_dims(x, /, axes)

    A view of ``x`` with its axes reordered: result axis i is ``x``'s axis axes[i].
    """
    _check(x, "permute_dims")
    return _core._permute_dims(x, axes)


def transpose(x, /, axes=None):
    """transpose(x, /, axes=None)

    NumPy's name: ``permute_dims``, or the axes reversed when ``axes`` is None.
    """
    _check(x, "transpose")
    if axes is None:
        axes = tuple(range(x.ndim - 1, -1, -1))
    return _core._permute_dims(x, axes)


@method("transpose")
def _transpose_method(self, *axes):
    """transpose(*axes)

    ``x.transpose()`` reverses the axes; ``x.transpose(1, 0, 2)`` permutes them.
    """
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return transpose(self, axes if axes else None)


@prop("T")
def _T(self):
    """The array with its axes reversed (a view), as NumPy's ``x.T``."""
    return _core._permute_dims(self, tuple(range(self.ndim - 1, -1, -1)))


def matrix_transpose(x, /):
    """matrix_transpose(x, /)

    A view with the last two axes swapped (a stack of transposed matrices).
    """
    _check(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError("matrix_transpose needs an array with at least 2 dimensions, got "
                         f"{x.ndim}")
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return _core._permute_dims(x, axes)


@prop("mT")
def _mT(self):
    """The last two axes swapped (a view): ``matrix_transpose(x)``."""
    return matrix_transpose(self)


def squeeze(x, /, axis=None):
    """squeeze(x, /, axis=None)

    A view without the length-1 axes ``axis`` (an int or a tuple; None: all of them).
    ValueError when a chosen axis does not have length 1.
    """
    _check(x, "squeeze")
    return _core._squeeze(x, None if axis is None else _axes(axis))


@method("squeeze")
def _squeeze_method(self, axis=None):
    """squeeze(axis=None)

    See :func:`gpuarr.squeeze`.
    """
    return squeeze(self, axis)


def expand_dims(x, /, axis=0):
    """expand_dims(x, /, axis=0)

    A view with a new length-1 axis at position ``axis`` (an int or a tuple) of the
    result.
    """
    _check(x, "expand_dims")
    return _core._expand_dims(x, _axes(axis))


def flip(x, /, *, axis=None):
    """flip(x, /, *, axis=None)

    A view with the order of elements reversed along ``axis`` (an int, a tuple, or
    None for all axes). No data moves: the view has negative strides.
    """
    _check(x, "flip")
    return _core._flip(x, None if axis is None else _axes(axis))


def moveaxis(x, source, destination, /):
    """moveaxis(x, source, destination, /)

    A view with the axes ``source`` moved to positions ``destination`` (ints or
    tuples of the same length); the other axes keep their order.
    """
    _check(x, "moveaxis")
    src = [_norm_axis(a, x.ndim) for a in _axes(source)]
    dst = [_norm_axis(a, x.ndim) for a in _axes(destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the "
                         "same number of elements")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis: repeated axis")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _core._permute_dims(x, order)


def swapaxes(x, axis1, axis2, /):
    """swapaxes(x, axis1, axis2, /)

    A view with two axes exchanged.
    """
    _check(x, "swapaxes")
    a, b = _norm_axis(axis1, x.ndim), _norm_axis(axis2, x.ndim)
    order = list(range(x.ndim))
    order[a], order[b] = order[b], order[a]
    return _core._permute_dims(x, order)


@method("swapaxes")
def _swapaxes_method(self, axis1, axis2):
    """swapaxes(axis1, axis2)

    See :func:`gpuarr.swapaxes`.
    """
    return swapaxes(self, axis1, axis2)


def ravel(x, /):
    """ravel(x, /)

    ``x`` as 1-d in C order: a view when ``x`` is C-contiguous, else a copy (as
    NumPy's ravel; ``reshape(x, (-1,))`` returns a view whenever the strides allow,
    so writing into it may write into x).
    """
    _check(x, "ravel")
    return _core._reshape(x, (-1,), None if x.is_contiguous else True)


@method("ravel")
def _ravel_method(self):
    """ravel()

    See :func:`gpuarr.ravel`.
    """
    return ravel(self)


@method("flatten")
def _flatten_method(self):
    """flatten()

    A new 1-d copy of the elements in C order (always a copy, as in NumPy).
    """
    return _core._reshape(self, (-1,), True)


def broadcast_shapes(*shapes):
    """broadcast_shapes(*shapes)

    The shape that arrays of the given shapes broadcast to (ValueError if none).
    """
    return _core.broadcast_shapes(*shapes)


def broadcast_to(x, /, shape):
    """broadcast_to(x, /, shape)

    A view of ``x`` with ``shape`` (stride 0 along the broadcast axes; do not write
    through it).
    """
    _check(x, "broadcast_to")
    return _core._broadcast_to(x, shape)


def broadcast_arrays(*arrays):
    """broadcast_arrays(*arrays)

    The arrays as views broadcast to their common shape (a list). They must share a
    device.
    """
    for a in arrays:
        _check(a, "broadcast_arrays")
    for a in arrays[1:]:
        if a.device != arrays[0].device:
            raise _core.DeviceMismatchError(
                f"broadcast_arrays: the arrays live on different devices, "
                f"{arrays[0].device} and {a.device}; move one explicitly with .to(device)")
    shape = broadcast_shapes(*[a.shape for a in arrays])
    return [_core._broadcast_to(a, shape) for a in arrays]


def concat(arrays, /, *, axis=0):
    """concat(arrays, /, *, axis=0)

    A new array joining ``arrays`` (same device, same shape except along ``axis``)
    along ``axis``, with the promoted dtype. ``axis=None`` joins them flattened.
    """
    arrays = list(arrays)
    for a in arrays:
        _check(a, "concat")
    if axis is None:
        arrays = [_core._reshape(a, (-1,), None) for a in arrays]
        axis = 0
    return _core._concat(arrays, operator.index(axis))


def concatenate(arrays, axis=0):
    """concatenate(arrays, axis=0)

    NumPy's name for :func:`concat`.
    """
    return concat(arrays, axis=axis)


def stack(arrays, /, *, axis=0):
    """stack(arrays, /, *, axis=0)

    A new array joining same-shape ``arrays`` along a new axis ``axis`` of the result.
    """
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    for a in arrays:
        _check(a, "stack")
    shape = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise ValueError(f"all input arrays must have the same shape (array 0 has "
                             f"shape {shape}, array {i} has {a.shape})")
    ax = _norm_axis(axis, len(shape) + 1)
    return _core._concat([_core._expand_dims(a, (ax,)) for a in arrays], ax)


def copy(x, /):
    """copy(x, /)

    A new C-contiguous copy of ``x`` on its device (never shares memory).
    """
    _check(x, "copy")
    return _core._copy(x)


@method("copy")
def _copy_method(self):
    """copy()

    A new C-contiguous copy on the same device.
    """
    return _core._copy(self)


def nonzero(x, /):
    """nonzero(x, /)

    A tuple of int64 arrays, one per axis, with the coordinates of the nonzero
    elements in C order (on x's device). On a GPU the count is one small
    device-to-host read.
    """
    _check(x, "nonzero")
    coords = _core._nonzero(x)
    return tuple(coords[:, j] for j in range(x.ndim))


@method("nonzero")
def _nonzero_method(self):
    """nonzero()

    See :func:`gpuarr.nonzero`.
    """
    return nonzero(self)


def take(x, indices, /, *, axis=None):
    """take(x, indices, /, *, axis=None)

    The elements of ``x`` at integer ``indices`` (a gpuarr array on x's device) along
    ``axis``; with ``axis=None``, of ``x`` flattened. Negative indices count from the
    end; out-of-range ones raise IndexError.
    """
    _check(x, "take")
    if not isinstance(indices, Array):
        if isinstance(indices, (list, tuple, int)):
            # host data: the core checks it on the host before its (counted) upload,
            # so an out-of-range index raises here, not at the next synchronize
            return _core._take(x, _asarray(indices, device=_core.cpu()), axis, True)
        raise TypeError("take: indices must be a gpuarr array (or a list of ints)")
    return _core._take(x, indices, axis)


@method("take")
def _take_method(self, indices, axis=None):
    """take(indices, axis=None)

    See :func:`gpuarr.take`.
    """
    return take(self, indices, axis=axis)


@method("__iter__")
def _iter(self):
    """__iter__()

    Iterate over the first axis, as NumPy does: each item is a view ``x[i]`` (a 0-d
    array for a 1-d ``x``), still on ``x``'s device."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    for i in range(self.shape[0]):
        yield self[i]


__all__ += ["ArrayFlags"]


class ArrayFlags:
    """ArrayFlags: ``x.flags``, NumPy's spelling of an array's memory-layout flags.

    ``writeable`` says whether the elements may be written through this array: False
    for broadcast views (``broadcast_to``, ``broadcast_arrays``), views of read-only
    NumPy arrays, read-only DLPack imports and views of any read-only array. Writing
    through them raises ``ValueError: assignment destination is read-only``. Setting it
    to False makes this array read-only; to True, only where the memory is writable and
    the array is not a broadcast view. ``flags["WRITEABLE"]`` reads it too.
    """

    __slots__ = ("_array",)

    def __init__(self, array):
        """__init__(array)

        The flags of ``array`` (use ``array.flags``).
        """
        self._array = array

    @property
    def writeable(self):
        """May the elements be written through the array?"""
        return self._array._writeable

    @writeable.setter
    def writeable(self, value):
        self._array._writeable = value

    @property
    def c_contiguous(self):
        """The elements are contiguous in C (row-major) order."""
        return self._array.is_contiguous

    @property
    def f_contiguous(self):
        """The elements are contiguous in Fortran (column-major) order."""
        return self._array.T.is_contiguous

    _KEYS = {"WRITEABLE": "writeable", "W": "writeable", "C_CONTIGUOUS": "c_contiguous",
             "C": "c_contiguous", "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous"}

    def __getitem__(self, key):
        """__getitem__(key)

        A flag by NumPy's name: "WRITEABLE" ("W"), "C_CONTIGUOUS" ("C"),
        "F_CONTIGUOUS" ("F").
        """
        return getattr(self, self._KEYS[key])

    def __setitem__(self, key, value):
        """__setitem__(key, value)

        ``flags["WRITEABLE"] = value``: the same as ``flags.writeable = value``.
        """
        if self._KEYS.get(key) != "writeable":
            raise KeyError(f"only the WRITEABLE flag can be set, not {key!r}")
        self.writeable = value

    def __repr__(self):
        """__repr__()

        The flags as NumPy prints them.
        """
        return (f"  C_CONTIGUOUS : {self.c_contiguous}\n  F_CONTIGUOUS : {self.f_contiguous}"
                f"\n  WRITEABLE : {self.writeable}")


@prop("flags")
def _flags(self):
    """Memory-layout flags (an ArrayFlags): ``x.flags.writeable`` as in NumPy."""
    return ArrayFlags(self)
