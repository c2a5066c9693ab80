"""gpuarr.special's Bessel functions (j0, j1, y0, y1, yn, k0, k0e, k1, k1e), exponential
integrals (exp1, expi, expn), complete elliptic integrals (ellipk, ellipkm1) and Spence's
function against SciPy, as tests/core/test_special.py checks the others (and with its
helpers): a fixed sample of each domain within the ulp bounds of docs/special.md (this
file's BOUNDS), the special values, SciPy's dtypes (yn's and expn's integer order
included), and the gradients of the Bessel functions.

`python tests/core/test_special_bessel_expint.py` prints these rows of the accuracy
table of docs/special.md."""
import numpy as np
import pytest

import gpuarr
from gpuarr import special
from test_special import _logu, _rng, _run, _scipy, _special_args, scipy_special, ulp_error

INF, NAN = np.inf, np.nan


def _sample(name, n=600):
    """The fixed sample of `name` (seeded): uniform and log-uniform draws over its
    domain. J and Y stop at x = 100: beyond, SciPy rounds the phase x - pi/4 (at
    x = 4e4 its j0 is 1e7 ulp off, at 1e40 every digit is), which mpmath says
    gpuarr does not."""
    r = _rng()
    u, lu = r.uniform, lambda lo, hi, m=n: _logu(r, lo, hi, m)
    c = np.concatenate
    table = {
        "j0": (c([u(-100, 100, n), lu(1e-300, 100), -lu(1e-300, 100)]),),
        "j1": (c([u(-100, 100, n), lu(1e-300, 100), -lu(1e-300, 100)]),),
        "y0": (c([u(0, 100, n), lu(1e-300, 100)]),),
        "y1": (c([u(0, 100, n), lu(1e-300, 100)]),),
        "yn": (np.floor(u(-20, 20, n)), c([u(0, 60, n // 2), lu(1e-3, 60, n - n // 2)])),
        "k0": (c([u(0, 700, n), lu(1e-300, 1e300)]),),
        "k0e": (c([u(0, 700, n), lu(1e-300, 1e300)]),),
        "k1": (c([u(0, 700, n), lu(1e-300, 1e300)]),),
        "k1e": (c([u(0, 700, n), lu(1e-300, 1e300)]),),
        "exp1": (c([u(0, 10, n), lu(1e-300, 700)]),),
        "expi": (c([u(-50, 50, n), lu(1e-300, 700), -lu(1e-300, 700)]),),
        "expn": (np.floor(u(0, 60, n)), c([lu(1e-10, 1, n // 2), lu(1, 700, n - n // 2)])),
        "ellipk": (c([u(-10, 1, n), 1 - lu(1e-16, 1), -lu(1e-300, 1e300)]),),
        "ellipkm1": (c([u(0, 1, n), lu(1e-300, 1e300)]),),
        "spence": (c([u(0, 3, n), lu(1e-300, 1e300)]),),
    }
    return np.broadcast_arrays(*table[name])


# Max ulp over _sample: float64 against SciPy's float64; float32 against SciPy's float64
# value at the float32 arguments, rounded to float32. The J and Y bounds are set by the
# sample points nearest their zeros, where SciPy's absolute error is a large relative
# one (mpmath at each worst point: gpuarr within 67 ulp, SciPy the rest; so for expi,
# expn and spence: docs/special.md).
BOUNDS = {
    "j0": (7.2e4, 1), "j1": (1e4, 1), "y0": (5600, 1), "y1": (2800, 1), "yn": (1100, 1),
    "k0": (6, 1), "k0e": (6, 1), "k1": (6, 1), "k1e": (6, 1),
    "exp1": (9, 1), "expi": (190, 1), "expn": (100, 1),
    "ellipk": (4, 1), "ellipkm1": (4, 1), "spence": (16, 1),
}
NAMES = sorted(BOUNDS)
NIN = {n: len(_sample(n, 4)) for n in NAMES}


def bound64(name):
    """As test_special's: twice the CPU's bound and at least 4 on every device (CUDA's
    exp, log, sin, cos are within a few ulp of the C library's)."""
    return max(4, 2 * BOUNDS[name][0])


def _worst(name, args, err):
    worst = int(np.argmax(err))
    return f"{name}{tuple(float(a[worst]) for a in args)}: {err[worst]:.3g} ulp"


@pytest.mark.parametrize("name", NAMES)
def test_float64_within_its_ulp_bound_of_scipy(device, name):
    args = _sample(name)
    err = ulp_error(_run(name, args, np.float64, device), _scipy(name, args, np.float64),
                    np.float64)
    assert err.max() <= bound64(name), _worst(name, args, err)


def _float32_case(name):
    with np.errstate(over="ignore"):
        args = [a.astype(np.float32) for a in _sample(name)]
    keep = np.all([np.isfinite(a) for a in args], axis=0)
    args = [a[keep] for a in args]
    with np.errstate(over="ignore"):
        want = _scipy(name, [a.astype(np.float64) for a in args],
                      np.float64).astype(np.float32)
    return args, want


@pytest.mark.parametrize("name", NAMES)
def test_float32_rounds_the_double_result(device, name):
    args, want = _float32_case(name)
    err = ulp_error(_run(name, args, np.float32, device), want, np.float32)
    assert err.max() <= BOUNDS[name][1], _worst(name, args, err)


# Where gpuarr's special value differs from SciPy's (docs/special.md): SciPy 1.17 gives
# NaN at +-inf for the oscillating J and Y, whose limit is 0 (|J_n(x)|, |Y_n(x)| <=
# sqrt(2/(pi x))), and rounds the phase x - pi/4 at x = 1e300 (no digit right: the
# values below are mpmath's, at 340 digits); spence(inf) is the limit -inf (SciPy: NaN)
J0_BIG, Y0_BIG = -7.860673062724093e-151, -1.3681360450342481e-151  # at x = 1e300
DIFFERENCES = {
    ("j0", (INF,)): 0.0, ("j0", (-INF,)): 0.0, ("j1", (INF,)): 0.0, ("j1", (-INF,)): -0.0,
    ("y0", (INF,)): 0.0, ("y1", (INF,)): 0.0,
    **{("yn", (n, INF)): 0.0 for n in (0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, 1e300)},
    # J1 = Y0 and Y1 = -J0 there (Hankel's expansion's first term)
    ("j0", (1e300,)): J0_BIG, ("j0", (-1e300,)): J0_BIG, ("j1", (1e300,)): Y0_BIG,
    ("j1", (-1e300,)): -Y0_BIG, ("y0", (1e300,)): Y0_BIG, ("y1", (1e300,)): -J0_BIG,
    **{("yn", (n, 1e300)): Y0_BIG for n in (0.0, 0.5, 1e-300)},
    ("yn", (1.0, 1e300)): -J0_BIG, ("yn", (-1.0, 1e300)): J0_BIG,
    ("yn", (2.0, 1e300)): -Y0_BIG,
    ("spence", (INF,)): -INF,
}
# SciPy's yn loops without end for an order past the int range at x = 1e300 (gpuarr:
# NaN there, where it cannot tell the value): those points are not sent to SciPy
NOT_ASKED = {("yn", (n, 1e300)): NAN for n in (INF, -INF, 1e300)}


def _scipy_special_values(name, args):
    asked = np.ones(args[0].shape, bool)
    for key in NOT_ASKED:
        if key[0] == name:
            asked &= ~np.all([a == v for a, v in zip(args, key[1])], axis=0)
    want = np.full(args[0].shape, np.nan)
    want[asked] = _scipy(name, [a[asked] for a in args], np.float64)
    return want


@pytest.mark.parametrize("name", NAMES)
def test_special_values_are_scipys(device, name):
    args = _special_args(NIN[name])
    got = _run(name, args, np.float64, device)
    want = _scipy_special_values(name, args)
    for key, value in DIFFERENCES.items():
        if key[0] == name:
            want[np.all([a == v for a, v in zip(args, key[1])], axis=0)] = value
    err = ulp_error(got, want, np.float64)
    # a signed zero is a special value too: SciPy's sign, where both are 0
    zero = (got == 0) & (want == 0)
    err[zero & (np.signbit(got) != np.signbit(want))] = np.inf
    bad = np.flatnonzero(err > bound64(name))
    assert bad.size == 0, "; ".join(
        f"{name}{tuple(float(a[i]) for a in args)} = {got[i]!r}, SciPy {want[i]!r}"
        for i in bad[:8])


@pytest.mark.parametrize("dtype", ["bool", "int16", "float16", "int64", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_integer_and_half_inputs_promote_as_scipy(device, name, dtype):
    vals = [np.array([1, 1, 0], dtype=dtype)] * NIN[name]
    with np.errstate(all="ignore"):
        want = np.asarray(getattr(scipy_special, name)(*vals))
    r = getattr(special, name)(*[gpuarr.asarray(v, device=device) for v in vals])
    assert r.dtype == getattr(gpuarr, want.dtype.name)


@pytest.mark.parametrize("name", ["yn", "expn"])
def test_an_integer_order_gives_float64_as_scipys_integer_loop(device, name):
    """SciPy's yn and expn list an (integer order, double) loop first: an integer or
    bool order gives float64 even for a float32 x; a float order keeps x's float32."""
    x = np.array([0.5, 3.0], np.float32)
    xg = gpuarr.asarray(x, device=device)
    f, ref = getattr(special, name), getattr(scipy_special, name)
    for n, ng in [(2, 2), (True, True), (2.0, 2.0),
                  (np.array([2, 3], np.int16), None), (np.array([2, 3], np.float32), None)]:
        ng = gpuarr.asarray(n, device=device) if ng is None else ng
        want = np.asarray(ref(n, x))
        r = f(ng, xg)
        assert r.dtype == getattr(gpuarr, want.dtype.name), (n, want.dtype)
        np.testing.assert_allclose(r.numpy(), want, rtol=1e-6)


def test_a_fractional_order_is_truncated_as_scipys(device):
    x = gpuarr.asarray(np.array([0.5, 3.0]), device=device)
    for name in ("yn", "expn"):
        with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
            want = getattr(scipy_special, name)(2.7, np.array([0.5, 3.0]))
        np.testing.assert_allclose(getattr(special, name)(2.7, x).numpy(), want, rtol=1e-14)


# --- gradients: A&S 9.1.28 and 9.6.27, against central differences of SciPy ------------

GRADS = {
    "j0": np.linspace(-6, 6, 9), "j1": np.linspace(-6, 6, 9),
    "y0": np.linspace(0.5, 8, 9), "y1": np.linspace(0.5, 8, 9),
    "k0": np.linspace(0.3, 5, 9), "k1": np.linspace(0.3, 5, 9),
    "k0e": np.linspace(0.3, 5, 9), "k1e": np.linspace(0.3, 5, 9),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradient_matches_central_differences(device, name):
    a = GRADS[name]
    x = gpuarr.asarray(a, device=device).requires_grad_(True)
    getattr(special, name)(x).sum().backward()
    f, h = getattr(scipy_special, name), 1e-6
    np.testing.assert_allclose(x.grad.numpy(), (f(a + h) - f(a - h)) / (2 * h),
                               rtol=1e-6, atol=1e-8)


def test_j1_gradient_at_0_is_one_half(device):
    x = gpuarr.asarray(np.zeros(2), device=device).requires_grad_(True)
    special.j1(x).sum().backward()
    assert np.all(x.grad.numpy() == 0.5)


@pytest.mark.parametrize("name", ["yn", "exp1", "expi", "expn", "ellipk", "spence"])
def test_no_gradient_where_pytorch_has_no_function(device, name):
    x = gpuarr.asarray(np.array([0.5]), device=device).requires_grad_(True)
    args = (2.0, x) if NIN[name] == 2 else (x,)
    assert not getattr(special, name)(*args).requires_grad


def _table():
    """The rows of docs/special.md's accuracy table for these functions (CPU device)."""
    rows = []
    for name in NAMES:
        args = _sample(name)
        e64 = ulp_error(_run(name, args, np.float64, gpuarr.cpu()),
                        _scipy(name, args, np.float64), np.float64).max()
        args32, want32 = _float32_case(name)
        got32 = _run(name, args32, np.float32, gpuarr.cpu())
        e32 = ulp_error(got32, want32, np.float32).max()
        e32s = ulp_error(got32, _scipy(name, args32, np.float32), np.float32).max()
        rows.append(f"| {name} | {e64:.3g} | {e32:.3g} | {e32s:.3g} | {len(args[0])} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(_table())
