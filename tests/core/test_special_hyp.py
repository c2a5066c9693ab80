"""gpuarr.special's hyp1f1 (Kummer's confluent hypergeometric function) and lpmv (the
associated Legendre function of integer order and real degree) against SciPy, as
tests/core/test_special.py checks the others (and with its helpers): a fixed sample of
each domain within the ulp bounds of docs/special.md (this file's BOUNDS), points where
mpmath says SciPy is off, the special values and SciPy's dtypes.

`python tests/core/test_special_hyp.py` prints these rows of the accuracy table of
docs/special.md."""
import functools

import numpy as np
import pytest

import gpuarr
from gpuarr import special
from test_special import _logu, _rng, _run, _scipy, _special_args, scipy_special, ulp_error

INF, NAN = np.inf, np.nan


def _sample(name, n=600):
    """The fixed sample of `name` (seeded). hyp1f1: a in (-10, 10), b mostly in
    (0.1, 10) and a quarter in (-10, -0.05), x in (-60, 60) and log-uniform out to
    +-700. lpmv: orders -6..6, real and integer degrees in (-20, 20), x in [-0.9, 1]
    (next to x = -1 the series converges slowly and the recurrence in degree amplifies
    its error: docs/special.md)."""
    r = _rng()
    u, lu = r.uniform, lambda lo, hi, m=n: _logu(r, lo, hi, m)
    c = np.concatenate
    q = n // 4
    table = {
        "hyp1f1": (u(-10, 10, n), c([u(0.1, 10, n - q), -u(0.05, 10, q)]),
                   c([u(-60, 60, n - 2 * q), lu(1e-10, 700, q), -lu(1e-10, 700, q)])),
        "lpmv": (np.floor(u(-6, 7, n)), c([u(-20, 20, n - q), np.floor(u(-20, 20, q))]),
                 c([u(-0.9, 1, n - q), 1 - lu(1e-4, 1, q)])),
    }
    return np.broadcast_arrays(*table[name])


# Max ulp over _sample: float64 against SciPy's float64; float32 against SciPy's float64
# value at the float32 arguments, rounded to float32. At the worst points mpmath says
# SciPy is the one off for hyp1f1; for lpmv both lose digits where the recurrence in
# degree cancels (docs/special.md).
BOUNDS = {"hyp1f1": (4400, 1), "lpmv": (2400, 1)}
NAMES = sorted(BOUNDS)


def bound64(name):
    """As test_special's: twice the CPU's bound and at least 4 on every device (CUDA's
    exp, log, pow are within a few ulp of the C library's)."""
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
    args = [a.astype(np.float32) for a in _sample(name)]
    with np.errstate(over="ignore"):
        want = _scipy(name, [a.astype(np.float64) for a in args],
                      np.float64).astype(np.float32)
    return args, want


@pytest.mark.parametrize("name", NAMES)
def test_float32_rounds_the_double_result(device, name):
    args, want = _float32_case(name)
    err = ulp_error(_run(name, args, np.float32, device), want, np.float32)
    assert err.max() <= BOUNDS[name][1], _worst(name, args, err)


# Points where SciPy 1.17 is off and gpuarr has mpmath's value (50 digits), to a few
# ulp: the series' cancellation (SciPy: hundreds to thousands of ulp), M at a tiny x
# (SciPy: NaN at x = -5e-214), and lpmv where SciPy's recurrence loses more
SCIPY_OFF = {
    ("hyp1f1", (0.1881365642020505, 7.013976596248374, -5.017163078453777e-214)): 1.0,
    ("hyp1f1", (0.32632464686041196, -8.426305223695643, -1.6039106844716713)):
        1.0733968316630185,
    ("hyp1f1", (9.610159503569726, 5.572032565882634, -2.64123339177916)):
        -2.7885425674072537e-05,
    ("hyp1f1", (-6.055301054082629, 0.2525904435995038, 46.83552068906633)):
        -3181841939806.497,
    ("hyp1f1", (5.564964522038565, 1.5724655354591708, -46.64647110508333)):
        1.635639702948175e-10,
    # the worst three of hyp1f1's sample (SciPy 3232, 3764, 1898 ulp off)
    ("hyp1f1", (-8.670601296305085, 3.899278756417584, 33.70096800634809)):
        43.236589565205755,
    ("hyp1f1", (-2.998414351522431, 8.769813369595969, 47.00409635890618)):
        -4589.226120124642,
    ("hyp1f1", (-6.086266714270163, 5.300320363540812, 6.731396506242113)):
        0.0008210698755062321,
    # next to x = 1 SciPy's (1 - x^2)^(m/2) loses digits (1.9e7 ulp at 1 - 1.2e-8),
    # and lpmv's sample's worst points (SciPy 1154 and 1023 ulp off; gpuarr's
    # recurrence in degree leaves 506 ulp of the value at the first, next to a zero)
    ("lpmv", (-6.0, 7.0, 0.9999999879885776)): 3.008574875900728e-28,
    ("lpmv", (-6.0, 19.54183608974543, -0.2820281195202342)): -9.457446452734693e-11,
    ("lpmv", (-2.0, -17.0, 0.9998782938459791)): 3.0260850647053436e-05,
}
SCIPY_OFF_ULP = 600


@pytest.mark.parametrize("key", sorted(SCIPY_OFF), ids=lambda k: f"{k[0]}{k[1]}")
def test_where_scipy_is_off_gpuarr_has_mpmaths_value(device, key):
    name, point = key
    args = [np.array([v]) for v in point]
    got = _run(name, args, np.float64, device)
    err = ulp_error(got, np.array([SCIPY_OFF[key]]), np.float64)
    assert err.max() <= SCIPY_OFF_ULP, (key, got)


# Where gpuarr's special value differs from SciPy's (docs/special.md)
DIFFERENCES = {}


def _hyp1f1_at_infinite_x(a, b):
    """SciPy 1.17's hyp1f1 does not return at some x = inf (hyp1f1(1, 0.5, inf) loops)
    and gives NaN at most others: those points are not sent to it. gpuarr: NaN at
    x = +-inf but the line 1 - x/b at a = -1, inf at a pole of b (b = 0, -1, ...) and
    1 at a = 0, as at finite x."""
    pole = (b <= 0) & (b == np.floor(b))
    with np.errstate(all="ignore"):
        line = 1.0 - INF / b  # M(-1, b, x) = 1 - x/b, taken before the poles (SciPy's)
    return np.where(np.isnan(a) | np.isnan(b), NAN,
                    np.where((a == -1) & (b != 0), line,
                             np.where(pole, INF, np.where(a == 0, 1.0, NAN))))


@functools.lru_cache(maxsize=None)
def _scipy_special_values_once(name):
    """SciPy's values at the special points, once per session: its lpmv takes seconds
    over them (gpuarr: under a millisecond), and every device mode asks."""
    values = _scipy_special_values(name, _special_args(3))
    values.flags.writeable = False
    return values


def _scipy_special_values(name, args):
    if name == "lpmv":
        # SciPy's lpmv gives +-inf for a NaN or infinite order or degree at x = +-1 and
        # for x = inf; gpuarr: NaN (no limit exists there)
        m, v, x = args
        want = _scipy(name, args, np.float64)
        want[~np.isfinite(m) | ~np.isfinite(v) | np.isinf(x)] = NAN
        return want
    a, b, x = args
    asked = np.isfinite(x) | np.isnan(x)
    want = _hyp1f1_at_infinite_x(a, b)
    want[asked] = _scipy(name, [v[asked] for v in args], np.float64)
    return want


@pytest.mark.parametrize("name", NAMES)
def test_special_values_are_scipys(device, name):
    args = _special_args(3)
    got = _run(name, args, np.float64, device)
    want = _scipy_special_values_once(name).copy()
    for key, value in DIFFERENCES.items():
        if key[0] == name:
            want[np.all([a == v for a, v in zip(args, key[1])], axis=0)] = value
    err = ulp_error(got, want, np.float64)
    if name == "hyp1f1":
        # a signed zero is a special value too (lpmv's exact zeros at a zero of the
        # polynomial have SciPy's sign or the other, as the recurrence rounds)
        zero = (got == 0) & (want == 0)
        err[zero & (np.signbit(got) != np.signbit(want))] = np.inf
    bad = np.flatnonzero(err > bound64(name))
    assert bad.size == 0, "; ".join(
        f"{name}{tuple(float(a[i]) for a in args)} = {got[i]!r}, SciPy {want[i]!r}"
        for i in bad[:8])


def test_lpmv_is_nan_where_its_series_has_not_converged(device):
    """Next to x = -1 with a fractional degree the series would need more than
    GA_SP_LPMV_TERMS terms: NaN, not a truncated sum (mpmath: lpmv(0, 0.5, -0.99999)
    = -5.48...)."""
    r = special.lpmv(0.0, 0.5, gpuarr.asarray(np.array([-0.99999, -0.5]), device=device))
    got = r.numpy()
    assert np.isnan(got[0])
    np.testing.assert_allclose(got[1], scipy_special.lpmv(0, 0.5, -0.5), rtol=1e-14)


@pytest.mark.parametrize("dtype", ["bool", "int16", "float16", "int64", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_integer_and_half_inputs_promote_as_scipy(device, name, dtype):
    vals = [np.array([1, 1, 0], dtype=dtype)] * 3
    with np.errstate(all="ignore"):
        want = np.asarray(getattr(scipy_special, name)(*vals))
    r = getattr(special, name)(*[gpuarr.asarray(v, device=device) for v in vals])
    assert r.dtype == getattr(gpuarr, want.dtype.name)
    np.testing.assert_allclose(r.numpy(), want, rtol=1e-15)  # CUDA's exp: an ulp


def test_no_gradient_where_pytorch_has_no_function(device):
    x = gpuarr.asarray(np.array([0.5]), device=device).requires_grad_(True)
    assert not special.hyp1f1(1.0, 2.0, x).requires_grad
    assert not special.lpmv(1.0, 2.0, x).requires_grad


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
