"""The vectorised float32 exp and log of the CPU backend (ga_vexpf / ga_vlogf in
ga_kernels.h) against a float64 reference rounded to float32: at most 1 ulp apart over
millions of values, special values exactly as NumPy gives them, contiguous and strided
inputs alike; on the CPU and on simulated GPUs (the devices that run these kernels)."""
import os

import numpy as np
import pytest

import gpuarr


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


def ulp_distance(a, b):
    """Distance in float32 ulps between two float32 arrays (finite entries)."""
    ia = a.astype(np.float32).view(np.int32).astype(np.int64)
    ib = b.astype(np.float32).view(np.int32).astype(np.int64)
    # map the sign-magnitude bit patterns onto a monotonic integer line
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return np.abs(ia - ib)


def reference(fn, x):
    with np.errstate(all="ignore"):
        return fn(x.astype(np.float64)).astype(np.float32)


def exp_inputs():
    rng = np.random.default_rng(1)
    return np.concatenate([
        rng.uniform(-110, 95, 1_000_000),     # the whole range, through under/overflow
        rng.normal(0, 1, 1_000_000),
        rng.uniform(-1e-6, 1e-6, 100_000),   # exp(x) ~ 1 + x
        rng.uniform(-103.98, -87.3, 100_000),  # subnormal results
        np.linspace(88.0, 88.8, 10_001),       # near overflow
    ]).astype(np.float32)


def log_inputs():
    rng = np.random.default_rng(2)
    mant = rng.uniform(0.5, 2.0, 2_000_000)
    expo = rng.integers(-149, 128, mant.size).astype(np.float64)
    with np.errstate(all="ignore"):
        x = (mant * 2.0 ** expo).astype(np.float32)  # every binade, subnormals too
    near_one = (1 + rng.uniform(-1e-3, 1e-3, 200_000)).astype(np.float32)
    tiny = np.arange(1, 5000, dtype=np.int32).view(np.float32)  # smallest subnormals
    x = np.concatenate([x, near_one, tiny])
    return x[np.isfinite(x) & (x > 0)]


@pytest.mark.parametrize("name,fn,inputs", [
    ("exp", np.exp, exp_inputs),
    ("log", np.log, log_inputs),
])
def test_float32_math_is_within_one_ulp_of_the_float64_reference(name, fn, inputs):
    x = inputs()
    got = getattr(gpuarr.asarray(x), name)().numpy()
    ref = reference(fn, x)
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(got[~finite], ref[~finite])  # overflow to inf
    assert ulp_distance(got[finite], ref[finite]).max() <= 1


@pytest.mark.parametrize("name,fn", [("exp", np.exp), ("log", np.log)])
def test_float32_math_special_values_match_numpy(cpu_kernels, name, fn):
    x = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 88.72284,
                  88.72285, -103.97, -103.98, 3e38], np.float32)
    got = getattr(gpuarr.asarray(x, device=cpu_kernels), name)().numpy()
    with np.errstate(all="ignore"):
        want = fn(x)
    exact = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(got[exact], want[exact])
    # NumPy's own SIMD exp is 1 ulp off at x = 1 (gives 2.718282, not 2.7182817)
    assert ulp_distance(got[~exact], want[~exact]).max() <= 1
    assert ulp_distance(got[~exact], reference(fn, x)[~exact]).max() <= 1


@pytest.mark.parametrize("name,fn", [("exp", np.exp), ("log", np.log)])
@pytest.mark.parametrize("step", [2, -3])
def test_float32_math_on_strided_views_matches_contiguous(cpu_kernels, name, fn, step):
    x = np.random.default_rng(3).uniform(0.01, 20, 5000).astype(np.float32)
    g = gpuarr.asarray(x, device=cpu_kernels)[::step]
    got = getattr(g, name)().numpy()
    ref = reference(fn, x[::step])
    assert ulp_distance(got, ref).max() <= 1
    # every length around the SIMD block edges
    for n in (1, 7, 511, 512, 513, 1025):
        got = getattr(gpuarr.asarray(x[:n], device=cpu_kernels), name)().numpy()
        assert ulp_distance(got, reference(fn, x[:n])).max() <= 1


def test_float32_exp_and_log_in_place_are_right(cpu_kernels):
    x = np.linspace(0.5, 5, 100_003, dtype=np.float32)
    g = gpuarr.asarray(x, device=cpu_kernels, copy=True)
    gpuarr.exp(g, out=g)  # large enough to be split between threads
    assert ulp_distance(g.numpy(), reference(np.exp, x)).max() <= 1
    gpuarr.log(g, out=g)
    assert np.abs(g.numpy() - x).max() <= 2e-6 * 5
