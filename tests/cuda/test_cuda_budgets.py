"""Launch and wait budgets of CUDA operations (issue 10, items 2 and 8).

Each test counts what the CUDA plugin did with gpuarr.testing.count_kernels on
emulated CUDA (GPUARR_CUDA_EMULATE=2, 132 multiprocessors unless
GPUARR_CUDA_EMULATE_SMS says otherwise) or a GPU, and checks the answer against NumPy:
a budget met with a wrong answer is no budget. Skipped on the CPU and simulated GPUs,
where nothing is counted.

Reductions over few outputs split the reduced range so that the first grid covers
every multiprocessor and a second kernel combines the splits (csrc/cuda/kernels/k_reduce.cu);
the split tests below put the interesting element (a NaN, the first of tied maxima)
in a late split, where a wrong combine order would show.
"""
import os

import numpy as np
import pytest

import gpuarr
from conftest import needs_cuda_devices

pytestmark = needs_cuda_devices

N = 1 << 22
rng = np.random.default_rng(22)


@pytest.fixture
def dev():
    d = gpuarr.gpu(0)
    gpuarr.synchronize(d)  # nothing pending from an earlier test
    return d


@pytest.fixture(scope="module")
def vec():
    return rng.standard_normal(N, dtype=np.float32)


@pytest.fixture(scope="module")
def mat():
    return rng.standard_normal((2048, 2048), dtype=np.float32)


def test_add_is_one_launch_and_no_wait(dev, vec):
    x = gpuarr.asarray(vec, device=dev)
    y = gpuarr.asarray(vec[::-1].copy(), device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        z = x + y
    assert k.supported
    assert k.launches == 1 and k.syncs == 0 and k.d2h == 0, k
    np.testing.assert_array_equal(z.numpy(), vec + vec[::-1])


def test_full_sum_uses_every_multiprocessor_in_two_launches_without_a_wait(dev, vec):
    x = gpuarr.asarray(vec, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        s = x.sum()
    assert k.launches <= 2 and k.syncs == 0 and k.d2h == 0, k
    assert k.max_grid_blocks >= 132, k
    with gpuarr.testing.count_kernels(dev) as k:
        v = float(s)
    assert k.syncs == 1 and k.launches == 0, k
    # float32 accumulation, compensated per thread and pairwise across threads: as
    # close to the exact sum as NumPy's pairwise float32 sum is
    exact = vec.astype(np.float64).sum()
    assert abs(v - exact) <= 4 * abs(float(vec.sum()) - exact) + 1e-3, (v, exact)


@pytest.mark.parametrize("axis", [0, 1])
def test_matrix_sum_along_either_axis_fills_the_gpu_in_two_launches(dev, mat, axis):
    m = gpuarr.asarray(mat, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        s = m.sum(axis=axis)
    assert k.launches <= 2 and k.syncs == 0, k
    assert k.max_grid_blocks >= 132, k
    if axis == 0:
        # 2048 outputs, each split 66 ways: the second pass is a thread per output
        # (8 blocks), not a block per output (2048 blocks of mostly idle threads)
        assert k.max_grid_blocks < mat.shape[1], k
    np.testing.assert_allclose(s.numpy(), mat.astype(np.float64).sum(axis=axis),
                               rtol=1e-5, atol=1e-3)


def test_float_of_a_sum_waits_exactly_once(dev, vec):
    x = gpuarr.asarray(vec, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        v = float(x.sum())
    assert k.syncs == 1 and k.d2h == 1, k
    assert np.isclose(v, vec.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)


def test_matmul_does_not_wait(dev):
    a = rng.standard_normal((256, 128), dtype=np.float32)
    b = rng.standard_normal((128, 64), dtype=np.float32)
    x, y = gpuarr.asarray(a, device=dev), gpuarr.asarray(b, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        z = x @ y
    assert k.syncs == 0 and k.d2h == 0, k
    np.testing.assert_allclose(z.numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_boolean_mask_waits_exactly_once(dev, vec):
    a = vec[: 1 << 19]  # enough tiles for every multiprocessor, and quick to emulate
    x = gpuarr.asarray(a, device=dev)
    m = x > 0
    gpuarr.synchronize(dev)
    with gpuarr.testing.count_kernels(dev) as k:
        y = x[m]
    assert k.syncs == 1 and k.max_grid_blocks >= 132, k
    np.testing.assert_array_equal(y.numpy(), a[a > 0])


def test_cumulative_sum_fills_the_gpu_in_one_launch_without_a_wait(dev, vec):
    # one pass: a block per tile of 2048, the tiles' prefixes by a look-back
    x = gpuarr.asarray(vec, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        c = gpuarr.cumulative_sum(x)
    assert k.launches == 1 and k.max_grid_blocks >= 132 and k.syncs == 0, k
    want = np.cumsum(vec, dtype=np.float64)
    # a tiled scan adds the same terms in another order: the error grows like the
    # running sum's magnitude times float32's epsilon
    scale = np.maximum.accumulate(np.abs(want)) + np.sqrt(np.arange(1, N + 1))
    assert np.all(np.abs(c.numpy() - want) <= 1e-5 * scale)


# ---- split reductions give NumPy's answers -------------------------------------------

SPLIT_N = 300_001  # long enough to split, odd so the last split is short


def _split_cases():
    for op in ["sum", "prod", "max", "min", "argmax", "argmin", "all", "any"]:
        for dtype in ["float32", "float64", "int32", "uint8", "complex64", "float16",
                      "bool"]:
            if dtype == "bool" and op in ("sum", "prod"):
                continue  # NumPy sums booleans as integers: int32 covers it
            if dtype.startswith("complex") and op in ("max", "min", "argmax", "argmin"):
                continue  # the array API orders no complex numbers
            yield op, dtype


@pytest.mark.parametrize("op, dtype", list(_split_cases()))
def test_split_reductions_match_numpy(dev, op, dtype):
    r = np.random.default_rng(SPLIT_N)
    if dtype == "bool":
        a = r.random(SPLIT_N) > 0.01
    elif dtype.startswith("complex"):
        a = (r.standard_normal(SPLIT_N) + 1j * r.standard_normal(SPLIT_N)).astype(dtype)
    elif dtype.startswith(("int", "uint")):
        a = r.integers(0, 100, SPLIT_N).astype(dtype)
    else:
        a = r.standard_normal(SPLIT_N).astype(dtype)
    if op == "prod":
        a = np.ones(SPLIT_N, dtype)
        a[SPLIT_N - 5] = 3
        a[7] = 2
    if op in ("argmax", "argmin"):
        # ties: the first one wins, and it lies in a late split
        extreme = a.max() if op == "argmax" else a.min()
        a[SPLIT_N - 1000] = extreme
        a[SPLIT_N - 10] = extreme
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        got = getattr(gpuarr, op)(x)
    assert k.launches <= 2 and k.max_grid_blocks >= 132, k
    want = getattr(np, op)(a)
    if op == "sum" and a.dtype.kind == "f":
        want = a.astype(np.float64).sum()
        tol = {"float16": 2e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
        np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=tol,
                                   atol=tol * np.sqrt(SPLIT_N))
    elif op == "sum" and a.dtype.kind == "c":
        np.testing.assert_allclose(got.numpy(), a.astype(np.complex128).sum(), rtol=1e-4)
    else:
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_a_nan_in_the_last_split_wins(dev, op):
    a = np.random.default_rng(3).standard_normal(SPLIT_N).astype(np.float32)
    a[SPLIT_N - 3] = np.nan
    a[SPLIT_N - 2] = np.nan
    got = getattr(gpuarr, op)(gpuarr.asarray(a, device=dev)).numpy()
    np.testing.assert_array_equal(got, getattr(np, op)(a))


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_a_nan_in_the_last_split_of_a_column_wins(dev, op):
    # outer axis, 64 outputs: split columns, combined by a thread per output
    a = np.random.default_rng(4).standard_normal((4096, 64)).astype(np.float32)
    a[4000, 5] = a[4090, 5] = np.nan
    a[4095, 9] = np.nan
    a[:, 7] = 1.0  # ties everywhere: the first index wins
    got = getattr(gpuarr, op)(gpuarr.asarray(a, device=dev), axis=0).numpy()
    np.testing.assert_array_equal(got, getattr(np, op)(a, axis=0))


@pytest.mark.parametrize("shape, axis", [
    ((3000, 40), 0),      # outer axis, 40 outputs: split columns
    ((40, 30000), 1),     # inner axis, 40 outputs: split rows
    ((7, 5000, 3), 1),    # middle axis, 21 outputs, 3 of them adjacent
    ((5000, 5), 0),       # outer axis, fewer outputs than a warp: blocks
    ((64, 64, 64), (0, 2)),
])
@pytest.mark.parametrize("op", ["sum", "max", "argmax", "mean", "var"])
def test_split_axis_reductions_match_numpy(dev, shape, axis, op):
    if op == "argmax" and isinstance(axis, tuple):
        axis = axis[0]  # argmax takes one axis
    a = np.random.default_rng(len(shape)).standard_normal(shape)
    x = gpuarr.asarray(a, device=dev)
    got = getattr(gpuarr, op)(x, axis=axis)
    np.testing.assert_allclose(got.numpy(), getattr(np, op)(a, axis=axis), rtol=1e-10,
                               atol=1e-10)


def test_split_reduction_of_a_strided_view(dev):
    a = np.random.default_rng(5).standard_normal((400, 3000)).astype(np.float32)
    x = gpuarr.asarray(a, device=dev)
    v, w = x[::3, ::-2], a[::3, ::-2]
    np.testing.assert_allclose(v.sum(axis=1).numpy(), w.astype(np.float64).sum(axis=1),
                               rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(v.sum(axis=0).numpy(), w.astype(np.float64).sum(axis=0),
                               rtol=1e-4, atol=1e-3)
    assert float(v.max()) == w.max()
    assert int(gpuarr.argmin(v)) == int(np.argmin(w))


# ---- tiled scans (few long rows) give NumPy's answers (more in test_cuda_scans.py) -----

SCAN_N = 200_003


@pytest.mark.parametrize("dtype, op", [
    ("int32", "cumulative_sum"), ("uint8", "cumulative_sum"), ("int64", "cumulative_prod"),
    ("float64", "cumulative_sum"), ("float32", "cumulative_sum"),
    ("float16", "cumulative_sum"), ("complex64", "cumulative_sum"),
    ("bool", "cumulative_sum"), ("float64", "cumulative_prod"),
])
def test_tiled_scans_match_numpy(dev, dtype, op):
    r = np.random.default_rng(SCAN_N)
    if dtype == "bool":
        a = r.random(SCAN_N) > 0.5
    elif dtype.startswith(("int", "uint")):
        a = r.integers(0, 7, SCAN_N).astype(dtype)
    elif dtype.startswith("complex"):
        a = (r.standard_normal(SCAN_N) + 1j * r.standard_normal(SCAN_N)).astype(dtype)
    elif op == "cumulative_prod":
        a = (1 + r.standard_normal(SCAN_N) * 1e-3).astype(dtype)
    else:
        a = r.standard_normal(SCAN_N).astype(dtype)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        got = getattr(gpuarr, op)(x)
    assert k.launches == 1 and k.max_grid_blocks >= 98, k  # a block per tile ran
    npop = np.cumsum if op == "cumulative_sum" else np.cumprod
    want = npop(a)
    if a.dtype.kind in "biu":
        np.testing.assert_array_equal(got.numpy(), want)  # integers wrap exactly
    else:
        wide = npop(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
        eps = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-15, "complex64": 1e-6}[dtype]
        bound = eps * (np.maximum.accumulate(np.abs(wide)) + 1) * 50
        if dtype == "float16":  # each step rounds to half, as NumPy's does
            bound = np.abs(want.astype(np.float64) - wide) * 2 + bound
        assert np.all(np.abs(got.numpy().astype(wide.dtype) - wide) <= bound)


@pytest.mark.parametrize("shape, axis", [((3, 70001), 1), ((70001, 3), 0),
                                         ((2, 50000, 2), 1)])
def test_tiled_scans_along_any_axis_and_of_views(dev, shape, axis):
    a = np.random.default_rng(1).integers(-50, 50, shape).astype(np.int64)
    x = gpuarr.asarray(a, device=dev)
    np.testing.assert_array_equal(gpuarr.cumulative_sum(x, axis=axis).numpy(),
                                  np.cumsum(a, axis=axis))
    v, w = x[..., ::-1], a[..., ::-1]
    np.testing.assert_array_equal(gpuarr.cumulative_sum(v, axis=axis).numpy(),
                                  np.cumsum(w, axis=axis))
    np.testing.assert_array_equal(
        gpuarr.cumulative_sum(x, axis=axis, dtype=gpuarr.int16).numpy(),
        np.cumsum(a, axis=axis, dtype=np.int16))


def test_nonzero_spreads_over_the_gpu_and_waits_once_for_the_count(dev, mat):
    mat = mat[:256]  # 2^19 elements: enough tiles, and quick to emulate
    m = gpuarr.asarray(mat, device=dev) > 0.5
    gpuarr.synchronize(dev)
    with gpuarr.testing.count_kernels(dev) as k:
        got = gpuarr.nonzero(m)
    assert k.syncs == 1 and k.max_grid_blocks >= 132, k
    for g, w in zip(got, np.nonzero(mat > 0.5)):
        np.testing.assert_array_equal(g.numpy(), w)
    # a view whose C order is not memory order, and a mask with a lone last element
    v = m[::-1, 1::3]
    for g, w in zip(gpuarr.nonzero(v), np.nonzero((mat > 0.5)[::-1, 1::3])):
        np.testing.assert_array_equal(g.numpy(), w)
    lone = np.zeros(SPLIT_N, bool)
    lone[-1] = True
    np.testing.assert_array_equal(gpuarr.nonzero(gpuarr.asarray(lone, device=dev))[0]
                                  .numpy(), [SPLIT_N - 1])


def _bench_gpu():
    """bench/gpu.py as a module: its MLP step is the one counted here."""
    import importlib.util
    path = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "gpu.py")
    spec = importlib.util.spec_from_file_location("_bench_gpu_budgets", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_training_step_launches_and_never_waits(dev):
    """The training step of bench/gpu.py: its launches are counted, none of them waits
    for the device or copies to the host, captured or not, and the step computes what
    the CPU computes. 47 today (the loss alone 23: bench/README.md); a change that adds
    launches or a wait to every training step fails here. The captured step's replay
    (issue 45) is one CUDA graph launch that runs the same kernels (and copies the loss
    into its output buffer); called on its own input buffers it copies nothing in."""
    bench = _bench_gpu()
    X_n, y_n, params = bench._mlp_data(seed=45)
    step, net = bench.mlp_step(dev, params)
    X, y = gpuarr.asarray(X_n, device=dev), gpuarr.asarray(y_n, device=dev)
    captured = gpuarr.capture(step)
    step(X, y), captured(X, y), captured(X, y)  # warm: the plans, the recording
    gpuarr.synchronize(dev)
    counts = []
    for fn, args in ((step, (X, y)), (captured, captured.inputs)):
        with gpuarr.testing.count_kernels(dev) as k:
            fn(*args)
        gpuarr.synchronize(dev)
        assert k.syncs == 0 and k.d2h == 0 and k.h2d == 0, k
        counts.append(k)
    assert counts[0].launches <= 47 and counts[0].graph_launches == 0, counts
    assert counts[1].launches == 1 and counts[1].graph_launches == 1, counts
    assert counts[1].graph_kernels == counts[0].launches, counts
    assert captured.plan_replays == 1  # the counted call was a replay
    loss = step(X, y)  # the sixth step on the GPU, and six on the CPU
    cstep, cnet = bench.mlp_step(gpuarr.cpu(), params)
    cX, cy = gpuarr.asarray(X_n), gpuarr.asarray(y_n)
    for _ in range(6):
        closs = cstep(cX, cy)
    np.testing.assert_allclose(loss.numpy(), closs.numpy(), rtol=1e-5)
    for p, q in zip(net.parameters(), cnet.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-6)
