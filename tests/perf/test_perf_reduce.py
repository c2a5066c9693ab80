"""The SIMD reduction paths (contiguous float32/float64 sum, max, min; along the last
axis and down the rows) against NumPy: every length around the vector width, NaN in
every position, both axes, results independent of where a run is split."""
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

FLOATS = ["float32", "float64"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_of_every_length_around_the_vector_width(device, dtype, op):
    rng = np.random.default_rng(0)
    for n in list(range(1, 40)) + [1023, 1024, 1025, 70_001]:
        x = rng.standard_normal(n).astype(dtype)
        got = getattr(gpuarr.asarray(x, device=device), op)().numpy()
        assert got == getattr(x, op)(), n


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["max", "min"])
def test_a_nan_anywhere_makes_max_and_min_nan(device, dtype, op):
    n = 53
    for pos in range(n):
        x = np.arange(n, dtype=dtype)
        x[pos] = np.nan
        assert np.isnan(getattr(gpuarr.asarray(x, device=device), op)().numpy()), pos
    m = np.arange(40 * 37, dtype=dtype).reshape(40, 37)
    m[3, 5] = m[20, 36] = m[39, 0] = np.nan
    g = gpuarr.asarray(m, device=device)
    for axis in (0, 1):
        np.testing.assert_array_equal(getattr(g, op)(axis=axis).numpy(),
                                      getattr(m, op)(axis=axis))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["sum", "max", "min"])
@pytest.mark.parametrize("shape", [(1000, 1000), (3, 70_000), (70_000, 3), (5, 6, 7000),
                                   (300, 2, 300)])
def test_axis_reductions_of_large_arrays_match_numpy(device, dtype, op, shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    g = gpuarr.asarray(x, device=device)
    for axis in [None] + list(range(len(shape))) + [(0, len(shape) - 1)]:
        got = getattr(g, op)(axis=axis).numpy()
        want = getattr(x.astype(np.float64), op)(axis=axis)
        if op == "sum":
            # float32 sums accumulate in double: closer to the exact sum than NumPy's
            tol = 1e-6 if dtype == "float32" else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(x.size))
        else:
            np.testing.assert_array_equal(got, want.astype(dtype))


def test_float32_sum_is_accurate_where_float32_accumulation_is_not(cpu_kernels):
    # the CPU kernels sum float32 in double; a GPU's pairwise float sum need not be exact
    x = np.full(10_000_001, 0.1, np.float32)
    got = float(gpuarr.asarray(x, device=cpu_kernels).sum().numpy())
    exact = 10_000_001 * float(np.float32(0.1))
    assert got == np.float32(exact)


def test_strided_and_reversed_inputs_take_the_general_path_correctly(device):
    x = np.random.default_rng(2).standard_normal((300, 400)).astype(np.float32)
    g = gpuarr.asarray(x, device=device)
    for view_g, view_x in [(g[:, ::2], x[:, ::2]), (g[::-1, ::-3], x[::-1, ::-3]),
                           (g.T, x.T)]:
        for op in ("max", "min"):
            for axis in (None, 0, 1):
                np.testing.assert_array_equal(getattr(view_g, op)(axis=axis).numpy(),
                                              getattr(view_x, op)(axis=axis))
        np.testing.assert_allclose(view_g.sum(axis=1).numpy(), view_x.sum(axis=1),
                                   rtol=1e-5, atol=1e-4)


def _lane_order_sum(x):
    """A contiguous float32 run of at most 1024 elements summed in double as the CPU
    kernels add it (ga_cpu_reduce.c, sum_f32_lanes): 32 lanes of interleaved
    elements, folded by halves, then the elements past the last full 32 in order."""
    acc = np.zeros(32)
    full = len(x) // 32 * 32
    for i in range(0, full, 32):
        acc += x[i:i + 32].astype(np.float64)
    w = 16
    while w:
        acc[:w] += acc[w:2 * w]
        w //= 2
    r = acc[0]
    for v in x[full:]:
        r += np.float64(v)
    return r


def test_float32_sum_adds_in_its_lane_order_whichever_simd_runs(cpu_kernels):
    # the AVX-512 sum (sum_f32_avx512) is written with intrinsics beside the C loop
    # its clones compile (AVX2, baseline): both must make sum_f32_lanes' additions.
    # Magnitudes over 16 decades make every order give other double bits, seen
    # through a float64 result (one chunk: the pairwise counter adds nothing)
    rng = np.random.default_rng(7)
    for n in [1, 5, 31, 32, 33, 63, 64, 65, 100, 511, 1000, 1024]:
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)).astype(np.float32)
        got = gpuarr.asarray(x, device=cpu_kernels).sum(dtype=gpuarr.float64).numpy()
        assert got == _lane_order_sum(x), n
