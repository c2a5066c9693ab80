"""NumPy functions on gpuarr arrays (NumPy's __array_ufunc__ / __array_function__
protocols, NEP 13 and NEP 18, as CuPy implements them).

``np.exp(x)``, ``np.add(x, y)``, ``np.sum(x, axis=0)``, ``np.concatenate([x, y])``,
``np.linalg.norm(x)``, ``np.fft.fft(x)`` run gpuarr's function on x's device and
return a gpuarr array.
The rules are gpuarr's own:

* a NumPy function that gpuarr lacks runs through NumPy when every array of the
  call lives on the CPU device: NumPy gets the zero-copy host views of the arrays
  (host memory is the CPU device's memory, so nothing moves), and the arrays it
  returns come back as gpuarr arrays on the CPU, sharing NumPy's memory. With an
  array on a GPU it raises TypeError naming the function (and gpuarr's spelling
  where one exists) and the explicit copy ``x.numpy()``: nothing is copied to the
  host behind the user's back;
* arrays on different devices raise DeviceMismatchError;
* NumPy arrays (and lists) beside gpuarr arrays follow the operators' rule: beside a
  CPU array they join it (host memory is the CPU device's memory, so nothing moves);
  beside a GPU array they raise DeviceMismatchError (move them with
  ``gpuarr.asarray(a, device=x.device)``);
* a NumPy argument gpuarr's function does not have (``out=``, ``where=``,
  ``order='F'``) raises TypeError, unless it is passed at NumPy's default value.
"""
import builtins
import inspect

import numpy as np

from . import _core
from ._core import Array, DeviceMismatchError
from ._methods import method

_P = inspect.Parameter

# NumPy names whose gpuarr spelling differs (used to call it, or to say it).
_RENAMES = {
    "amax": "max", "amin": "min", "rint": "round", "concat": "concatenate",
    "true_divide": "divide", "fabs": "abs",
}

# NumPy ufuncs with only float loops whose gpuarr stand-in (above) keeps an integer
# dtype: np.rint and np.fabs of an int8 array are float16, of an int32 array float64
# (gpuarr.round and gpuarr.abs of ints are ints, as np.round and np.abs are). Such a
# call runs in the loop dtype NumPy itself resolves (ufunc.resolve_dtypes).
_FLOAT_ONLY_UFUNCS = ("rint", "fabs")

# What to suggest for NumPy functions gpuarr lacks but can do another way.
_HINTS = {
    "around": "x.round(decimals)",
    "hstack": "gpuarr.concat(arrays, axis=-1)",
    "vstack": "gpuarr.concat(arrays, axis=0)",
    "inner": "gpuarr.vecdot(x1, x2)",
    "allclose": "gpuarr.testing.assert_allclose(x, y) or gpuarr.all(abs(x - y) <= tol)",
    "array_equal": "gpuarr.all(x == y)",
    "unique": "gpuarr.unique_values(x) (or unique_counts / unique_inverse / unique_all)",
    "einsum": "gpuarr.tensordot or gpuarr.matmul",
}

# ufunc.reduce / ufunc.accumulate as gpuarr's reductions and scans.
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
           "logical_and": "all", "logical_or": "any"}
_ACCUMULATE = {"add": "cumulative_sum", "multiply": "cumulative_prod"}


def _gpuarr():
    # NumPy's functions map to gpuarr's by name in the public namespace, which
    # gpuarr/__init__ is still filling when it imports this module
    import gpuarr
    return gpuarr


def _namespace(module):
    ga = _gpuarr()
    if module in ("numpy", "numpy.core.multiarray", "numpy._core.multiarray",
                  "numpy._core.fromnumeric", "numpy._core.numeric"):
        return ga, "gpuarr"
    if module in ("numpy.linalg", "numpy.linalg._linalg", "numpy.linalg.linalg"):
        return ga.linalg, "gpuarr.linalg"
    if module == "numpy.fft":
        return ga.fft, "gpuarr.fft"
    return None, None


def _numpy_name(func):
    mod = getattr(func, "__module__", None) or "numpy"
    mod = "numpy.linalg" if mod.startswith("numpy.linalg") else \
        "numpy.fft" if mod.startswith("numpy.fft") else "numpy"
    return mod, func.__name__


class _Missing(TypeError):
    """A NumPy function gpuarr lacks (on the CPU device it runs through NumPy)."""


def _missing(qualname, gpuarr_spelling=None):
    hint = f" (gpuarr's spelling: {gpuarr_spelling})" if gpuarr_spelling else ""
    return _Missing(
        f"{qualname} is not implemented for gpuarr arrays on a GPU{hint}. gpuarr never "
        f"copies to the host behind your back: to run NumPy's function, copy explicitly "
        f"with x.numpy() and call {qualname} on that (on the CPU device it runs "
        f"through NumPy on the arrays' host memory)")


# --- NumPy's own function on the CPU device's arrays ---------------------------------

def _to_host_view(obj):
    """gpuarr arrays in (nested lists and tuples of) arguments as NumPy views of the
    same memory: the CPU device's arrays live in host memory, so nothing is copied."""
    if isinstance(obj, Array):
        return np.asarray(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_host_view(i) for i in obj)
    return obj


def _from_host(obj):
    """NumPy's results as gpuarr arrays on the CPU (sharing their memory); results of
    dtypes gpuarr has not (strings, objects, datetimes) and scalars stay NumPy's."""
    if isinstance(obj, np.ndarray):
        try:
            return _gpuarr().asarray(obj)
        except (TypeError, ValueError):
            return obj
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
        return type(obj)(_from_host(i) for i in obj)
    return obj


def _on_cpu(dev):
    return dev is None or dev.type == "cpu"


def _host_call(fn, args, kwargs):
    args = tuple(_to_host_view(a) for a in args)
    kwargs = {k: _to_host_view(v) for k, v in kwargs.items()}
    return _from_host(fn(*args, **kwargs))


# --- operands: NumPy data beside gpuarr arrays ------------------------------------------

def _walk(obj, depth=0):
    yield obj
    if depth < 2 and isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _walk(item, depth + 1)


def _device_of(args, kwargs):
    dev = None
    for a in list(args) + list(kwargs.values()):
        for item in _walk(a):
            if isinstance(item, Array):
                if dev is not None and item.device != dev:
                    raise DeviceMismatchError(
                        f"arrays on {dev!r} and {item.device!r} in one NumPy call: move "
                        f"one with .to(device) first")
                dev = item.device
    return dev


def _host_to(obj, dev, depth=0):
    """NumPy arrays among the arguments, made gpuarr arrays on the CPU (their home);
    beside GPU arrays, DeviceMismatchError as the operators give."""
    if isinstance(obj, np.ndarray):
        if dev is not None and dev.type != "cpu":
            raise DeviceMismatchError(
                f"cannot combine numpy.ndarray (data in host memory) with an array on "
                f"{dev!r}: gpuarr never copies implicitly. Move the data first with "
                f"gpuarr.asarray(data, device=x.device)")
        return _gpuarr().asarray(obj)
    if depth < 1 and isinstance(obj, (list, tuple)) and builtins.any(
            isinstance(i, (Array, np.ndarray)) for i in obj):
        return type(obj)(_host_to(i, dev, depth + 1) for i in obj)
    return obj


# --- __array_function__: NumPy's signature bound, then gpuarr's called -------------------

def _is_default(value, default):
    if value is default:
        return True
    try:
        return type(value) is type(default) and builtins.bool(value == default)
    except Exception:  # an array compared with a default
        return False


def _params(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None


def _translate(np_func, ga_func, ga_name, args, kwargs):
    """Bind the call to NumPy's signature; pass each argument to gpuarr's function by
    position (leading positional-only parameters) or by name; drop NumPy's arguments
    gpuarr lacks when they hold NumPy's default; refuse the others."""
    np_params = _params(np_func)
    ga_params = _params(ga_func)
    if np_params is None or ga_params is None:
        return args, kwargs
    bound = inspect.Signature(list(np_params.values())).bind(*args, **kwargs)
    ga_list = list(ga_params.values())
    n_pos = builtins.sum(p.kind is _P.POSITIONAL_ONLY for p in ga_list)
    ga_var = builtins.any(p.kind is _P.VAR_POSITIONAL for p in ga_list)
    ga_named = {p.name for p in ga_list if p.kind in (_P.POSITIONAL_OR_KEYWORD,
                                                      _P.KEYWORD_ONLY)}
    order = list(np_params)
    pos, kw = {}, {}
    for name, value in bound.arguments.items():
        p = np_params[name]
        if p.kind is _P.VAR_POSITIONAL and ga_var:
            pos.update({n_pos + i: v for i, v in enumerate(value)})
            continue
        if p.kind is _P.VAR_KEYWORD:
            if value:
                raise TypeError(f"{ga_name} does not take {sorted(value)} (NumPy's "
                                f"{np_func.__name__} passes them on)")
            continue
        i = order.index(name)
        if i < n_pos and p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
            pos[i] = value
        elif name in ga_named:
            kw[name] = value
        elif not _is_default(value, p.default):
            shown = f"<{type(value).__name__}>" if isinstance(value, (Array, np.ndarray)) \
                else repr(value)
            raise TypeError(f"{ga_name} has no parameter {name!r} (given {name}={shown} "
                            f"to numpy.{np_func.__name__}); drop it, or run NumPy on an "
                            f"explicit copy x.numpy()")
    return [pos[i] for i in sorted(pos)], kw


def _np_where(condition, x=None, y=None, /):
    ga = _gpuarr()
    if x is None and y is None:
        return ga.nonzero(condition)
    return ga.where(condition, x, y)


def _np_round(a, decimals=0, out=None):
    if out is not None:
        raise TypeError("gpuarr's round has no out= for decimals; use x.round(decimals)")
    return a.round(decimals)


def _np_clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,
             max=np._NoValue, **kwargs):
    if out is not None or kwargs:
        raise TypeError("gpuarr.clip has no out= or other NumPy arguments")
    lo = a_min if a_min is not np._NoValue else min
    hi = a_max if a_max is not np._NoValue else max
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    return _gpuarr().clip(a, lo, hi)


def _np_dot(a, b, out=None):
    ga = _gpuarr()
    if out is not None:
        raise TypeError("gpuarr.matmul has no out=; assign the result instead")
    if a.ndim == 0 or b.ndim == 0:
        return ga.multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return ga.matmul(a, b)
    raise _missing("numpy.dot of arrays with more than 2 dimensions",
                   "gpuarr.tensordot(a, b, axes=([-1], [-2])) or gpuarr.matmul")


def _np_size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


def _np_matrix_axes(name, a, axis1, axis2):
    if a.ndim != 2 or (axis1 % 2, axis2 % 2) != (0, 1):
        raise _missing(f"numpy.{name} with axes ({axis1}, {axis2}) of a {a.ndim}-d array",
                       f"gpuarr.linalg.{name}, which works on the last two axes "
                       f"(gpuarr.moveaxis them there)")


def _np_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _np_matrix_axes("trace", a, axis1, axis2)
    if out is not None:
        raise TypeError("gpuarr.linalg.trace has no out=; assign the result instead")
    return _gpuarr().linalg.trace(a, offset=offset, dtype=dtype)


def _np_diagonal(a, offset=0, axis1=0, axis2=1):
    _np_matrix_axes("diagonal", a, axis1, axis2)
    return _gpuarr().linalg.diagonal(a, offset=offset)


def _np_outer(a, b, out=None):
    if out is not None:
        raise TypeError("gpuarr.linalg.outer has no out=; assign the result instead")
    ga = _gpuarr()
    # numpy.outer flattens its inputs (the array API's linalg.outer takes 1-D only)
    a, b = (ga.reshape(v, (-1,)) if isinstance(v, Array) and v.ndim != 1 else v
            for v in (a, b))
    return ga.linalg.outer(a, b)


def _like(name, a, fill, dtype, order, shape, device):
    """numpy.zeros_like & co. with NumPy's signature: shape= (which Dask passes to make
    a chunk's small "meta" array) picks the shape; the result is on a's device."""
    ga = _gpuarr()
    if order not in ("K", "C", "A") or device not in (None, a.device):
        raise TypeError(f"gpuarr.{name}_like makes C-order arrays on a's device; drop "
                        f"order={order!r} / device={device!r}")
    fill = () if fill is None else (fill,)
    if shape is None:
        return getattr(ga, f"{name}_like")(a, *fill, dtype=dtype)
    dtype = a.dtype if dtype is None else dtype
    return getattr(ga, name)(shape, *fill, dtype=dtype, device=a.device)


def _np_array_like(name, obj, dtype, copy, order, ndmin, device):
    """numpy.array / numpy.asarray with like=x (Dask makes its empty chunks this way):
    a gpuarr array on x's device (Python data and NumPy arrays go there as with
    gpuarr.asarray(data, device=x.device), a counted copy), ndmin leading axes of
    length 1 added as NumPy does."""
    ga = _gpuarr()
    if order not in (None, "K", "A", "C"):
        raise TypeError(f"numpy.{name}(..., like=<gpuarr.Array>) makes C-order arrays; "
                        f"drop order={order!r}")
    x = ga.asarray(obj, dtype=dtype, device=device, copy=copy)
    if x.ndim < ndmin:
        x = ga.reshape(x, (1,) * (ndmin - x.ndim) + tuple(x.shape))
    return x


def _np_array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0,
              like=None):
    return _np_array_like("array", object, dtype, copy, order, ndmin,
                          like.device if isinstance(like, Array) else None)


def _np_asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    if device is None and isinstance(like, Array):
        device = like.device
    return _np_array_like("asarray", a, dtype, copy, order, 0, device)


def _np_zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like("zeros", a, None, dtype, order, shape, device)


def _np_ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like("ones", a, None, dtype, order, shape, device)


def _np_empty_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _like("empty", a, None, dtype, order, shape, device)


def _np_full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                  device=None):
    return _like("full", a, fill_value, dtype, order, shape, device)


def _np_unravel_index(indices, shape, order="C"):
    """numpy.unravel_index on the index array's device (Dask's argmax calls it on a
    chunk's 0-d result). Out-of-range indices raise ValueError as in NumPy: checking
    reads one bool back, a wait that only this rarely used function pays."""
    ga = _gpuarr()
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if order != "C":
        raise TypeError("gpuarr's unravel_index supports order='C' only")
    size = 1
    for n in shape:
        size *= n
    idx = ga.astype(indices, ga.int64)
    if builtins.bool(ga.any((idx < 0) | (idx >= size))):
        raise ValueError(f"an index is out of bounds for an array of size {size}")
    out = []
    for n in reversed(shape):
        out.append(idx % n)
        idx = idx // n
    return tuple(reversed(out))


def _np_ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """numpy.ravel_multi_index on the indices' device (mode 'raise', C order)."""
    ga = _gpuarr()
    if mode != "raise" or order != "C":
        raise TypeError("gpuarr's ravel_multi_index supports mode='raise', order='C'")
    dims = tuple(dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"{len(multi_index)} indices for {len(dims)} dimensions")
    dev = _device_of([multi_index], {})
    flat = None
    for i, n in zip(multi_index, dims):
        i = ga.astype(ga.asarray(i, device=dev), ga.int64)
        if builtins.bool(ga.any((i < 0) | (i >= n))):
            raise ValueError("invalid entry in coordinates array")
        flat = i if flat is None else flat * n + i
    return flat


def _np_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    ga = _gpuarr()
    if hermitian:
        raise TypeError("gpuarr.linalg.svd has no hermitian=; drop it (the general SVD "
                        "gives the same values)")
    if not compute_uv:
        return ga.linalg.svdvals(a)
    return ga.linalg.svd(a, full_matrices=full_matrices)


_SPECIAL = {
    ("numpy.linalg", "svd"): _np_svd,
    ("numpy", "unravel_index"): _np_unravel_index,
    ("numpy", "ravel_multi_index"): _np_ravel_multi_index,
    ("numpy", "array"): _np_array,
    ("numpy", "asarray"): _np_asarray,
    ("numpy", "zeros_like"): _np_zeros_like,
    ("numpy", "ones_like"): _np_ones_like,
    ("numpy", "empty_like"): _np_empty_like,
    ("numpy", "full_like"): _np_full_like,
    ("numpy", "trace"): _np_trace,
    ("numpy", "diagonal"): _np_diagonal,
    ("numpy", "outer"): _np_outer,
    ("numpy", "where"): _np_where,
    ("numpy", "round"): _np_round,
    ("numpy", "around"): _np_round,
    ("numpy", "clip"): _np_clip,
    ("numpy", "dot"): _np_dot,
    ("numpy", "shape"): lambda a: a.shape,
    ("numpy", "ndim"): lambda a: a.ndim,
    ("numpy", "size"): _np_size,
}


def _lookup(func):
    mod, name = _numpy_name(func)
    special = _SPECIAL.get((mod, name))
    if special is not None:
        return special, None
    ns, ns_name = _namespace(mod)
    ga_name = _RENAMES.get(name, name)
    fn = getattr(ns, ga_name, None) if ns is not None and not ga_name.startswith("_") else None
    if fn is None or isinstance(fn, type) or not callable(fn):
        spelling = _HINTS.get(name)
        qual = f"{mod}.{name}"
        if spelling is None and mod == "numpy.linalg" and hasattr(_gpuarr(), name):
            spelling = f"gpuarr.{name}"
        raise _missing(qual, spelling)
    return fn, f"{ns_name}.{ga_name}"


# Parameters (by position and by name) that are read on the host and shape the
# result, not data to compute on: they stay as given beside GPU arrays (xarray passes
# nanquantile's q as a NumPy array)
_HOST_PARAMETERS = {"nanquantile": (1, "q")}


def _array_function(self, func, types, args, kwargs):
    """__array_function__(func, types, args, kwargs)

    NumPy's hook (NEP 18): ``np.sum(x)``, ``np.concatenate([x, y])``,
    ``np.linalg.norm(x)``... run gpuarr's function on x's device. A NumPy function
    gpuarr lacks raises TypeError naming it; nothing is copied to the host."""
    if not builtins.all(issubclass(t, (Array, np.ndarray)) for t in types):
        return NotImplemented
    try:
        fn, ga_name = _lookup(func)
    except _Missing:
        # NumPy's own function where all the data is in host memory already
        if _on_cpu(_device_of(args, kwargs)):
            return _host_call(func, args, kwargs)
        raise
    if fn in (_np_array, _np_asarray):
        # np.array(data, like=x): NumPy drops like= and calls x's hook (NEP 35). The
        # call asks for data on x's device, so NumPy data goes there as Python lists
        # do: an explicit, counted host-to-device copy (gpuarr.asarray(data,
        # device=x.device)), not an operand met by chance
        return fn(*args, **dict(kwargs, like=self))
    dev = _device_of(args, kwargs)
    keep = _HOST_PARAMETERS.get(func.__name__, ())
    args = tuple(a if i in keep else _host_to(a, dev) for i, a in enumerate(args))
    kwargs = {k: v if k in keep else _host_to(v, dev) for k, v in kwargs.items()}
    if ga_name is not None:
        args, kwargs = _translate(func, fn, ga_name, args, kwargs)
        if ga_name.startswith("gpuarr.fft.") and "norm" in kwargs and kwargs["norm"] is None:
            kwargs["norm"] = "backward"  # NumPy's norm=None is the standard's default
    try:
        return fn(*args, **kwargs)
    except _Missing:
        # a case gpuarr's spelling lacks (numpy.dot of 3-d arrays): NumPy's on the CPU
        if _on_cpu(dev):
            return _host_call(func, args, kwargs)
        raise


# --- __array_ufunc__: elementwise calls, reduce and accumulate ----------------------------

_UFUNC_DEFAULTS = {"casting": "same_kind", "order": "K", "dtype": None, "subok": True,
                   "signature": None, "where": True}


def _ufunc_call(fn, inputs, out, dtype, name):
    """One ufunc call; NumPy's dtype= (Dask's reductions pass it) picks the loop: the
    inputs are cast to it first (so int8 + int8 with dtype=int64 does not wrap), and a
    function whose result has another kind (a comparison) has its result cast."""
    if dtype is None:
        return fn(*inputs, out=out)
    ga = _gpuarr()
    dtype = ga.DType(np.dtype(dtype))  # refuses a byte-swapped dtype ('>i4')
    npdt = np.dtype(dtype.name)
    # NumPy's casting rule 'same_kind' on both sides of the loop: float64 inputs do not
    # go into an int8 loop, and a float64 loop does not write an int8 out= (it would
    # truncate and wrap in silence)
    for i, a in enumerate(inputs):
        # a bool dtype= of a comparison names its output, not the loop
        if isinstance(a, Array) and npdt.kind != "b" and \
                not np.can_cast(np.dtype(a.dtype.name), npdt, "same_kind"):
            raise TypeError(f"Cannot cast ufunc '{name}' input {i} from "
                            f"dtype('{a.dtype.name}') to dtype('{npdt.name}') with "
                            f"casting rule 'same_kind'")
    if out is not None and not np.can_cast(npdt, np.dtype(out.dtype.name), "same_kind"):
        raise TypeError(f"Cannot cast ufunc '{name}' output from dtype('{npdt.name}') "
                        f"to dtype('{out.dtype.name}') with casting rule 'same_kind'")
    inputs = tuple(ga.astype(a, dtype, copy=False) if isinstance(a, Array) else a
                   for a in inputs)
    r = fn(*inputs)
    r = r if r.dtype == dtype else ga.astype(r, dtype)
    if out is None:
        return r
    out[...] = r
    return out


def _without_out(fn):
    def call(*inputs, out=None):
        return fn(*inputs)
    return call


def _ufunc_kwargs(ufunc, method, kwargs):
    out = kwargs.pop("out", None)
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"numpy.{ufunc.__name__}: gpuarr writes one output")
        out = out[0]
    if out is not None and not isinstance(out, Array):
        raise TypeError(f"numpy.{ufunc.__name__}(..., out=<{type(out).__name__}>): a "
                        f"gpuarr result cannot be written into a NumPy array; assign "
                        f"the result, or copy it with .numpy()")
    for k, default in _UFUNC_DEFAULTS.items():
        if k in kwargs and _is_default(kwargs[k], default):
            del kwargs[k]
    if method == "__call__" and set(kwargs) - {"dtype"}:
        raise TypeError(f"numpy.{ufunc.__name__} on gpuarr arrays takes no "
                        f"{sorted(set(kwargs) - {'dtype'})}; run NumPy on an explicit "
                        f"copy x.numpy()")
    return out


def _host_ufunc(ufunc, method, inputs, out, kwargs):
    """A ufunc gpuarr lacks, on the CPU device: NumPy's, on the host views (an out=
    array is written through its view)."""
    if out is not None:
        kwargs = dict(kwargs, out=np.asarray(out))
    r = _host_call(getattr(ufunc, method) if method != "__call__" else ufunc, inputs,
                   kwargs)
    return out if out is not None else r


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """__array_ufunc__(ufunc, method, *inputs, **kwargs)

    NumPy's hook (NEP 13): ``np.exp(x)``, ``np.add(x, y)``, ``np.add.reduce(x)``
    run gpuarr's function on x's device (NumPy arrays join a CPU array, and raise
    DeviceMismatchError beside a GPU one, as with operators)."""
    ga = _gpuarr()
    for item in inputs:
        if not isinstance(item, (Array, np.ndarray, np.generic, builtins.bool, int, float,
                                 complex, list, tuple)):
            return NotImplemented
    out = _ufunc_kwargs(ufunc, method, kwargs)
    dev = _device_of(inputs + ((out,) if out is not None else ()), {})
    inputs = tuple(_host_to(a, dev) for a in inputs)
    name = ufunc.__name__
    if method == "__call__":
        fn = getattr(ga, _RENAMES.get(name, name), None)
        if fn is None or ufunc.nout != 1:
            if _on_cpu(dev):
                return _host_ufunc(ufunc, method, inputs, out, kwargs)
            raise _missing(f"numpy.{name}", _HINTS.get(name))
        if name in ("matmul", "vecdot"):
            if out is not None:
                raise TypeError(f"gpuarr.{name} has no out=; assign the result instead")
            fn = _without_out(fn)
        dtype = kwargs.get("dtype")
        if name in _FLOAT_ONLY_UFUNCS and dtype is None and isinstance(inputs[0], Array) \
                and inputs[0].dtype.name[0] in "biu":  # bool, int*, uint*
            dtype = ufunc.resolve_dtypes((np.dtype(inputs[0].dtype.name), None))[-1]
        return _ufunc_call(fn, inputs, out, dtype, name)
    table = _REDUCE if method == "reduce" else _ACCUMULATE if method == "accumulate" else {}
    if name not in table or len(inputs) != 1:
        if _on_cpu(dev):
            return _host_ufunc(ufunc, method, inputs, out, kwargs)
        raise _missing(f"numpy.{name}.{method}",
                       f"gpuarr.{table[name]}" if name in table else None)
    if out is not None or kwargs.pop("initial", np._NoValue) is not np._NoValue:
        raise TypeError(f"numpy.{name}.{method} on gpuarr arrays takes no out= or "
                        f"initial=; use gpuarr.{table[name]}")
    axis = kwargs.pop("axis", 0)
    if method == "accumulate":
        if kwargs:
            raise TypeError(f"gpuarr.{table[name]} takes no {sorted(kwargs)}")
        return getattr(ga, table[name])(inputs[0], axis=axis)
    keepdims = kwargs.pop("keepdims", False)
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(f"gpuarr.{table[name]} takes no {sorted(kwargs)}")
    extra = {"dtype": dtype} if dtype is not None else {}
    return getattr(ga, table[name])(inputs[0], axis=axis, keepdims=keepdims, **extra)


method("__array_ufunc__")(_array_ufunc)
# Dask picks the type of a result's chunks by this (the highest wins; its own arrays
# have 11, NumPy's 0): gpuarr chunks win over NumPy data, and a Dask array beside a
# gpuarr array stays a Dask array.
Array.__array_priority__ = 10.0
method("__array_function__")(_array_function)
