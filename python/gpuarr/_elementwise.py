"""Elementwise operations: arithmetic, comparisons, math functions, casts.

Each function runs on the device of its array operands (all on one device, else
``DeviceMismatchError``). Python scalars join the operation on that device and
promote weakly, as in NumPy 2 (``int8 array + 1`` stays int8); gpuarr's one
difference: a Python float with an integer or boolean array gives float32 (gpuarr's
default float), a Python complex gives complex64.
"""
import operator

import numpy as _np

from . import _core, _fuse
from ._core import Array
from ._methods import method, prop

# NumPy's ufuncs (and so ndarray + Array) reach gpuarr through Array.__array_ufunc__
# (gpuarr/_numpy_protocol.py): host data beside a GPU array raises
# DeviceMismatchError instead of silently copying the array to the host.

_UNARY = {
    "abs": "Absolute value |x| (for complex x, the magnitude, a real array).",
    "acos": "Inverse cosine, elementwise.",
    "acosh": "Inverse hyperbolic cosine, elementwise.",
    "asin": "Inverse sine, elementwise.",
    "asinh": "Inverse hyperbolic sine, elementwise.",
    "atan": "Inverse tangent, elementwise.",
    "atanh": "Inverse hyperbolic tangent, elementwise.",
    "bitwise_invert": "Bitwise NOT (~x) of integer or boolean x.",
    "ceil": "Smallest integer >= x, elementwise (integers are returned unchanged).",
    "conj": "Complex conjugate, elementwise (real x unchanged).",
    "cos": "Cosine, elementwise (radians).",
    "cosh": "Hyperbolic cosine, elementwise.",
    "exp": "e ** x, elementwise.",
    "exp2": "2 ** x, elementwise.",
    "expm1": "exp(x) - 1, accurate for small x.",
    "floor": "Largest integer <= x, elementwise (integers are returned unchanged).",
    "imag": "Imaginary part (zeros for real x).",
    "isfinite": "True where x is neither infinite nor NaN.",
    "isinf": "True where x is +inf or -inf.",
    "isnan": "True where x is NaN.",
    "log": "Natural logarithm, elementwise.",
    "log1p": "log(1 + x), accurate for small x.",
    "log2": "Base-2 logarithm, elementwise.",
    "log10": "Base-10 logarithm, elementwise.",
    "logical_not": "Logical NOT: True where x is zero.",
    "negative": "-x, elementwise.",
    "positive": "+x, elementwise (a copy).",
    "real": "Real part (x itself, copied, for real x).",
    "reciprocal": "1 / x, elementwise (integer division for integer x).",
    "round": "Round to the nearest integer, halves to even.",
    "sign": "-1, 0 or 1 by the sign of x (x / |x| for complex x).",
    "signbit": "True where the sign bit of x is set (also for -0.0).",
    "sin": "Sine, elementwise (radians).",
    "sinh": "Hyperbolic sine, elementwise.",
    "sqrt": "Square root, elementwise.",
    "square": "x * x, elementwise.",
    "tan": "Tangent, elementwise (radians).",
    "tanh": "Hyperbolic tangent, elementwise.",
    "trunc": "Round toward zero, elementwise.",
}

_BINARY = {
    "add": "x1 + x2, elementwise.",
    "atan2": "Angle of the point (x2, x1): arctan(x1 / x2) in the right quadrant.",
    "bitwise_and": "x1 & x2 of integer or boolean operands.",
    "bitwise_left_shift": "x1 << x2 (0 when x2 is at least the bit width).",
    "bitwise_or": "x1 | x2 of integer or boolean operands.",
    "bitwise_right_shift": "x1 >> x2 (arithmetic for signed integers).",
    "bitwise_xor": "x1 ^ x2 of integer or boolean operands.",
    "copysign": "|x1| with the sign of x2.",
    "divide": "x1 / x2 (true division: integers divide in float64).",
    "equal": "x1 == x2, elementwise.",
    "floor_divide": "x1 // x2 (Python's rounding toward -inf; integer // 0 is 0).",
    "greater": "x1 > x2, elementwise.",
    "greater_equal": "x1 >= x2, elementwise.",
    "hypot": "sqrt(x1**2 + x2**2) without overflow on the way.",
    "less": "x1 < x2, elementwise.",
    "less_equal": "x1 <= x2, elementwise.",
    "logaddexp": "log(exp(x1) + exp(x2)) without overflow.",
    "logical_and": "True where both are nonzero.",
    "logical_or": "True where either is nonzero.",
    "logical_xor": "True where exactly one is nonzero.",
    "maximum": "The larger of x1 and x2 (NaN if either is NaN).",
    "minimum": "The smaller of x1 and x2 (NaN if either is NaN).",
    "multiply": "x1 * x2, elementwise.",
    "nextafter": "The next representable value after x1 toward x2.",
    "not_equal": "x1 != x2, elementwise.",
    "pow": "x1 ** x2, elementwise.",
    "remainder": "x1 % x2 with the sign of x2 (as Python; integer % 0 is 0).",
    "subtract": "x1 - x2, elementwise.",
}


def _make(name, nin, text):
    core_fn = getattr(_core, name)
    params = "x, /" if nin == 1 else "x1, x2, /"

    if nin == 1:
        def fn(x, /, *, out=None):
            try:
                return core_fn(x, out=out)
            except TypeError:
                return _traced(name, (x,), out)
    else:
        def fn(x1, x2, /, *, out=None):
            try:
                return core_fn(x1, x2, out=out)
            except TypeError:
                return _traced(name, (x1, x2), out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name}({params}, *, out=None)\n\n{text}\n\nWith ``out``, the result " \
        "is written into that array (same device; the dtype must be reachable by " \
        "same-kind casting) and returned."
    return fn


def _traced(name, args, out):
    """A TypeError's second look: inside gpuarr.fuse's trace an operand is a traced
    value, and the call is recorded, not run (gpuarr/_fuse.py). Else the error stands."""
    r = _fuse.record_call(name, args) if out is None else None
    if r is None:
        raise
    return r


__all__ = []
for _name, _text in _UNARY.items():
    globals()[_name] = _make(_name, 1, _text)
    __all__.append(_name)
for _name, _text in _BINARY.items():
    globals()[_name] = _make(_name, 2, _text)
    __all__.append(_name)


def where(condition, x1, x2, /):
    """where(condition, x1, x2, /)

    Elements of x1 where condition is true, of x2 elsewhere (broadcast together;
    the result dtype is x1 and x2 promoted, as in NumPy)."""
    try:
        return _core.where(condition, x1, x2)
    except TypeError:
        return _traced("where", (condition, x1, x2), None)


def clip(x, /, min=None, max=None):
    """clip(x, /, min=None, max=None)

    x limited to [min, max] elementwise (either bound may be None, a scalar or an
    array). NaN in x stays NaN. Not defined for complex x."""
    if not isinstance(x, Array):
        r = _fuse.record_call("clip", (x, min, max))
        if r is not None:
            return r
    if min is None and max is None:
        return _core.positive(x) if x.dtype != _core.bool else astype(x, x.dtype)
    if min is None:
        return _core.minimum(x, max)
    if max is None:
        return _core.maximum(x, min)
    return _core.clip(x, min, max)


def astype(x, dtype, /, *, copy=True):
    """astype(x, dtype, /, *, copy=True)

    x's values converted to dtype, on x's device (NumPy's unsafe casting: float to
    int truncates toward zero, complex to real drops the imaginary part, anything
    to bool is ``!= 0``). With copy=False, x itself when it already has that dtype."""
    try:
        return _core.astype(x, dtype, copy=copy)
    except TypeError:
        return _traced("astype", (x, dtype), None)


__all__ += ["where", "clip", "astype"]

# NumPy's names for the same functions.
arccos, arccosh, arcsin, arcsinh = acos, acosh, asin, asinh  # noqa: F821
arctan, arctan2, arctanh = atan, atan2, atanh  # noqa: F821
power, absolute, invert = pow, abs, bitwise_invert  # noqa: F821
left_shift, right_shift = bitwise_left_shift, bitwise_right_shift  # noqa: F821
true_divide, mod, conjugate = divide, remainder, conj  # noqa: F821
__all__ += ["arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
            "power", "absolute", "invert", "left_shift", "right_shift", "true_divide",
            "mod", "conjugate", "exp2"]
__all__ = sorted(set(__all__))


# --- methods ------------------------------------------------------------------------

@method("astype")
def _astype_method(self, dtype, /, *, copy=True):
    """astype(dtype, /, *, copy=True)

    This array's values converted to dtype, on the same device (see gpuarr.astype)."""
    return _core.astype(self, dtype, copy=copy)


def _unary_method(name):
    core_fn = getattr(_core, name)

    def m(self):
        return core_fn(self)
    m.__name__ = m.__qualname__ = name
    m.__doc__ = f"{name}()\n\n{_UNARY[name]} Same as gpuarr.{name}(x)."
    return m


for _name in ("exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "conj"):
    method(_name)(_unary_method(_name))


@method("conjugate")
def _conjugate(self):
    """conjugate()

    Complex conjugate (same as x.conj())."""
    return _core.conj(self)


@method("round")
def _round(self, decimals=0):
    """round(decimals=0)

    Round to `decimals` decimal places, halves to even (as NumPy's round). Integer
    arrays keep their dtype and round exactly (``decimals < 0`` rounds to tens,
    hundreds...); ``decimals`` of any size is accepted: where ``10**decimals`` (or x
    times it) overflows the dtype, rounding leaves the values as they are (or, for
    ``-decimals`` past the dtype's digits, gives signed zeros; integers give 0)."""
    decimals = operator.index(decimals)
    if _is_integer_dtype(self.dtype):
        return _round_integers(self, decimals)
    if decimals == 0:
        return _core.round(self)
    finfo = _np.finfo(_np.dtype(str(self.dtype)))
    if abs(decimals) > finfo.maxexp * 0.30103:  # 10**|decimals| overflows the dtype
        return self.copy() if decimals > 0 else _core.multiply(self, 0)
    scale = 10.0 ** decimals
    scaled = _core.multiply(self, scale)
    out = _core.divide(_core.round(scaled), scale)
    if decimals > 0:
        # x * 10**d overflowing (1e10 at d = 308) means x has no digits there to
        # round: x itself, where NumPy's own computation gives inf
        out = _core.where(_core.logical_and(_core.isinf(scaled), _core.isfinite(self)),
                          self, out)
    return out


def _is_integer_dtype(dtype):
    return _np.issubdtype(_np.dtype(str(dtype)), _np.integer)


def _round_integers(x, decimals):
    """Exact round half to even of integers to 10**-decimals, in x's dtype."""
    if decimals >= 0:
        return x.copy()
    p = 10 ** (-decimals)
    if p > _np.iinfo(_np.dtype(str(x.dtype))).max:
        return _core.multiply(x, 0)
    q = _core.floor_divide(x, p)
    r = _core.subtract(x, _core.multiply(q, p))  # 0 <= r < p
    rest = _core.subtract(p, r)  # p - r, no overflow
    up = _core.logical_or(_core.greater(r, rest),
                          _core.logical_and(_core.equal(r, rest),
                                            _core.not_equal(_core.remainder(q, 2), 0)))
    return _core.multiply(_core.add(q, up.astype(x.dtype)), p)


@method("clip")
def _clip(self, min=None, max=None):
    """clip(min=None, max=None)

    This array limited to [min, max] (see gpuarr.clip)."""
    return clip(self, min, max)


@prop("real")
def _real(self):
    """The real part (a new array; for real arrays a copy of the values)."""
    return _core.real(self)


@prop("imag")
def _imag(self):
    """The imaginary part (a new array; zeros for real arrays)."""
    return _core.imag(self)
