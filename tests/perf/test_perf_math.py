"""The CPU backend's vectorised math (csrc/cpu/ga_vmath.h): exp, log, sin, cos, tanh and
pow for float32 and float64, against a high-precision reference
(np.longdouble: 64-bit mantissa on x86, libm's *l functions) over every binade,
subnormal inputs and results, the overflow and underflow thresholds, large sin/cos
arguments (the vector path covers |x| < 1e6, libm the rest); special values exactly as
NumPy gives them; contiguous, strided, scalar-operand and in-place layouts. On the CPU
and on simulated GPUs (the devices that run these kernels).

The bounds are the ones ga_vmath.h states. Measured maxima over these inputs (and over
10x more while writing them), in ulps of the result's dtype:
    float32: exp 0.97, log 0.50, sin 0.50, cos 0.50, tanh 0.50, pow 0.50
    float64: exp 0.81, log 0.73, sin 0.83, cos 0.83, tanh 1.8, pow 0.64
(NumPy's own float32 loops measure 1.4 to 3.3 on the same inputs: its SIMD code is
float arithmetic, ours computes in double except exp.)"""
import math
import os

import numpy as np
import pytest

import gpuarr

L = np.longdouble
F32, F64 = np.float32, np.float64


def _cpu_kernel_devices():
    """cpu(0), and the simulated GPUs (they run the same CPU kernels); real and emulated
    CUDA devices have their own math (CUDA's expf is within 2 ulp, not 1)."""
    devs = [gpuarr.cpu()]
    if os.environ.get("GPUARR_SIMULATE_GPUS") and not os.environ.get("GPUARR_CUDA_EMULATE"):
        devs += [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]
    return devs


@pytest.fixture(params=_cpu_kernel_devices(), ids=repr)
def cpu_kernels(request):
    """Each device of this process that runs the CPU backend's kernels."""
    return request.param


def ulp_error(got, ref, dt):
    """|got - ref| in ulps of dt at ref (ref in long double), for the entries whose
    rounded reference and result are both finite."""
    with np.errstate(all="ignore"):
        refd = ref.astype(dt)
        fin = np.isfinite(refd) & np.isfinite(got)
        sp = np.spacing(np.abs(refd[fin])).astype(L)
        return np.abs(got[fin].astype(L) - ref[fin]) / sp


def ulp_distance(a, b):
    """Distance in float32 ulps between two float32 arrays (finite entries)."""
    ia = a.astype(np.float32).view(np.int32).astype(np.int64)
    ib = b.astype(np.float32).view(np.int32).astype(np.int64)
    # map the sign-magnitude bit patterns onto a monotonic integer line
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


def positive_floats(rng, dt, n):
    """Random bit patterns of positive finite numbers: every binade equally often,
    subnormals included."""
    if dt == F32:
        return rng.integers(1, 0x7F800000, n).astype(np.int32).view(F32)
    return rng.integers(1, 0x7FF0000000000000, n, dtype=np.int64).view(F64)


def inputs(name, dt, rng):
    n = 200_000
    f32 = dt == F32
    if name == "exp":
        lo, hi = (-104.0, 89.0) if f32 else (-746.0, 710.0)
        sub = (-103.97, -87.34) if f32 else (-745.13, -708.4)  # subnormal results
        top = np.log(np.finfo(dt).max).astype(float)
        parts = [rng.uniform(lo, hi, n), rng.normal(0, 1, n), rng.uniform(-1e-6, 1e-6, n // 4),
                 rng.uniform(*sub, n // 4), top + rng.uniform(-1e-3, 1e-3, n // 8),
                 np.linspace(-1, 1, 2001) * np.log(2) * 64]  # around each k ln 2
    elif name == "log":
        parts = [positive_floats(rng, dt, n), 1 + rng.uniform(-1e-3, 1e-3, n // 4),
                 np.arange(1, 5000).view(np.int32 if f32 else np.int64).view(dt)]
    elif name in ("sin", "cos"):
        near = np.arange(1, 50_000) * (np.pi / 2)  # the doubles closest to k pi/2
        parts = [rng.uniform(-10, 10, n), rng.uniform(-1e5, 1e5, n // 2),
                 rng.uniform(-1e6, 1e6, n // 4), rng.uniform(-1e-3, 1e-3, n // 8),
                 near.astype(dt), -near.astype(dt),
                 np.array([1e5, 1e22, -1e22, 3e37, 1e6, -1e6, 999999.9, 1e15])]
        if not f32:  # the double nearest a multiple of pi/2 below 2^1024 and a near one
            parts.append(np.array([6381956970095103.0 * 2.0**797, 6.0e5 * np.pi]))
    elif name == "tanh":
        parts = [rng.uniform(-25, 25, n), rng.normal(0, 1, n), rng.uniform(-0.1, 0.1, n // 2),
                 rng.uniform(-1e-6, 1e-6, n // 8), positive_floats(rng, dt, n // 8)]
    else:
        raise AssertionError(name)
    with np.errstate(all="ignore"):
        return np.concatenate([np.asarray(p, dtype=float).astype(dt) for p in parts])


BOUNDS = {  # stated in ga_vmath.h, in ulps
    ("exp", F32): 1, ("log", F32): 1, ("sin", F32): 1, ("cos", F32): 1, ("tanh", F32): 1,
    ("exp", F64): 1, ("log", F64): 1, ("sin", F64): 1, ("cos", F64): 1, ("tanh", F64): 2,
}


@pytest.mark.parametrize("name,dt", list(BOUNDS), ids=lambda v: getattr(v, "__name__", v))
def test_math_is_within_its_ulp_bound_of_a_long_double_reference(name, dt):
    x = inputs(name, dt, np.random.default_rng(hash(name) % 1000))
    got = getattr(gpuarr, name)(gpuarr.asarray(x)).numpy()
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(L))
        refd = ref.astype(dt)
    # what over- or underflows (or is NaN) does so exactly as the rounded reference
    odd = ~np.isfinite(refd) | ~np.isfinite(got)
    np.testing.assert_array_equal(got[odd], refd[odd])
    if name in ("sin", "cos") and dt == F64:
        # |x| >= 1e6 is libm's (glibc's double cos is 8 ulps off at the hardest
        # argument, 6381956970095103 * 2^797): the same bits as the C library's.
        # (glibc's sinf/cosf, float32's fallback, are within the bound everywhere.)
        big = ~(np.abs(x) < 1e6)
        libm = getattr(math, name)
        np.testing.assert_array_equal(got[big], [libm(v) for v in x[big].astype(float)])
        got, ref = got[~big], ref[~big]
    assert ulp_error(got, ref, dt).max() <= BOUNDS[name, dt]


def pow_inputs(rng, n=200_000):
    """x from every binade, y chosen so that x ** y lands anywhere in float32's range
    (subnormal and overflowing results included); negative x with integer y."""
    x = positive_floats(rng, F32, n)
    t = rng.uniform(-155, 130, n)
    with np.errstate(all="ignore"):
        y = (t / np.log2(x.astype(float))).astype(F32)
    xi = -rng.uniform(0.5, 4, n // 4).astype(F32)
    yi = rng.integers(-60, 60, n // 4).astype(F32)
    xs = rng.uniform(0, 10, n // 4).astype(F32)
    ys = rng.uniform(-10, 10, n // 4).astype(F32)
    return np.concatenate([x, xi, xs]), np.concatenate([y, yi, ys])


def pow64_inputs(rng, n=200_000):
    """x from every binade (subnormals included), y putting log(x ** y) anywhere in
    [-750, 720] (results that overflow or go subnormal: libm's), x within 1e-3 of 1
    and x near sqrt(2) and sqrt(1/2) (the reduction's ends) with |y| up to 1000, where
    y log x needs log x to ~2^-68, negative x with integer y."""
    x = positive_floats(rng, F64, n)
    with np.errstate(all="ignore"):
        y = rng.uniform(-750, 720, n) / np.log(x)
    x1 = 1 + rng.uniform(-1e-3, 1e-3, n // 2)
    y1 = rng.uniform(-700, 700, n // 2) / np.log(x1)
    xe = np.concatenate([np.sqrt(2) * (1 + rng.uniform(-0.03, 0.03, n // 4)),
                         np.sqrt(0.5) * (1 + rng.uniform(-0.03, 0.03, n // 4))])
    ye = rng.uniform(-1000, 1000, n // 2)
    xi = -rng.uniform(0.5, 4, n // 4)
    yi = rng.integers(-400, 400, n // 4).astype(F64)
    xs, ys = rng.uniform(0, 10, n // 4), rng.uniform(-10, 10, n // 4)
    return np.concatenate([x, x1, xe, xi, xs]), np.concatenate([y, y1, ye, yi, ys])


@pytest.mark.parametrize("dt", [F32, F64], ids=["float32", "float64"])
def test_pow_is_within_one_ulp_of_a_long_double_reference(dt):
    # float64: ga_vpow (0.64 ulp at most over 1.6e7 such inputs while writing it;
    # NumPy's SIMD pow 0.75 on these), and libm's pow where ga_vpow_fast_ok declines
    x, y = (pow_inputs if dt == F32 else pow64_inputs)(np.random.default_rng(7))
    got = gpuarr.pow(gpuarr.asarray(x), gpuarr.asarray(y)).numpy()
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(L), y.astype(L))
        refd = ref.astype(dt)
    odd = ~np.isfinite(refd) | ~np.isfinite(got)
    np.testing.assert_array_equal(got[odd], refd[odd])
    assert ulp_error(got, ref, dt).max() <= 1


def test_float64_pow_of_a_block_with_libm_elements_keeps_the_vector_bits(cpu_kernels):
    # a block holding one element ga_vpow declines (x = 0, -1.5, inf, y huge) computes
    # the others element by element: the same bits as the vectorised block
    rng = np.random.default_rng(5)
    x = rng.uniform(0.1, 10, 2048)
    y = rng.uniform(-5, 5, 2048)
    clean = gpuarr.pow(gpuarr.asarray(x, device=cpu_kernels),
                       gpuarr.asarray(y, device=cpu_kernels)).numpy()
    for i, (bx, by) in enumerate([(0.0, 2.5), (-1.5, 3.0), (np.inf, 1.5), (2.0, 1e4)]):
        xm, ym = x.copy(), y.copy()
        xm[100 + 600 * i], ym[100 + 600 * i] = bx, by
        got = gpuarr.pow(gpuarr.asarray(xm, device=cpu_kernels),
                         gpuarr.asarray(ym, device=cpu_kernels)).numpy()
        keep = np.arange(2048) != 100 + 600 * i
        np.testing.assert_array_equal(got[keep], clean[keep])
        assert got[~keep][0] == np.power(bx, by)


SPECIAL_X = {
    F32: [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.2e-38,
          3.4028235e38, -3.4028235e38, 88.72284, 88.72285, -87.33655, -103.97, -103.98,
          -104.5, 1e6, -1e6, 1e22, 9.0, 20.0, -9.0, 2.0**-13],
    F64: [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324,
          2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
          709.782712893384, 709.7827128933841, -708.3964185322641, -745.1332191019411,
          -745.1332191019412, -746.0, 1e6, -1e6, 1e22, 19.0, 23.0, -23.0, 2.0**-29],
}


def assert_specials(got, want, bound):
    """NaN where NumPy gives NaN; infinities, zeros (with their signs) and +-1 exactly;
    other values within the bound."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    exact = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1)
    np.testing.assert_array_equal(got[exact], want[exact])
    np.testing.assert_array_equal(np.signbit(got[exact & ~np.isnan(want)]),
                                  np.signbit(want[exact & ~np.isnan(want)]))
    ok = ~exact & ~np.isnan(want)
    if ok.any():
        assert ulp_error(got[ok], want[ok].astype(L), want.dtype).max() <= bound + 1


@pytest.mark.parametrize("dt", [F32, F64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh", "sqrt"])
def test_math_special_values_match_numpy(cpu_kernels, name, dt):
    x = np.array(SPECIAL_X[dt], dt)
    got = getattr(gpuarr.asarray(x, device=cpu_kernels), name)().numpy()
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    # NumPy's own SIMD loops may be an ulp or two off where ours are not (its float32
    # exp gives 2.718282 at 1, not 2.7182817): finite values against the bound + 1
    assert_specials(got, want, BOUNDS.get((name, dt), 0))


@pytest.mark.parametrize("dt", [F32, F64], ids=["float32", "float64"])
def test_pow_special_values_match_numpy(cpu_kernels, dt):
    s = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, np.inf,
                  -np.inf, np.nan, 1e-45 if dt == F32 else 5e-324, 1e30, -1e30], dt)
    x, y = (a.ravel() for a in np.meshgrid(s, s, indexing="ij"))
    got = gpuarr.pow(gpuarr.asarray(x, device=cpu_kernels),
                     gpuarr.asarray(y, device=cpu_kernels)).numpy()
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    assert_specials(got, want, 1)


SIMD_CASES = [(n, d) for n in ["exp", "log", "sin", "cos", "tanh"] for d in (F32, F64)]


def _some(name, dt, n=5000):
    x = np.random.default_rng(3).uniform(0.01, 20, n).astype(dt)
    if name in ("sin", "cos"):  # large arguments go to libm inside the vector loop
        x[[700, 2100, 4999]] = [1e22, np.inf, -3e6]
    return x


@pytest.mark.parametrize("name,dt", SIMD_CASES, ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("step", [2, -3])
def test_math_on_strided_views_matches_contiguous(cpu_kernels, name, dt, step):
    x = _some(name, dt)
    f = getattr(gpuarr, name)
    want = f(gpuarr.asarray(x[::step].copy(), device=cpu_kernels)).numpy()
    got = f(gpuarr.asarray(x, device=cpu_kernels)[::step]).numpy()
    np.testing.assert_array_equal(got, want)
    with np.errstate(invalid="ignore"):
        ref = getattr(np, name)(x[::step].astype(L))
    assert ulp_error(got, ref, dt).max() <= BOUNDS[name, dt]
    # every length around the SIMD block edges
    for n in (1, 7, 511, 512, 513, 1025):
        got = f(gpuarr.asarray(x[:n], device=cpu_kernels)).numpy()
        assert ulp_error(got, getattr(np, name)(x[:n].astype(L)), dt).max() <= BOUNDS[name, dt]


@pytest.mark.parametrize("name,dt", SIMD_CASES, ids=lambda v: getattr(v, "__name__", v))
def test_math_in_place_is_right(cpu_kernels, name, dt):
    x = _some(name, dt, 100_003)  # large enough to be split between threads
    g = gpuarr.asarray(x, device=cpu_kernels, copy=True)
    getattr(gpuarr, name)(g, out=g)
    np.testing.assert_array_equal(g.numpy(), getattr(gpuarr, name)(gpuarr.asarray(x)).numpy())


@pytest.mark.parametrize("dt", [F32, F64], ids=["float32", "float64"])
def test_pow_layouts_agree(cpu_kernels, dt):
    """Both operands contiguous, a scalar exponent, a scalar base, strided operands:
    each its own loop, one function, the same bits."""
    rng = np.random.default_rng(4)
    x = rng.uniform(0.1, 10, 3001).astype(dt)
    y = rng.uniform(-5, 5, 3001).astype(dt)
    gx, gy = (gpuarr.asarray(a, device=cpu_kernels) for a in (x, y))

    def full(a, b):
        return gpuarr.pow(gpuarr.asarray(a, device=cpu_kernels),
                          gpuarr.asarray(b, device=cpu_kernels)).numpy()

    np.testing.assert_array_equal((gx ** 2.5).numpy(), full(x, np.full_like(x, 2.5)))
    np.testing.assert_array_equal(gpuarr.pow(dt(3.0), gy).numpy(),
                                  full(np.full_like(y, 3.0), y))
    np.testing.assert_array_equal(gpuarr.pow(gx[::3], gy[::-3]).numpy(),
                                  full(x[::3].copy(), y[::-3].copy()))
    ref = np.power(x.astype(L), y.astype(L))
    assert ulp_error(full(x, y), ref, dt).max() <= 1


@pytest.mark.parametrize("case", ["exp32", "tanh64", "pow_scalar", "atan2", "where_exp",
                                  "strided_out", "in_place"])
def test_large_math_loops_prefetched_in_pieces_match_small_ones(cpu_kernels, case):
    # operands of 4 MiB and more with math costing more than an add: the CPU calls the
    # inner loop on pieces of 128 elements and prefetches 1024 elements ahead
    # (ga_cpu_loop.c, GA_CPU_AHEAD_*). Each result must be bitwise what the same
    # loop gives on small slices (which run whole, in cache); 600_011 elements leave
    # a last piece and pool chunk of their own. A strided output runs whole too.
    n, k = 600_011, 50_000
    rng = np.random.default_rng(11)
    dt = F64 if case == "tanh64" else F32
    a = rng.standard_normal(n).astype(dt)
    b = rng.standard_normal(n).astype(dt)
    fns = {"exp32": lambda x, y: gpuarr.exp(x), "tanh64": lambda x, y: gpuarr.tanh(x),
           "pow_scalar": lambda x, y: gpuarr.abs(x) ** 1.7,
           "atan2": lambda x, y: gpuarr.atan2(x, y),
           "where_exp": lambda x, y: gpuarr.where(x > y, gpuarr.exp(x), y)}
    x = gpuarr.asarray(a, device=cpu_kernels)
    y = gpuarr.asarray(b, device=cpu_kernels)
    if case in ("strided_out", "in_place"):
        got_arr = gpuarr.zeros(2 * n, dtype="float32", device=cpu_kernels)[::2] \
            if case == "strided_out" else gpuarr.asarray(a.copy(), device=cpu_kernels)
        gpuarr.exp(got_arr if case == "in_place" else x, out=got_arr)
        got = got_arr.numpy()
        fn = fns["exp32"]
    else:
        fn = fns[case]
        got = fn(x, y).numpy()
    want = np.concatenate([fn(x[i:i + k], y[i:i + k]).numpy() for i in range(0, n, k)])
    np.testing.assert_array_equal(got, want)
