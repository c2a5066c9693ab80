"""gpuarr.fft: the array API standard's FFT extension (2024.12).

Every transform runs on the input's device (CPU: gpuarr's own mixed-radix/Bluestein
FFT in C; CUDA: cuFFT) and returns an array there; nothing is read back to the host.
dtypes follow NumPy 2: float32 and complex64 (and float16) stay single precision,
float64, complex128, integers and bool are transformed in double precision.

The one-dimensional transforms are one call into the core each (which pads or cuts
to ``n``, moves the axis and applies ``norm``); the n-dimensional ones apply them
along each axis in turn, as NumPy does.
"""
import builtins as _builtins
import operator as _operator

from numpy.exceptions import AxisError as _AxisError

from . import _core
from ._core import Array
from ._creation import arange as _arange
from ._manipulation import concat as _concat
from ._rearrange import roll as _roll

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
           "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _check(x, name):
    if not isinstance(x, Array):
        raise TypeError(f"fft.{name}() expects a gpuarr.Array, got {type(x).__name__}; "
                        f"convert with gpuarr.asarray(x) first")


def _axis(axis, name):
    if isinstance(axis, _builtins.bool) or not hasattr(axis, "__index__"):
        raise TypeError(f"fft.{name}(): axis must be an int, got {type(axis).__name__}")
    return _operator.index(axis)


def _swap_norm(norm, name):
    """The norm of the opposite direction (hfft is an irfft of the conjugate with the
    forward and backward scalings swapped)."""
    if not isinstance(norm, str) or norm not in _NORMS:
        raise ValueError(f"{name}: invalid norm {norm!r}; pass \"backward\" (the "
                         f"default), \"ortho\" or \"forward\"")
    return {"backward": "forward", "forward": "backward"}.get(norm, norm)


def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """fft(x, /, *, n=None, axis=-1, norm='backward')

    One-dimensional discrete Fourier transform of ``x`` along ``axis``, over ``n``
    points (None: the axis' length; a shorter axis is zero-padded, a longer one cut).
    Complex result: complex64 for float32/complex64/float16 input, else complex128."""
    _check(x, "fft")
    return _core._fft(x, "fft", n, _axis(axis, "fft"), norm)


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """ifft(x, /, *, n=None, axis=-1, norm='backward')

    Inverse of :func:`fft`: with the default norm, scaled by ``1/n``."""
    _check(x, "ifft")
    return _core._fft(x, "ifft", n, _axis(axis, "ifft"), norm)


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """rfft(x, /, *, n=None, axis=-1, norm='backward')

    FFT of real ``x``: the ``n // 2 + 1`` non-negative frequency terms (the rest are
    their conjugates). Complex input raises TypeError (pass ``x.real``, or use
    :func:`fft`)."""
    _check(x, "rfft")
    return _core._fft(x, "rfft", n, _axis(axis, "rfft"), norm)


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """irfft(x, /, *, n=None, axis=-1, norm='backward')

    Inverse of :func:`rfft`: a real result of ``n`` points (None: ``2 * (m - 1)`` for
    an axis of length m) from the ``n // 2 + 1`` non-negative frequency terms."""
    _check(x, "irfft")
    return _core._fft(x, "irfft", n, _axis(axis, "irfft"), norm)


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """hfft(x, /, *, n=None, axis=-1, norm='backward')

    FFT of a signal with Hermitian symmetry given by its first half ``x``: a real
    result of ``n`` points (None: ``2 * (m - 1)``)."""
    _check(x, "hfft")
    swapped = _swap_norm(norm, "hfft")
    return _core._fft(_core.conj(x), "irfft", n, _axis(axis, "hfft"), swapped)


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """ihfft(x, /, *, n=None, axis=-1, norm='backward')

    Inverse of :func:`hfft` for real ``x``: the ``n // 2 + 1`` non-negative frequency
    terms. Complex input raises TypeError (pass ``x.real``)."""
    _check(x, "ihfft")
    if x.dtype.kind == "c":
        raise TypeError(f"ihfft needs real input, got {x.dtype}: pass x.real (drop the "
                        f"imaginary part) or use ifft for complex input")
    swapped = _swap_norm(norm, "ihfft")
    return _core.conj(_core._fft(x, "rfft", n, _axis(axis, "ihfft"), swapped))


def _shape_axes(x, s, axes, name, real_inverse=False):
    """The standard's (s, axes) for the n-dimensional transforms as lists: axes None
    means every axis (or the last len(s) when s is given); s None, or an entry -1,
    keeps that axis' length in the input as given (as NumPy does when an axis
    repeats); with real_inverse (irfftn) the last one is then None, 2 (m - 1)."""
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(-len(s), 0))
    else:
        if isinstance(axes, (int, _builtins.bool)) or not hasattr(axes, "__len__"):
            raise TypeError(f"{name}: axes must be a sequence of ints or None, got "
                            f"{type(axes).__name__}")
        axes = [_axis(a, name) for a in axes]
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise _AxisError(f"{name}: axis {a} is out of bounds for array of "
                             f"dimension {x.ndim}")
    if s is None:
        s = [-1] * len(axes)
    elif isinstance(s, (int, _builtins.bool)) or not hasattr(s, "__len__"):
        raise TypeError(f"{name}: s must be a sequence of ints or None, got "
                        f"{type(s).__name__}")
    s = [_operator.index(v) for v in s]
    if len(s) != len(axes):
        raise ValueError(f"{name}: s has {len(s)} entries but axes has {len(axes)}; "
                         f"give one length per transformed axis")
    for v in s:
        if v < 1 and v != -1:
            raise ValueError(f"{name}: invalid number of data points {v} in s; each "
                             f"entry must be at least 1 (or -1 for the axis' length)")
    last = s[-1] if s else -1
    s = [x.shape[a] if v == -1 else v for v, a in zip(s, axes)]
    if real_inverse and s and last == -1:
        s[-1] = None  # the core's default for C2R: 2 (m - 1)
    return s, axes


def _c2c_nd(x, s, axes, norm, kind, name):
    _check(x, name)
    s, axes = _shape_axes(x, s, axes, name)
    if not axes:
        return _as_complex(x, norm, name)
    out = x
    for i in reversed(range(len(axes))):
        out = _core._fft(out, kind, s[i], axes[i], norm)
    return out


def _as_complex(x, norm, name):
    """No axes to transform: a copy of x in the complex dtype a transform would give
    (the standard's result is complex; NumPy would return x itself)."""
    _swap_norm(norm, name)  # the norm is still checked
    single = x.dtype in (_core.float16, _core.float32, _core.complex64)
    return x.astype(_core.complex64 if single else _core.complex128)


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """fftn(x, /, *, s=None, axes=None, norm='backward')

    n-dimensional FFT over ``axes`` (None: all axes, or the last ``len(s)`` when
    ``s`` is given), each padded or cut to its entry of ``s`` (-1: unchanged)."""
    return _c2c_nd(x, s, axes, norm, "fft", "fftn")


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """ifftn(x, /, *, s=None, axes=None, norm='backward')

    Inverse of :func:`fftn`."""
    return _c2c_nd(x, s, axes, norm, "ifft", "ifftn")


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """rfftn(x, /, *, s=None, axes=None, norm='backward')

    n-dimensional FFT of real ``x``: a real FFT over the last of ``axes`` (keeping
    ``s[-1] // 2 + 1`` terms), then complex FFTs over the others."""
    _check(x, "rfftn")
    s, axes = _shape_axes(x, s, axes, "rfftn")
    if not axes:
        raise ValueError("rfftn: at least one axis to transform is needed")
    out = _core._fft(x, "rfft", s[-1], axes[-1], norm)
    for i in reversed(range(len(axes) - 1)):
        out = _core._fft(out, "fft", s[i], axes[i], norm)
    return out


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """irfftn(x, /, *, s=None, axes=None, norm='backward')

    Inverse of :func:`rfftn`: complex inverse FFTs over all but the last of ``axes``,
    then a real inverse FFT over the last, of ``s[-1]`` points (None or -1:
    ``2 * (m - 1)``)."""
    _check(x, "irfftn")
    s, axes = _shape_axes(x, s, axes, "irfftn", real_inverse=True)
    if not axes:
        raise ValueError("irfftn: at least one axis to transform is needed")
    out = x
    for i in range(len(axes) - 1):
        out = _core._fft(out, "ifft", s[i], axes[i], norm)
    return _core._fft(out, "irfft", s[-1], axes[-1], norm)


def _freq_args(n, d, dtype, name):
    if isinstance(n, _builtins.bool) or not hasattr(n, "__index__"):
        raise TypeError(f"{name}: n must be an int, got {type(n).__name__}")
    n = _operator.index(n)
    if n < 1:
        raise ValueError(f"{name}: n must be at least 1 (the window length), got {n}")
    if dtype is None:
        dtype = _core.float32  # the default real floating dtype (namespace info)
    dtype = _core.DType(dtype)
    if dtype.kind != "f":
        raise ValueError(f"{name}: dtype must be a real floating dtype (float32 or "
                         f"float64), got {dtype}")
    d = float(d)
    if d == 0:
        raise ValueError(f"{name}: the sample spacing d must not be 0")
    return n, d, dtype


def _freq(parts, n, d, dtype, device):
    """Integers from the (start, stop) ranges scaled by 1/(n d), computed on the
    device in float64 (exact integers, one rounding, as NumPy) then cast."""
    pieces = [_arange(a, b, dtype=_core.float64, device=device) for a, b in parts if b > a]
    if len(pieces) == 1:
        k = pieces[0]
    else:
        k = _concat(pieces, axis=0)
    out = k * (1.0 / (n * d))
    return out if out.dtype == dtype else out.astype(dtype)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """fftfreq(n, /, *, d=1.0, dtype=None, device=None)

    The sample frequencies of an n-point FFT with sample spacing ``d``:
    ``[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n)``, on ``device`` in ``dtype``
    (default float32, gpuarr's default real floating dtype)."""
    n, d, dtype = _freq_args(n, d, dtype, "fftfreq")
    return _freq([(0, (n - 1) // 2 + 1), (-(n // 2), 0)], n, d, dtype, device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """rfftfreq(n, /, *, d=1.0, dtype=None, device=None)

    The sample frequencies of :func:`rfft`'s terms: ``[0, 1, ..., n//2] / (d * n)``."""
    n, d, dtype = _freq_args(n, d, dtype, "rfftfreq")
    return _freq([(0, n // 2 + 1)], n, d, dtype, device)


def _shift(x, axes, sign, name):
    _check(x, name)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, _builtins.bool)) or hasattr(axes, "__index__"):
        axes = (_axis(axes, name),)
    else:
        axes = tuple(_axis(a, name) for a in axes)
    if not axes:
        return _core._copy(x)
    shifts = []
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise _AxisError(f"{name}: axis {a} is out of bounds for array of "
                                  f"dimension {x.ndim}")
        shifts.append(sign * (x.shape[a] // 2))
    return _roll(x, tuple(shifts), axis=axes)


def fftshift(x, /, *, axes=None):
    """fftshift(x, /, *, axes=None)

    The zero-frequency term moved to the centre along ``axes`` (None: all axes): a
    roll by ``n // 2``."""
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, /, *, axes=None):
    """ifftshift(x, /, *, axes=None)

    Inverse of :func:`fftshift`: a roll by ``-(n // 2)``."""
    return _shift(x, axes, -1, "ifftshift")
