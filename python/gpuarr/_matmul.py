"""Matrix products in the main namespace: matmul (``@``), tensordot, vecdot.

Float and complex products on the CPU use OpenBLAS (the scipy-openblas32 wheel,
loaded at import) when it is installed; integers, bool, float16, and everything when
no BLAS is found, use gpuarr's portable C kernel. ``blas_info()`` says which.
"""
import glob
import operator as _operator
import os
import sys

import numpy

from . import _core
from ._core import Array, matmul

__all__ = ["matmul", "tensordot", "vecdot", "blas_info"]


def _numpy_openblas():
    """The OpenBLAS that NumPy's wheel bundles, or None: numpy.libs/ beside the
    package on Linux (auditwheel) and Windows (delvewheel: a .dll), numpy/.dylibs/ on
    macOS (delocate; NumPy's wheels for macOS 14 and newer use Accelerate instead and
    bundle none).

    Using the library NumPy already loaded gives the process one BLAS thread pool:
    two OpenBLAS pools (NumPy's and ours) each keep a worker spinning after a call,
    and on a machine with few cores they slow each other down many times over."""
    pkg = os.path.dirname(numpy.__file__)
    libs = os.path.join(os.path.dirname(pkg), "numpy.libs")
    for pattern in (os.path.join(libs, "libscipy_openblas*.so*"),
                    os.path.join(libs, "libscipy_openblas*.dll"),
                    os.path.join(pkg, ".dylibs", "libscipy_openblas*.dylib")):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def _load_default_blas():
    if os.environ.get("GPUARR_BLAS"):
        candidates = [os.environ["GPUARR_BLAS"]]
    else:
        candidates = [_numpy_openblas()]
    for path in candidates:
        if path:
            try:
                _core._set_blas(path)
                return
            except RuntimeError:
                pass
    # the fallback, imported only when NumPy's OpenBLAS is not usable (a dependency of
    # the wheel, but a source checkout may run without it)
    try:
        import scipy_openblas32 as _ob
    except ImportError:
        _ob = None
    if _ob is not None:
        d = _ob.get_lib_dir()
        name = _ob.get_library()
        for cand in (f"lib{name}.so", f"lib{name}.dylib", f"lib{name}.dll", f"{name}.dll"):
            path = os.path.join(d, cand)
            if os.path.exists(path):
                try:
                    _core._set_blas(path)
                    return
                except RuntimeError:
                    break
    if sys.platform == "darwin":  # Apple's BLAS, in every macOS (its CBLAS is LP64)
        try:
            _core._set_blas("/System/Library/Frameworks/Accelerate.framework/Accelerate")
        except RuntimeError:
            pass


_load_default_blas()


def blas_info():
    """blas_info()

    The CPU BLAS used for float and complex matmul, as ``{"path", "prefix"}``, or
    None when gpuarr's portable kernel runs."""
    return _core._blas_info()


def _check(x, name):
    if not isinstance(x, Array):
        raise TypeError(f"{name}() expects gpuarr arrays, got {type(x).__name__}; make "
                        f"one with gpuarr.asarray(...) first")


def tensordot(x1, x2, /, *, axes=2):
    """tensordot(x1, x2, /, *, axes=2)

    Sum of products over axes: an int n contracts the last n axes of ``x1`` with the
    first n of ``x2``; a pair of sequences names the axes of each."""
    _check(x1, "tensordot")
    _check(x2, "tensordot")
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise ValueError("tensordot: axes must be an int or a pair of sequences")
        a, b = axes
        a = [a] if not isinstance(a, (tuple, list)) else list(a)
        b = [b] if not isinstance(b, (tuple, list)) else list(b)
    else:
        n = _operator.index(axes)
        if n < 0:
            raise ValueError("tensordot: axes must be non-negative")
        if n > x1.ndim or n > x2.ndim:
            raise ValueError(f"tensordot: cannot contract {n} axes of arrays with "
                             f"{x1.ndim} and {x2.ndim} dimensions")
        a = list(range(x1.ndim - n, x1.ndim))
        b = list(range(n))
    return _core._tensordot(x1, x2, a, b)


def vecdot(x1, x2, /, *, axis=-1):
    """vecdot(x1, x2, /, *, axis=-1)

    Dot products of vectors along ``axis`` (batch axes broadcast):
    ``sum(conj(x1) * x2, axis=axis)``."""
    _check(x1, "vecdot")
    _check(x2, "vecdot")
    return _core._vecdot(x1, x2, _operator.index(axis))
