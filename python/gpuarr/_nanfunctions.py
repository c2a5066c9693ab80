"""NumPy's NaN-aware reductions and scans (nansum, nanmean, nanmax, nanmedian, ...).

Each is written with gpuarr's own operations (isnan, where, the reductions, sort), so
it runs on the device of its input, every device kind alike, and returns an array
there; on the CPU device nanmedian and the nanmax / nanargmax family call NumPy's own
function on the array's memory (a zero-copy view: gpuarr has no selection and no
NaN-skipping reduction). Results, dtypes and the all-NaN rules are NumPy's:

* nansum / nanprod / nancumsum / nancumprod count a NaN as 0 (1 for the products);
  an all-NaN slice sums to 0.
* nanmax, nanmin, nanmedian of an all-NaN slice give NaN with ``RuntimeWarning:
  All-NaN slice encountered``; nanmean gives NaN with "Mean of empty slice";
  nanvar / nanstd give NaN with "Degrees of freedom <= 0 for slice.".
  nanargmax / nanargmin raise ValueError("All-NaN slice encountered").
* integer and bool input holds no NaN: the plain reduction runs (mean, var and std
  of integers are float64, as in NumPy).

Deciding whether to warn (or raise) reads one bool back from the device: a counted
device-to-host copy and a wait, the price of NumPy's rule, paid only by the functions
whose all-NaN slice has such a rule.
"""
import builtins
import warnings

import numpy as _np

from . import _core
from ._core import Array

__all__ = [
    "nansum", "nanprod", "nanmax", "nanmin", "nanargmax", "nanargmin", "nanmean",
    "nanvar", "nanstd", "nanmedian", "nanquantile", "nancumsum", "nancumprod",
]


def _ga():
    # the public functions: gpuarr/__init__ imports this module after them
    import gpuarr
    return gpuarr


def _check(a, name):
    if not isinstance(a, Array):
        raise TypeError(f"{name}() expects a gpuarr.Array, got {type(a).__name__}; make "
                        f"one with gpuarr.asarray(...) first")


def _inexact(a):
    return a.dtype.kind in ("f", "c")


def _replace_nan(a, value):
    """(a with its NaNs replaced by value, the NaN mask); mask None when a has none."""
    ga = _ga()
    if not _inexact(a):
        return a, None
    mask = ga.isnan(a)
    return ga.where(mask, ga.full((), value, dtype=a.dtype, device=a.device), a), mask


def _warn_if(cond, message):
    # one bool read back (see the module's docstring)
    if builtins.bool(_ga().any(cond)):
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def nansum(a, /, axis=None, dtype=None, keepdims=False):
    """nansum(a, /, axis=None, dtype=None, keepdims=False)

    Sum over ``axis`` counting NaN as 0 (NumPy's nansum); an all-NaN slice sums to
    0. Runs on a's device."""
    _check(a, "nansum")
    a, _ = _replace_nan(a, 0)
    return _ga().sum(a, axis=axis, dtype=dtype, keepdims=keepdims)


def nanprod(a, /, axis=None, dtype=None, keepdims=False):
    """nanprod(a, /, axis=None, dtype=None, keepdims=False)

    Product over ``axis`` counting NaN as 1 (NumPy's nanprod)."""
    _check(a, "nanprod")
    a, _ = _replace_nan(a, 1)
    return _ga().prod(a, axis=axis, dtype=dtype, keepdims=keepdims)


def _nan_constant(like):
    """A 0-d NaN of like's dtype made on like's device (no upload from the host)."""
    return _ga().full((), float("nan"), dtype=like.dtype, device=like.device)


def _axis_key(axis):
    return tuple(axis) if isinstance(axis, (list, tuple)) else axis


_FILLED: dict = {}  # (name, axis, keepdims) -> gpuarr.fuse'd NaN-to-fill reduction


def _filled_reduce(name, axis, keepdims):
    """NumPy's recipe for a slice holding NaN (each NaN becomes the value that never
    wins, -inf for max, +inf for min, then the plain reduction), fused by
    gpuarr.fuse: one pass and no full-size mask or filled copy over the whole array
    (the CPU and simulated GPUs), one kernel and the reduction on CUDA. One fused
    function per (name, axis, keepdims): fuse traces per signature of the arguments,
    and the axis is part of the program."""
    key = (name, _axis_key(axis), keepdims)
    f = _FILLED.get(key)
    if f is None:
        ga = _ga()
        fill = float("-inf") if name == "nanmax" else float("inf")
        op = "max" if name == "nanmax" else "min"

        def filled(x):
            return getattr(ga.where(ga.isnan(x), fill, x), op)(axis=axis,
                                                               keepdims=keepdims)
        if len(_FILLED) >= 64:
            _FILLED.clear()
        f = _FILLED[key] = ga.fuse(filled)
    return f


def _on_host(fn, a, axis, keepdims):
    """NumPy's fn on a CPU array's own memory (np.asarray of it is a zero-copy view),
    its result back as a gpuarr CPU array. Why on the CPU device: NumPy's nanmax is one
    pass of fmax.reduce, and gpuarr's reductions have no NaN-skipping kind yet, so the
    recipe below (its filled pass fused) stayed 7-9x NumPy's time on a slice holding a
    NaN (bench/README.md); NumPy's warnings and errors are the very rules to keep."""
    return _ga().asarray(_np.asarray(fn(_np.asarray(a), axis=axis, keepdims=keepdims)))


def _nan_extreme(a, name, axis, keepdims):
    """nanmax / nanmin. First the plain reduction, one pass in which a NaN wins: a
    slice without NaN has its answer already, and whether any slice has a NaN is the
    one bool read back that NumPy's all-NaN warning needs anyway. Only when some
    slice holds a NaN does the NaN-skipping recipe run (_filled_reduce); whether a
    slice is all NaN is asked of the array (a third pass) only where the recipe gave
    the fill value for a slice that holds a NaN, the one case where it can be. Before
    (issue 46), every call made the NaN mask, the filled copy, the reduction and an
    all() of the mask: about 20x NumPy's time on the CPU."""
    ga = _ga()
    _check(a, name)
    reduce = ga.max if name == "nanmax" else ga.min
    if not _inexact(a):
        return reduce(a, axis=axis, keepdims=keepdims)
    if a.dtype.kind == "c":
        raise TypeError(f"gpuarr.{name} takes real input (complex numbers have no "
                        f"order); use gpuarr.{name}(x.real) or x.numpy()")
    if a.device.type == "cpu":
        return _on_host(_np.nanmax if name == "nanmax" else _np.nanmin, a, axis, keepdims)
    r = reduce(a, axis=axis, keepdims=keepdims)
    if a.size == 0:
        return r
    has_nan = ga.isnan(r)
    if not builtins.bool(ga.any(has_nan)):
        return r
    r = _filled_reduce(name, axis, keepdims)(a)
    fill = float("-inf") if name == "nanmax" else float("inf")
    maybe_all_nan = ga.logical_and(has_nan, r == fill)
    if builtins.bool(ga.any(maybe_all_nan)):
        all_nan = ga.all(ga.isnan(a), axis=axis, keepdims=keepdims)
        _warn_if(all_nan, "All-NaN slice encountered")
        r = ga.where(all_nan, _nan_constant(r), r)
    return r


def nanmax(a, /, axis=None, keepdims=False):
    """nanmax(a, /, axis=None, keepdims=False)

    Largest element over ``axis`` ignoring NaN; an all-NaN slice gives NaN and a
    RuntimeWarning, as in NumPy."""
    return _nan_extreme(a, "nanmax", axis, keepdims)


def nanmin(a, /, axis=None, keepdims=False):
    """nanmin(a, /, axis=None, keepdims=False)

    Smallest element over ``axis`` ignoring NaN; an all-NaN slice gives NaN and a
    RuntimeWarning, as in NumPy."""
    return _nan_extreme(a, "nanmin", axis, keepdims)


def _at(a, idx, axis):
    """a's elements at the indices idx of an arg reduction with keepdims=True."""
    ga = _ga()
    if axis is None:
        return ga.take(ga.reshape(a, (-1,)), ga.reshape(idx, (-1,)))
    return ga.take_along_axis(a, idx, axis=axis)


def _nan_arg(a, name, axis, keepdims):
    """nanargmax / nanargmin, as _nan_extreme: the plain arg reduction (the first NaN
    wins there), the values at its indices gathered (one per slice), and NumPy's
    recipe (NaN becomes the value that never wins) only when one of them is NaN."""
    ga = _ga()
    _check(a, name)
    arg = ga.argmax if name == "nanargmax" else ga.argmin
    if not _inexact(a):
        return arg(a, axis=axis, keepdims=keepdims)
    if a.size == 0 or a.dtype.kind == "c":
        filled, mask = _replace_nan(a, float("-inf") if name == "nanargmax"
                                    else float("inf"))
        if builtins.bool(ga.any(ga.all(mask, axis=axis))):
            raise ValueError("All-NaN slice encountered")
        return arg(filled, axis=axis, keepdims=keepdims)
    if a.device.type == "cpu":
        return _on_host(_np.nanargmax if name == "nanargmax" else _np.nanargmin, a, axis,
                        keepdims)
    idx = arg(a, axis=axis, keepdims=True)
    if builtins.bool(ga.any(ga.isnan(_at(a, idx, axis)))):
        fill = float("-inf") if name == "nanargmax" else float("inf")
        filled = _filled_copy(fill)(a)
        idx = arg(filled, axis=axis, keepdims=True)
        # a slice whose winner is the fill value may be all NaN: ask the array
        if builtins.bool(ga.any(_at(filled, idx, axis) == fill)) and \
                builtins.bool(ga.any(ga.all(ga.isnan(a), axis=axis))):
            raise ValueError("All-NaN slice encountered")
    if keepdims:
        return idx
    return ga.reshape(idx, ()) if axis is None else ga.squeeze(idx, axis=axis)


_FILLED_COPY: dict = {}


def _filled_copy(fill):
    """x with its NaNs replaced by fill, one fused pass (no separate mask)."""
    f = _FILLED_COPY.get(fill)
    if f is None:
        ga = _ga()
        f = _FILLED_COPY[fill] = ga.fuse(lambda x: ga.where(ga.isnan(x), fill, x))
    return f


def nanargmax(a, /, axis=None, keepdims=False):
    """nanargmax(a, /, axis=None, keepdims=False)

    Index of the first largest element ignoring NaN; ValueError for an all-NaN
    slice (NumPy's rule; deciding it reads one bool back)."""
    return _nan_arg(a, "nanargmax", axis, keepdims)


def nanargmin(a, /, axis=None, keepdims=False):
    """nanargmin(a, /, axis=None, keepdims=False)

    Index of the first smallest element ignoring NaN; ValueError for an all-NaN
    slice."""
    return _nan_arg(a, "nanargmin", axis, keepdims)


def _count(mask, axis, keepdims, dtype):
    ga = _ga()
    return ga.astype(ga.sum(ga.logical_not(mask), axis=axis, keepdims=keepdims), dtype)


def nanmean(a, /, axis=None, dtype=None, keepdims=False):
    """nanmean(a, /, axis=None, dtype=None, keepdims=False)

    Mean over ``axis`` of the elements that are not NaN; an all-NaN slice gives NaN
    and ``RuntimeWarning: Mean of empty slice``. Float input keeps its dtype."""
    ga = _ga()
    _check(a, "nanmean")
    if not _inexact(a):
        return ga.mean(a, axis=axis, keepdims=keepdims, dtype=dtype)
    filled, mask = _replace_nan(a, 0)
    tot = ga.sum(filled, axis=axis, dtype=dtype, keepdims=keepdims)
    cnt = _count(mask, axis, keepdims, tot.dtype)
    _warn_if(cnt == 0, "Mean of empty slice")
    return tot / cnt


def nanvar(a, /, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    """nanvar(a, /, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None)

    Variance over ``axis`` of the elements that are not NaN:
    sum(|x - mean|**2) / (count - ddof). A slice with count <= ddof gives NaN and
    ``RuntimeWarning: Degrees of freedom <= 0 for slice.``; complex input gives a
    real result."""
    ga = _ga()
    _check(a, "nanvar")
    if correction is not None:
        if ddof not in (0, 0.0):
            raise ValueError("nanvar: give correction= or ddof= (NumPy's name), not both")
        ddof = correction
    if not _inexact(a):
        return ga.var(a, axis=axis, keepdims=keepdims, dtype=dtype, correction=ddof)
    filled, mask = _replace_nan(a, 0)
    tot = ga.sum(filled, axis=axis, dtype=dtype, keepdims=True)
    cnt = _count(mask, axis, True, tot.dtype)
    dev = ga.where(mask, ga.full((), 0, dtype=tot.dtype, device=a.device),
                   ga.astype(filled, tot.dtype) - tot / cnt)
    sq = dev * ga.conj(dev) if tot.dtype.kind == "c" else dev * dev
    sq = ga.real(sq) if sq.dtype.kind == "c" else sq
    var = ga.sum(sq, axis=axis, keepdims=keepdims)
    dof = ga.astype(_count(mask, axis, keepdims, var.dtype) - ddof, var.dtype)
    bad = dof <= 0
    _warn_if(bad, "Degrees of freedom <= 0 for slice.")
    return ga.where(bad, _nan_constant(var), var / dof)


def nanstd(a, /, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    """nanstd(a, /, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None)

    The square root of :func:`nanvar`, with its rules."""
    return _ga().sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                             correction=correction))


def _axes_last(a, axis):
    """a with the reduced axes moved last and merged into one (axis None: flat)."""
    ga = _ga()
    if axis is None:
        return ga.reshape(a, (-1,)), tuple(range(a.ndim))
    axes = _core.normalize_axis(axis, a.ndim)
    keep = [i for i in range(a.ndim) if i not in axes]
    moved = ga.permute_dims(a, tuple(keep) + tuple(axes))
    n = 1
    for i in axes:
        n *= a.shape[i]
    return ga.reshape(moved, tuple(a.shape[i] for i in keep) + (n,)), axes


def nanmedian(a, /, axis=None, keepdims=False):
    """nanmedian(a, /, axis=None, keepdims=False)

    Median over ``axis`` of the elements that are not NaN (the mean of the two middle
    ones for an even count), on a's device: on a GPU a sort along the axis puts the
    NaNs last and the middle of each slice's count of numbers is gathered; on the CPU
    NumPy's selection runs on the array's memory. An all-NaN slice
    gives NaN and ``RuntimeWarning: All-NaN slice encountered``."""
    ga = _ga()
    _check(a, "nanmedian")
    if a.dtype.kind == "c":
        raise TypeError("gpuarr.nanmedian takes real input; use x.numpy() for complex")
    if a.device.type == "cpu":
        # NumPy's selection (introselect) on the array's own host memory: gpuarr has no
        # selection kernel, and a full sort was 16x slower on 4M floats (7.4 s vs 0.46 s)
        return ga.asarray(_np.asarray(_np.nanmedian(_np.asarray(a), axis=axis,
                                                    keepdims=keepdims)))
    flat, axes = _axes_last(a, axis)
    if not _inexact(a):
        # NumPy's median of integers is float64
        flat = ga.astype(flat, ga.float64)
    srt = ga.sort(flat, axis=-1)
    n = ga.sum(ga.logical_not(ga.isnan(srt)), axis=-1, keepdims=True)
    lo = ga.where(n > 0, (n - 1) // 2, 0)
    hi = ga.where(n > 0, n // 2, 0)
    if flat.shape[-1] == 0:
        r = ga.full(flat.shape[:-1], float("nan"), dtype=flat.dtype, device=a.device)
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    else:
        two = ga.take_along_axis(srt, ga.concat([lo, hi], axis=-1), axis=-1)
        r = ga.mean(two, axis=-1)
        empty = n[..., 0] == 0
        _warn_if(empty, "All-NaN slice encountered")
        r = ga.where(empty, _nan_constant(r), r)
    if keepdims:
        shape = tuple(1 if i in axes else s for i, s in enumerate(a.shape))
        r = ga.reshape(r, shape)
    return r


def _lerp(a, b, t):
    """NumPy's linear interpolation between a and b at t in [0, 1] (numpy's _lerp:
    from b's side for t >= 0.5, so that t == 1 gives b exactly)"""
    ga = _ga()
    d = ga.subtract(b, a)
    return ga.where(t >= 0.5, ga.subtract(b, ga.multiply(d, ga.subtract(1, t))),
                    ga.add(a, ga.multiply(d, t)))


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False):
    """nanquantile(a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False)

    The q-th quantiles (q in [0, 1], a number or a sequence of them) over ``axis`` of
    the elements that are not NaN (NumPy's nanquantile; xarray's quantile calls it),
    on a's device. On a GPU a sort along the axis puts the NaNs last and the two
    neighbours of position q (count - 1) are gathered and interpolated ('linear', NumPy's
    default, the one method there); on the CPU NumPy's own function runs on the array's
    memory, with every method. A sequence q puts its axis first. An all-NaN slice gives
    NaN and ``RuntimeWarning: All-NaN slice encountered``."""
    ga = _ga()
    _check(a, "nanquantile")
    if out is not None:
        raise TypeError("gpuarr.nanquantile has no out=: assign the result instead")
    if a.dtype.kind == "c":
        raise TypeError("gpuarr.nanquantile takes real input; use x.numpy() for complex")
    # q is read on the host (it shapes the result): a GPU array raises the TypeError
    # that names the explicit copy
    qn = q if isinstance(q, (int, float)) else _np.asarray(q)
    qh = _np.asarray(qn, dtype=_np.float64)
    if qh.size and not builtins.bool(((qh >= 0) & (qh <= 1)).all()):
        raise ValueError("Quantiles must be in the range [0, 1]")
    if a.device.type == "cpu":
        # NumPy's selection on the array's own memory, as nanmedian (no copy)
        return ga.asarray(_np.asarray(_np.nanquantile(
            _np.asarray(a), qn, axis=axis, method=method, keepdims=keepdims)))
    if method != "linear":
        raise ValueError(f"gpuarr.nanquantile on a GPU has method='linear' only (got "
                         f"{method!r}); other methods run on the CPU device")
    flat, axes = _axes_last(a, axis)
    # NumPy's result dtype: a's and q's promoted (a Python float q is weak), float64
    # for integers
    dt = _np.result_type(_np.dtype(a.dtype) if _inexact(a) else _np.float64, qn)
    if dt != _np.dtype(a.dtype):
        flat = ga.astype(flat, ga.DType(dt))
    srt = ga.sort(flat, axis=-1)
    n = ga.sum(ga.logical_not(ga.isnan(srt)), axis=-1, keepdims=True)
    last = ga.astype(ga.where(n > 0, n - 1, 0), ga.float64)
    if flat.shape[-1] == 0:
        raise ValueError("gpuarr.nanquantile of an empty slice: NumPy gives NaN there "
                         "with a warning; check the axis")
    results = []
    for qv in qh.reshape(-1).tolist():
        pos = ga.multiply(last, qv)
        lo = ga.floor(pos)
        hi = ga.minimum(lo + 1, last)
        t = ga.astype(ga.subtract(pos, lo), flat.dtype)
        r = _lerp(ga.take_along_axis(srt, ga.astype(lo, ga.int64), axis=-1),
                  ga.take_along_axis(srt, ga.astype(hi, ga.int64), axis=-1), t)[..., 0]
        results.append(r)
    empty = n[..., 0] == 0
    _warn_if(empty, "All-NaN slice encountered")
    results = [ga.where(empty, _nan_constant(r), r) for r in results]
    if keepdims:
        shape = tuple(1 if i in axes else s for i, s in enumerate(a.shape))
        results = [ga.reshape(r, shape) for r in results]
    if qh.ndim == 0:
        return results[0]
    r = ga.stack(results, axis=0)
    return ga.reshape(r, qh.shape + tuple(r.shape[1:]))


def _nan_scan(a, name, fill, axis, dtype):
    ga = _ga()
    _check(a, name)
    a, _ = _replace_nan(a, fill)
    return (ga.cumsum if fill == 0 else ga.cumprod)(a, axis=axis, dtype=dtype)


def nancumsum(a, /, axis=None, dtype=None):
    """nancumsum(a, /, axis=None, dtype=None)

    Running sums counting NaN as 0 (NumPy's nancumsum; axis None: of the flattened
    array)."""
    return _nan_scan(a, "nancumsum", 0, axis, dtype)


def nancumprod(a, /, axis=None, dtype=None):
    """nancumprod(a, /, axis=None, dtype=None)

    Running products counting NaN as 1 (NumPy's nancumprod)."""
    return _nan_scan(a, "nancumprod", 1, axis, dtype)
