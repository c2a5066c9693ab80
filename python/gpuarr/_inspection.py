"""The array API standard's inspection and data-type functions.

Code written against the standard (SciPy, scikit-learn, array-api-compat) asks the
namespace what it has before it makes arrays: ``__array_namespace_info__()`` (devices,
default dtypes, supported dtypes), ``finfo``/``iinfo`` (limits), ``isdtype``,
``result_type`` and ``can_cast``. All of these answer from dtype tables on the host;
none touches a device.
"""
import builtins as _builtins
from typing import NamedTuple as _NamedTuple

import numpy as _np

from . import _core
from ._core import Array, DType
from ._methods import method

__all__ = ["__array_namespace_info__", "finfo", "iinfo", "isdtype", "result_type",
           "can_cast"]

# The standard's dtypes (float16 is gpuarr's extra: it exists, but the standard's
# tables do not list it, as NumPy's do not).
_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]

# isdtype's kinds by DType.kind (float16 included: it is a real floating dtype).
_KIND_LETTERS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def _dtype(x, what):
    if isinstance(x, Array):
        return x.dtype
    try:
        return DType(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what} expects a gpuarr dtype or array, got {x!r}") from None


def _devices():
    return [_core.cpu()] + [_core.gpu(i) for i in range(_core.num_gpus())]


def _check_device(device):
    if device is not None and _core.Device(device) not in _devices():
        raise ValueError(f"no such device {device!r}; devices() lists them")


class _NamespaceInfo:
    """What ``gpuarr.__array_namespace_info__()`` returns (the standard's inspection
    object): capabilities, devices and dtypes of this process."""

    __module__ = "gpuarr"

    def capabilities(self):
        """capabilities()

        The optional features gpuarr has: boolean indexing and data-dependent output
        shapes (nonzero, unique, boolean masks) are supported; arrays have at most
        ``max dimensions`` axes."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": _core.MAXDIMS}

    def default_device(self):
        """default_device()

        The device new arrays go to when none is named (gpuarr.get_default_device())."""
        return _core.get_default_device()

    def devices(self):
        """devices()

        Every device of this process: the CPU, then each GPU (real, simulated or
        emulated)."""
        return _devices()

    def default_dtypes(self, *, device=None):
        """default_dtypes(*, device=None)

        The dtypes gpuarr picks when none is named, the same on every device:
        float32 for real floats (gpuarr's default, as on GPUs), complex64, int64 for
        integers and indices."""
        _check_device(device)
        return {"real floating": _core.float32, "complex floating": _core.complex64,
                "integral": _core.int64, "indexing": _core.int64}

    def dtypes(self, *, device=None, kind=None):
        """dtypes(*, device=None, kind=None)

        The standard's dtypes that gpuarr supports (every one, on every device) as a
        dict name -> dtype, limited to ``kind`` ('bool', 'signed integer', 'unsigned
        integer', 'integral', 'real floating', 'complex floating', 'numeric', or a
        tuple of these). float16 exists too but is not one of the standard's."""
        _check_device(device)
        if kind is None:
            names = ("bool",) + _KINDS["numeric"]
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            names = ()
            for k in kinds:
                if k not in _KINDS:
                    raise ValueError(f"unknown dtype kind {k!r}; one of {sorted(_KINDS)}")
                names += _KINDS[k]
        return {n: DType(n) for n in sorted(set(names), key=names.index)}

    def __repr__(self):
        return "gpuarr.__array_namespace_info__()"


def __array_namespace_info__():
    """__array_namespace_info__()

    The array API's inspection object: ``.capabilities()``, ``.default_device()``,
    ``.devices()``, ``.default_dtypes(device=)``, ``.dtypes(device=, kind=)``."""
    return _NamespaceInfo()


class finfo_object(_NamedTuple):
    """Limits of a floating-point dtype (what gpuarr.finfo returns)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


class iinfo_object(_NamedTuple):
    """Limits of an integer dtype (what gpuarr.iinfo returns)."""

    bits: int
    max: int
    min: int
    dtype: DType


finfo_object.__module__ = iinfo_object.__module__ = "gpuarr"


def finfo(type, /):
    """finfo(type, /)

    Limits of a floating-point dtype (or of an array's dtype): bits, eps, max, min,
    smallest_normal (Python floats) and dtype. For a complex dtype, those of its real
    part (complex64 -> float32)."""
    dt = _dtype(type, "finfo")
    if dt.kind not in "fc":
        raise TypeError(f"finfo needs a floating-point dtype, got {dt.name} (iinfo is "
                        f"for integers)")
    real = DType({"complex64": "float32", "complex128": "float64"}.get(dt.name, dt.name))
    f = _np.finfo(real.name)
    return finfo_object(int(f.bits), float(f.eps), float(f.max), float(f.min),
                        float(f.smallest_normal), real)


def iinfo(type, /):
    """iinfo(type, /)

    Limits of an integer dtype (or of an array's dtype): bits, max, min (Python
    ints) and dtype."""
    dt = _dtype(type, "iinfo")
    if dt.kind not in "iu":
        raise TypeError(f"iinfo needs an integer dtype, got {dt.name} (finfo is for "
                        f"floating-point dtypes)")
    i = _np.iinfo(dt.name)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), dt)


def isdtype(dtype, kind):
    """isdtype(dtype, kind)

    Whether dtype is of ``kind``: a dtype (equality), one of the standard's kind
    names ('bool', 'signed integer', 'unsigned integer', 'integral', 'real
    floating', 'complex floating', 'numeric'), or a tuple of these (any)."""
    if not isinstance(dtype, DType):
        raise TypeError(f"isdtype expects a gpuarr dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return _builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, DType):
        return dtype == kind
    if isinstance(kind, str):
        if kind not in _KIND_LETTERS:
            raise ValueError(f"unknown dtype kind {kind!r}; one of {sorted(_KIND_LETTERS)}")
        return dtype.kind in _KIND_LETTERS[kind]
    raise TypeError(f"isdtype's kind must be a dtype, a kind name or a tuple, got {kind!r}")


def _probe(dt):
    # An empty CPU array stands for a dtype: promotion reads only its dtype.
    return _core.empty((0,), dtype=dt, device=_core.cpu())


def result_type(*arrays_and_dtypes):
    """result_type(*arrays_and_dtypes)

    The dtype that gpuarr's type promotion gives these arrays, dtypes and Python
    scalars together (as ``+`` would; scalars promote weakly). At least one array or
    dtype is needed."""
    typed = [a for a in arrays_and_dtypes
             if not isinstance(a, (_builtins.bool, int, float, complex))]
    scalars = [a for a in arrays_and_dtypes
               if isinstance(a, (_builtins.bool, int, float, complex))]
    if not typed:
        raise ValueError("result_type needs at least one array or dtype")
    dt = _dtype(typed[0], "result_type")
    for a in typed[1:]:
        dt = _core._ew_resolve("add", _probe(dt), _probe(_dtype(a, "result_type")))[1]
    for s in scalars:
        dt = _core._ew_resolve("add", _probe(dt), s)[1]
    return dt


def can_cast(from_, to, /):
    """can_cast(from_, to, /)

    Whether a cast from ``from_`` (a dtype or an array) to dtype ``to`` keeps every
    value (NumPy's 'safe' casting: int8 -> int16 yes, int64 -> int32 no)."""
    src = _dtype(from_, "can_cast")
    dst = _dtype(to, "can_cast")
    return _builtins.bool(_np.can_cast(_np.dtype(src.name), _np.dtype(dst.name), "safe"))


# --- the standard's protocol methods of Array ------------------------------------------

_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


@method("__array_namespace__")
def _array_namespace(self, /, *, api_version=None):
    """__array_namespace__(*, api_version=None)

    The gpuarr module: the array API namespace of this array (how
    ``array_api_compat.array_namespace(x)`` finds gpuarr). api_version may name any
    standard from 2021.12 to 2024.12 (gpuarr implements 2024.12)."""
    if api_version is not None and api_version not in _API_VERSIONS:
        raise ValueError(f"unsupported array API version {api_version!r}; gpuarr "
                         f"implements {_API_VERSIONS[-1]}")
    import gpuarr  # the namespace, whose __init__ was loading this module
    return gpuarr


@method("__complex__")
def _complex(self, /):
    """__complex__()

    complex(x) of a one-element array (a device-to-host read for a GPU array)."""
    return complex(self.item())
