"""gpuarr.special: SciPy's special functions, on the device of their operands.

Each function is one elementwise kernel on every device kind (the CPU, simulated
GPUs, CUDA devices and the emulator all run the same scalar math:
csrc/kernels/ga_special_*.h), with SciPy's names, argument order and special values.
float32 and float64 are computed in double precision and rounded once, as SciPy's
float32 loops are; bool, integers up to 16 bits and float16 promote to float32, wider
integers to float64 (SciPy's type resolution). Python scalars join as in any gpuarr
operation (``gammainc(2.5, x)`` keeps x's dtype).

SciPy finds this module itself: with ``SCIPY_ARRAY_API=1``, ``scipy.special.erf(x)``
on a gpuarr array looks for ``special`` on the array's namespace (gpuarr) and calls
``gpuarr.special.erf`` there, so the work stays on x's device. The same holds for the
functions scipy.stats builds on them (``scipy.stats.norm.cdf`` and friends, where SciPy
uses its array API paths).

The accuracy against SciPy, per function, is in docs/special.md (and asserted by
tests/core/test_special.py with those bounds); the functions of SciPy's array-API
table that are not here yet are listed there too.
"""
import functools as _functools
import inspect as _inspect

from . import _core

_UNARY = {
    "erf": "The error function 2/sqrt(pi) * integral_0^x exp(-t^2) dt.",
    "erfc": "The complementary error function 1 - erf(x), accurate where erf is near 1.",
    "erfcx": "The scaled complementary error function exp(x^2) * erfc(x).",
    "erfinv": "The inverse of erf on (-1, 1) (+-inf at +-1, NaN outside).",
    "ndtr": "The standard normal CDF: the area under the Gaussian left of x.",
    "ndtri": "The inverse of ndtr: the x with ndtr(x) == p (the normal quantile).",
    "log_ndtr": "log(ndtr(x)), finite far into the lower tail where ndtr underflows.",
    "expit": "The logistic sigmoid 1 / (1 + exp(-x)).",
    "logit": "The log-odds log(p / (1 - p)), the inverse of expit.",
    "entr": "The elementwise entropy -x * log(x) (0 at 0, -inf below 0).",
    "gammaln": "log|Gamma(x)| (inf at 0 and the negative integers).",
    "digamma": "The digamma function psi(x) = Gamma'(x) / Gamma(x) (psi is the same function).",
    "i0": "The modified Bessel function of the first kind of order 0.",
    "i0e": "exp(-|x|) * i0(x), finite where i0 overflows.",
    "i1": "The modified Bessel function of the first kind of order 1.",
    "i1e": "exp(-|x|) * i1(x), finite where i1 overflows.",
    "sinc": "The normalized sinc sin(pi x) / (pi x), 1 at 0 (SciPy's and NumPy's sinc).",
    "cbrt": "The real cube root of x.",
    "exp10": "10**x.",
    "cosm1": "cos(x) - 1, accurate for x near a multiple of 2 pi.",
    "exprel": "The relative error exponential (exp(x) - 1) / x, 1 at 0.",
    "sindg": "The sine of x given in degrees (exactly 0 at multiples of 180).",
    "cosdg": "The cosine of x given in degrees (exactly 0 at odd multiples of 90).",
    "tandg": "The tangent of x given in degrees (inf at odd multiples of 90).",
    "cotdg": "The cotangent of x given in degrees (inf at multiples of 180).",
    "gamma": "The gamma function (inf at 0, NaN at the negative integers).",
    "gammasgn": "The sign of the gamma function: 1 or -1 (NaN at its poles).",
    "rgamma": "The reciprocal of the gamma function 1 / Gamma(x) (0 at its poles).",
    "loggamma": "log(Gamma(x)) for real x > 0 (NaN below 0: the value is complex there).",
    "zetac": "Riemann's zeta function minus 1, zeta(x) - 1, accurate where zeta(x) is near 1.",
    # Bessel functions, exponential and elliptic integrals, Spence's function
    "j0": "The Bessel function of the first kind of order 0.",
    "j1": "The Bessel function of the first kind of order 1.",
    "y0": "The Bessel function of the second kind of order 0 (NaN below 0, -inf at 0).",
    "y1": "The Bessel function of the second kind of order 1 (NaN below 0, -inf at 0).",
    "k0": "The modified Bessel function of the second kind of order 0 (NaN below 0).",
    "k0e": "exp(x) * k0(x), finite where k0 underflows.",
    "k1": "The modified Bessel function of the second kind of order 1 (NaN below 0).",
    "k1e": "exp(x) * k1(x), finite where k1 underflows.",
    "exp1": "The exponential integral E1(x) = integral_x^inf exp(-t)/t dt (NaN below 0).",
    "expi": "The exponential integral Ei(x), the principal value of integral_-inf^x "
            "exp(t)/t dt.",
    "ellipk": "The complete elliptic integral of the first kind K(m) (parameter m = k^2, "
              "NaN above 1).",
    "ellipkm1": "K(1 - p), the complete elliptic integral of the first kind next to "
                "m = 1, without the rounding of 1 - p.",
    "spence": "Spence's function integral_1^z log(t)/(1 - t) dt = Li2(1 - z) (NaN "
              "below 0).",
}

_BINARY = {
    "xlogy": "x * log(y), 0 where x == 0 (unless y is NaN).",
    "xlog1py": "x * log1p(y), 0 where x == 0 (unless y is NaN).",
    "rel_entr": "x * log(x / y) for x, y > 0; 0 for x == 0 <= y; inf otherwise.",
    "kl_div": "x * log(x / y) - x + y for x, y > 0; y for x == 0 <= y; inf otherwise.",
    "gammainc": "The regularized lower incomplete gamma function P(a, x).",
    "gammaincc": "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).",
    "gammaincinv": "The inverse of gammainc in x: the x with gammainc(a, x) == y.",
    "gammainccinv": "The inverse of gammaincc in x: the x with gammaincc(a, x) == y.",
    "betaln": "log|B(a, b)|, the log of the beta function.",
    "stdtr": "Student's t CDF with df degrees of freedom, at t.",
    "stdtrit": "The inverse of stdtr in t: the t with stdtr(df, t) == p.",
    "chdtr": "The chi-square CDF with v degrees of freedom, at x.",
    "chdtrc": "The chi-square survival function 1 - chdtr(v, x).",
    "chdtri": "The inverse of chdtrc in x: the x with chdtrc(v, x) == p.",
    "boxcox": "The Box-Cox transform (x**lmbda - 1) / lmbda (log(x) at lmbda == 0).",
    "boxcox1p": "The Box-Cox transform of 1 + x, accurate for small x.",
    "inv_boxcox": "The inverse of boxcox in x: (1 + lmbda * y)**(1 / lmbda).",
    "inv_boxcox1p": "The inverse of boxcox1p in x: (1 + lmbda * y)**(1 / lmbda) - 1.",
    "huber": "Huber's loss: r**2 / 2 where |r| <= delta, delta * (|r| - delta / 2) beyond.",
    "pseudo_huber": "The pseudo-Huber loss delta**2 * (sqrt(1 + (r / delta)**2) - 1).",
    "poch": "Pochhammer's rising factorial (z)_m = Gamma(z + m) / Gamma(z).",
    "binom": "The binomial coefficient Gamma(x + 1) / (Gamma(y + 1) Gamma(x - y + 1)).",
    "yn": "The Bessel function of the second kind of integer order n (a fractional n is "
          "truncated toward 0, as SciPy's).",
    "expn": "The generalized exponential integral E_n(x) of integer order n >= 0 (a "
            "fractional n is truncated toward 0, as SciPy's).",
}

_TERNARY = {
    "betainc": "The regularized incomplete beta function I_x(a, b).",
    "betaincc": "The complement 1 - I_x(a, b) of betainc.",
    "betaincinv": "The inverse of betainc in x: the x with betainc(a, b, x) == y.",
    "fdtr": "The F distribution's CDF with dfn, dfd degrees of freedom, at x.",
    "fdtrc": "The F distribution's survival function 1 - fdtr(dfn, dfd, x).",
    "fdtri": "The inverse of fdtr in x: the x with fdtr(dfn, dfd, x) == p.",
    "radian": "An angle of d degrees, m arc minutes and s arc seconds, in radians.",
    "hyp1f1": "Kummer's confluent hypergeometric function M(a, b, x) = 1F1(a; b; x) "
              "(real arguments; inf where b is 0 or a negative integer).",
    "lpmv": "The associated Legendre function P_v^m(x) of integer order m and real "
            "degree v, for |x| <= 1, with the Condon-Shortley phase (-1)^m (SciPy's).",
}

_PARAMS = {
    "xlogy": "x, y", "xlog1py": "x, y", "rel_entr": "x, y", "kl_div": "x, y",
    "gammainc": "a, x", "gammaincc": "a, x", "gammaincinv": "a, y", "gammainccinv": "a, y",
    "betaln": "a, b", "stdtr": "df, t", "stdtrit": "df, p", "chdtr": "v, x",
    "chdtrc": "v, x", "chdtri": "v, p", "betainc": "a, b, x", "betaincc": "a, b, x",
    "betaincinv": "a, b, y", "fdtr": "dfn, dfd, x", "fdtrc": "dfn, dfd, x",
    "fdtri": "dfn, dfd, p", "boxcox": "x, lmbda", "boxcox1p": "x, lmbda",
    "inv_boxcox": "y, lmbda", "inv_boxcox1p": "y, lmbda", "huber": "delta, r",
    "pseudo_huber": "delta, r", "poch": "z, m", "binom": "x, y", "radian": "d, m, s",
    "fdtri": "dfn, dfd, p",
    "yn": "n, x", "expn": "n, x", "exp1": "z", "spence": "z", "ellipk": "m",
    "ellipkm1": "p", "hyp1f1": "a, b, x", "lpmv": "m, v, x",
}


def _make(name, text):
    core_fn = getattr(_core, name)

    def fn(*args, out=None):
        return core_fn(*args, out=out)
    params = _PARAMS.get(name, "x")
    # SciPy's parameter names, positional-only as in SciPy's ufuncs, for help() and
    # inspect.signature (the body takes *args: one wrapper serves every arity)
    P = _inspect.Parameter
    fn.__signature__ = _inspect.Signature(
        [P(p, P.POSITIONAL_ONLY) for p in params.split(", ")] +
        [P("out", P.KEYWORD_ONLY, default=None)])
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = (f"{name}({params}, /, *, out=None)\n\n{text}\n\nElementwise, on the "
                  "operands' device (one kernel); broadcasts like any gpuarr operation. "
                  "Accuracy against SciPy: docs/special.md.")
    return fn


__all__ = []
for _table in (_UNARY, _BINARY, _TERNARY):
    for _name, _text in _table.items():
        globals()[_name] = _make(_name, _text)
        __all__.append(_name)

psi = globals()["digamma"]  # SciPy's other name for it
__all__.append("psi")

_betaln_kernel = globals()["betaln"]


def betaln(a, b, /, *, out=None):
    """betaln(a, b, /, *, out=None)

    log|B(a, b)|, the log of the beta function; inf where a or b is a pole of Gamma
    (0 or a negative integer) that a + b does not cancel, as SciPy (elementwise, on
    the operands' device).
    Accuracy against SciPy: docs/special.md."""
    # the kernel gives NaN there (lgamma's inf - inf); the pole test is a few cheap
    # kernels beside it until the C function says so itself
    def pole(v):
        return _core.logical_and(_core.less_equal(v, 0), _core.equal(_core.floor(v), v))
    r = _betaln_kernel(a, b)
    def positive_int(v):
        return _core.logical_and(_core.greater(v, 0), _core.equal(_core.floor(v), v))
    pa, pb = pole(a), pole(b)
    # one pole, cancelled by Gamma(a + b)'s when the other argument is a positive
    # integer (B(1, -1) = -1), is not infinite; every other pole is
    other_int = _core.where(pa, positive_int(b), positive_int(a))
    cancelled = _core.logical_and(pole(_core.add(a, b)), other_int)
    inf = _core.logical_or(_core.logical_and(pa, pb), _core.logical_and(
        _core.logical_or(pa, pb), _core.logical_not(cancelled)))
    return _core.where(inf, float("inf"), r, out=out)


# --- distributions composed of the kernels above (exact compositions: a product or a
# floor before the kernel, so they add at most the product's rounding) ---------------

def gdtr(a, b, x, /, *, out=None):
    """gdtr(a, b, x, /, *, out=None)

    The gamma distribution's CDF with rate a and shape b, at x: gammainc(b, a * x)
    (NaN for a negative rate or x, as SciPy)."""
    r = _core.gammainc(b, _core.multiply(a, x))
    bad = _core.logical_or(_core.less(a, 0), _core.less(x, 0))
    return _core.where(bad, float("nan"), r, out=out)


def gdtrc(a, b, x, /, *, out=None):
    """gdtrc(a, b, x, /, *, out=None)

    The gamma distribution's survival function 1 - gdtr(a, b, x):
    gammaincc(b, a * x)."""
    r = _core.gammaincc(b, _core.multiply(a, x))
    bad = _core.logical_or(_core.less(a, 0), _core.less(x, 0))
    return _core.where(bad, float("nan"), r, out=out)


def pdtr(k, m, /, *, out=None):
    """pdtr(k, m, /, *, out=None)

    The Poisson CDF: the probability of at most floor(k) events at mean m,
    gammaincc(floor(k) + 1, m) (NaN for k < 0, as SciPy)."""
    r = _core.gammaincc(_core.add(_core.floor(k), 1), m)
    return _core.where(_core.less(k, 0), float("nan"), r, out=out)


def pdtrc(k, m, /, *, out=None):
    """pdtrc(k, m, /, *, out=None)

    The Poisson survival function 1 - pdtr(k, m): gammainc(floor(k) + 1, m)."""
    r = _core.gammainc(_core.add(_core.floor(k), 1), m)
    return _core.where(_core.less(k, 0), float("nan"), r, out=out)


# --- the binomial, negative binomial and Poisson distributions' functions over the
# incomplete beta and gamma kernels (SciPy's definitions: k and n are whole numbers,
# floored; NaN outside each domain) ---------------------------------------------------

def _any(*conds):
    r = conds[0]
    for c in conds[1:]:
        r = _core.logical_or(r, c)
    return r


def _outside(p, k, n=None, top=1.0):
    """NaN's mask: p NaN or outside [0, top], k < 0, an infinite k or n"""
    conds = [_core.less(p, 0), _core.greater(p, top), _core.isnan(p), _core.less(k, 0),
             _core.isinf(k)]
    if n is not None:
        conds.append(_core.isinf(n))
    return _any(*conds)


def bdtr(k, n, p, /, *, out=None):
    """bdtr(k, n, p, /, *, out=None)

    The binomial CDF: the probability of at most floor(k) successes in floor(n)
    trials of probability p, betaincc(k + 1, n - k, p) (1 at k == n; NaN for k < 0,
    k > n or p outside [0, 1], as SciPy)."""
    k, n = _core.floor(k), _core.floor(n)
    r = _core.betaincc(_core.add(k, 1), _core.subtract(n, k), p)
    r = _core.where(_core.equal(k, n), 1.0, r)
    bad = _core.logical_or(_outside(p, k, n), _core.greater(k, n))
    return _core.where(bad, float("nan"), r, out=out)


def bdtrc(k, n, p, /, *, out=None):
    """bdtrc(k, n, p, /, *, out=None)

    The binomial survival function 1 - bdtr(k, n, p): betainc(k + 1, n - k, p) (1 for
    k < 0, 0 at k == n, as SciPy)."""
    k, n = _core.floor(k), _core.floor(n)
    r = _core.betainc(_core.add(k, 1), _core.subtract(n, k), p)
    r = _core.where(_core.equal(k, n), 0.0, r)
    r = _core.where(_core.less(k, 0), 1.0, r)
    bad = _any(_core.less(p, 0), _core.greater(p, 1), _core.isnan(p), _core.isinf(k),
               _core.isinf(n), _core.isnan(n), _core.greater(k, n))
    return _core.where(bad, float("nan"), r, out=out)


def bdtri(k, n, y, /, *, out=None):
    """bdtri(k, n, y, /, *, out=None)

    The inverse of bdtr in p: the p with bdtr(k, n, p) == y, from
    betaincinv(n - k, k + 1, y) = 1 - p where p is the larger, and directly as
    betaincinv(k + 1, n - k, 1 - y) where it is the smaller (1 - w would cancel)
    (NaN for k < 0 or k >= n, as SciPy)."""
    k, n = _core.floor(k), _core.floor(n)
    k1, nk = _core.add(k, 1), _core.subtract(n, k)
    w = _core.betaincinv(nk, k1, y)
    r = _core.where(_core.less(w, 0.5), _core.subtract(1.0, w),
                    _core.betaincinv(k1, nk, _core.subtract(1.0, y)))
    bad = _core.logical_or(_outside(y, k, n), _core.greater_equal(k, n))
    return _core.where(bad, float("nan"), r, out=out)


def _nbdtr_bad(k, n, p):
    return _core.logical_or(_outside(p, k, n), _core.less(n, 1))


def nbdtr(k, n, p, /, *, out=None):
    """nbdtr(k, n, p, /, *, out=None)

    The negative binomial CDF: the probability of at most floor(k) failures before
    the floor(n)-th success, betainc(n, k + 1, p) (NaN for k < 0 or n < 1)."""
    k, n = _core.floor(k), _core.floor(n)
    r = _core.betainc(n, _core.add(k, 1), p)
    return _core.where(_nbdtr_bad(k, n, p), float("nan"), r, out=out)


def nbdtrc(k, n, p, /, *, out=None):
    """nbdtrc(k, n, p, /, *, out=None)

    The negative binomial survival function 1 - nbdtr(k, n, p):
    betaincc(n, k + 1, p)."""
    k, n = _core.floor(k), _core.floor(n)
    r = _core.betaincc(n, _core.add(k, 1), p)
    return _core.where(_nbdtr_bad(k, n, p), float("nan"), r, out=out)


def nbdtri(k, n, y, /, *, out=None):
    """nbdtri(k, n, y, /, *, out=None)

    The inverse of nbdtr in p: the p with nbdtr(k, n, p) == y,
    betaincinv(n, k + 1, y)."""
    k, n = _core.floor(k), _core.floor(n)
    r = _core.betaincinv(n, _core.add(k, 1), y)
    return _core.where(_nbdtr_bad(k, n, y), float("nan"), r, out=out)


def pdtri(k, y, /, *, out=None):
    """pdtri(k, y, /, *, out=None)

    The inverse of pdtr in m: the Poisson mean m with pdtr(k, m) == y,
    gammainccinv(floor(k) + 1, y) (NaN for k < 0 or y outside [0, 1), as SciPy)."""
    k = _core.floor(k)
    r = _core.gammainccinv(_core.add(k, 1), y)
    bad = _core.logical_or(_outside(y, k), _core.greater_equal(y, 1))
    return _core.where(bad, float("nan"), r, out=out)


def _scipy_float(x):
    """x as an array of SciPy's loop dtype for a function whose float64 loop comes
    first: float32 and float64 stay, everything else (bool, integers, float16) is
    float64."""
    x = x if isinstance(x, _core.Array) else _core.asarray(x)
    if x.dtype in (_core.float32, _core.float64):
        return x
    return _core.astype(x, _core.float64)


def exp2(x, /, *, out=None):
    """exp2(x, /, *, out=None)

    2**x. The array API's exp2 (the same kernel, and its gradient), with SciPy's
    type resolution: integers and float16 give float64."""
    return _core.exp2(_scipy_float(x), out=out)


def zeta(x, q=None, /, *, out=None):
    """zeta(x, q=None, /, *, out=None)

    Hurwitz's zeta function sum_{k >= 0} (k + q)**-x (NaN for x < 1, as SciPy); with
    q left out, Riemann's zeta function (defined for every x but its pole at 1).
    Elementwise, on the operands' device (one kernel). Accuracy against SciPy:
    docs/special.md."""
    if q is None:
        return _core.riemann_zeta(x, out=out)
    return _core.zeta(x, q, out=out)


def polygamma(n, x, /, *, out=None):
    """polygamma(n, x, /, *, out=None)

    The n-th derivative of digamma: digamma(x) for n == 0, else
    (-1)**(n + 1) * Gamma(n + 1) * zeta(n + 1, x), SciPy's formula as SciPy writes it
    (so NaN where (-1)**(n + 1) is, for a non-integer n). Differentiable in x (the
    result's derivative is polygamma(n + 1, x), PyTorch's formula)."""
    n1 = _core.add(n, 1.0)
    fac = _core.multiply(_core.multiply(_core.pow(-1.0, n1), _core.gamma(n1)),
                         _core.zeta(n1, x))
    return _core.where(_core.equal(n, 0), _core.digamma(x), fac, out=out)


def multigammaln(a, d, /):
    """multigammaln(a, d, /)

    The log of the multivariate gamma function of dimension d:
    d (d - 1) / 4 log(pi) + sum_{j=1..d} gammaln(a - (j - 1) / 2). d is a positive
    Python integer; every a must be > (d - 1) / 2, as SciPy asks (the check reads
    one bool back from the device). Differentiable in a (through gammaln)."""
    import math
    if isinstance(d, bool) or not isinstance(d, (int, float)) or d != int(d) or d < 1:
        raise ValueError(f"multigammaln: d must be a positive integer (the dimension), "
                         f"got {d!r}")
    d = int(d)
    a = a if isinstance(a, _core.Array) else _core.asarray(a)
    if bool(_core.less_equal(a, 0.5 * (d - 1)).any()):
        raise ValueError(f"multigammaln: every a must be > (d - 1) / 2 = {0.5 * (d - 1)} "
                         f"for d = {d}: some are not")
    r = _core.gammaln(a)
    for j in range(2, d + 1):
        r = _core.add(r, _core.gammaln(_core.subtract(a, 0.5 * (j - 1))))
    return _core.add(r, d * (d - 1) * 0.25 * math.log(math.pi))


__all__ += ["gdtr", "gdtrc", "pdtr", "pdtrc", "exp2", "zeta", "polygamma", "multigammaln",
            "bdtr", "bdtrc", "bdtri", "nbdtr", "nbdtrc", "nbdtri", "pdtri"]
__all__.sort()


# --- complex arguments ------------------------------------------------------------------
# gpuarr.special has real kernels only. Without this check a complex argument would
# fail inside whichever kernel came first (naming gammainc for gdtr, floor for pdtr) or,
# worse, be cast to float64 on the way (exp2's SciPy type rule), dropping the
# imaginary part without a word. So every public function refuses it up front.

# SciPy 1.17's functions of the 92 with complex loops: for these the error says where
# the complex value can be had (SciPy, on the host)
_SCIPY_HAS_COMPLEX = frozenset({
    "erf", "erfc", "erfcx", "exp1", "expi", "gamma", "hyp1f1", "log_ndtr", "loggamma",
    "ndtr", "psi", "digamma", "rgamma", "spence", "xlog1py", "xlogy"})


def _complex_dtype(a):
    """The name of a's complex dtype (a gpuarr or NumPy array or scalar, or a Python
    complex), or None when a is real"""
    if isinstance(a, complex) and not hasattr(a, "dtype"):
        return "a Python complex"
    dt = getattr(a, "dtype", None)
    return str(dt) if getattr(dt, "kind", None) == "c" else None


def _real_only(fn):
    name = fn.__name__

    @_functools.wraps(fn)
    def checked(*args, **kwargs):
        for a in args:
            dt = _complex_dtype(a)
            if dt is not None:
                host = (f"; SciPy's has a complex loop, on the host: "
                        f"scipy.special.{name}(x.numpy())" if name in _SCIPY_HAS_COMPLEX
                        else "")
                raise TypeError(f"gpuarr.special.{name} takes real arguments, got {dt}: "
                                "gpuarr.special has no complex kernels (for a real value "
                                f"held in a complex array, pass x.real){host}")
        return fn(*args, **kwargs)
    return checked


for _name in __all__:
    if _name != "psi":
        globals()[_name] = _real_only(globals()[_name])
psi = globals()["digamma"]  # one object under both names
del _table, _name, _text
