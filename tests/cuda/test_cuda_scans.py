"""Scans on a CUDA device (csrc/cuda/kernels/k_scan.cu): which kernel runs for which shape, what
it costs in launches and waits (gpuarr.testing.count_kernels), and NumPy's answers for
every dtype, kernel and layout.

The three kernels: a thread per row (rows of at most 16, and scans along an outer axis),
a warp per row (rows shorter than two tiles), a block per tile with a one-pass
look-back over a fixed tree of tile totals (longer rows). Each is one launch without a
host wait. Run on emulated CUDA (GPUARR_CUDA_EMULATE=2, 132 multiprocessors) or a GPU;
skipped elsewhere. CI runs the emulated suite under two schedule seeds.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpuarr
from conftest import needs_cuda_devices

pytestmark = needs_cuda_devices

TILE = 2048  # elements of a tile for 8-byte accumulators (8 warps x 32 lanes x 8)


@pytest.fixture
def dev():
    d = gpuarr.gpu(0)
    gpuarr.synchronize(d)
    return d


def _data(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return r.integers(0, 7, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


def _check(got, a, axis, op="cumulative_sum", out=None):
    npop = np.cumsum if op == "cumulative_sum" else np.cumprod
    kw = {"axis": axis}
    if out is not None:
        kw["dtype"] = out
    want = npop(a, **kw)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)  # integers are exact
        return
    wide = npop(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), axis=axis)
    eps = {2: 1e-3, 4: 1e-6, 8: 1e-15, 16: 1e-15}[want.dtype.itemsize]
    if want.dtype.kind == "c":
        eps = 1e-6 if want.dtype == np.complex64 else 1e-15
    bound = eps * (np.maximum.accumulate(np.abs(wide), axis=axis) + 1) * 50
    if want.dtype == np.float16:  # NumPy rounds each step to half
        bound = np.abs(want.astype(np.float64) - wide) * 2 + bound
    assert np.all(np.abs(got.astype(wide.dtype) - wide) <= bound)


# ---- the routing bug of issue 29: 528+ rows scanned by a serial thread each ----------

@pytest.mark.parametrize("shape", [(544, 4100), (600, 1000), (528, 40)])
def test_many_rows_get_a_warp_or_block_each_in_one_launch(dev, shape):
    # 528 = 4 x 132 rows used to select a thread per row whatever the row length (a
    # serial loop over 4100 elements with a row-length stride between neighbours)
    a = _data(shape, "int32", 1)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        c = gpuarr.cumulative_sum(x, axis=1)
    assert k.launches == 1 and k.syncs == 0, k
    assert k.max_grid_blocks >= shape[0] // 8, k  # at least a warp per row
    np.testing.assert_array_equal(c.numpy(), np.cumsum(a, axis=1))


def test_long_rows_are_cut_into_tiles_one_block_each(dev):
    a = _data((3, 33 * TILE - 5), "int64", 2)  # 33 tiles a row: a two-level tree
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        c = gpuarr.cumulative_sum(x, axis=1)
    assert k.launches == 1 and k.syncs == 0 and k.max_grid_blocks >= 3 * 33, k
    np.testing.assert_array_equal(c.numpy(), np.cumsum(a, axis=1))


def test_a_row_of_more_than_1024_tiles_uses_a_three_level_tree(dev):
    n = 1024 * TILE + 3
    a = np.random.default_rng(3).integers(-1000, 1000, n).astype(np.int32)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        c = gpuarr.cumulative_sum(x)
    assert k.launches == 1 and k.max_grid_blocks >= 1025, k
    np.testing.assert_array_equal(c.numpy(), np.cumsum(a))


def test_outer_axis_scans_are_tiles_of_32_columns_by_64_rows(dev):
    # issue 45: 64 columns of 300 rows are 2 x 5 tiles (k_scan_cols), each chunk of a
    # column looking back to the ones above it, not 64 threads in one block
    a = _data((300, 64), "float64", 4)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        c = gpuarr.cumulative_sum(x, axis=0)
    assert k.launches == 1 and k.syncs == 0 and k.max_grid_blocks == 10, k
    _check(c.numpy(), a, 0)


# 40 columns of 200 rows: 2 groups of 32 columns (the second partial), 4 chunks of 64
# rows (7 of 32 for 16-byte accumulators and floats into integers): the look-back
COLUMN_SHAPE = (200, 40)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int32", "int64", "uint64",
                                   "float16", "float32", "float64", "complex64",
                                   "complex128"])
def test_column_tiles_of_every_dtype_match_numpy(dev, dtype):
    a = _data(COLUMN_SHAPE, dtype, 12)
    x = gpuarr.asarray(a, device=dev)
    _check(gpuarr.cumulative_sum(x, axis=0).numpy(), a, 0)
    if dtype in ("int8", "float32"):  # run-time dtype stores; floats into integer sums
        out = "int16" if dtype == "int8" else "int64"
        b = np.round(a * 20).astype(dtype)
        got = gpuarr.cumulative_sum(gpuarr.asarray(b, device=dev), axis=0,
                                    dtype=getattr(gpuarr, out)).numpy()
        np.testing.assert_array_equal(got, np.cumsum(b, axis=0, dtype=out))


@pytest.mark.parametrize("dtype", ["int64", "float64", "complex64"])
def test_column_tiles_cumulative_prod(dev, dtype):
    a = _data(COLUMN_SHAPE, dtype, 13)
    if dtype == "int64":
        a = np.where(np.arange(a.size).reshape(a.shape) % 97 == 0, 3, 1).astype(dtype)
    else:
        a = (1 + 1e-3 * a).astype(dtype)
    _check(gpuarr.cumulative_prod(gpuarr.asarray(a, device=dev), axis=0).numpy(), a, 0,
           "cumulative_prod")
    # the first element as it is (NumPy's accumulate copies it), in every column
    b = np.full(COLUMN_SHAPE, 1 + 0j)
    b[0] = complex(np.inf, 1.0)
    got = gpuarr.cumulative_prod(gpuarr.asarray(b, device=dev), axis=0).numpy()
    assert np.all(got[0] == b[0]), got[0]


def test_column_tiles_keep_negative_zeros_and_views(dev):
    z = np.full(COLUMN_SHAPE, -0.0)
    got = gpuarr.cumulative_sum(gpuarr.asarray(z, device=dev), axis=0).numpy()
    assert np.all(got == 0) and np.all(np.signbit(got))
    a = _data((3 * COLUMN_SHAPE[0], 2 * COLUMN_SHAPE[1]), "int64", 14)
    v, w = gpuarr.asarray(a, device=dev)[::-3, 1::2], a[::-3, 1::2]
    np.testing.assert_array_equal(gpuarr.cumulative_sum(v, axis=0).numpy(),
                                  np.cumsum(w, axis=0))


# ---- every kernel, dtype and layout against NumPy --------------------------------------

KERNEL_SHAPES = {
    "thread": (40, 11),          # rows of 11: lanes across rows, 2 threads each
    "warp": (9, 700),            # rows of 700: a warp each, 3 rounds
    "tiles": (2, 3 * TILE + 17),  # rows of 4 tiles
}
DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32",
          "float64", "complex64", "complex128"]


@pytest.mark.parametrize("kernel", list(KERNEL_SHAPES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_cumulative_sum_of_every_dtype_in_every_kernel(dev, kernel, dtype):
    shape = KERNEL_SHAPES[kernel]
    if kernel == "tiles" and dtype in ("complex128",):
        shape = (2, 3 * TILE // 2 + 17)  # 16-byte accumulators: tiles of 1024
    a = _data(shape, dtype, 5)
    got = gpuarr.cumulative_sum(gpuarr.asarray(a, device=dev), axis=1).numpy()
    _check(got, a, 1)


@pytest.mark.parametrize("out", ["int64", "uint64"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64",
                                   "complex128"])
def test_floats_summed_into_64_bit_integers_in_tiles(dev, dtype, out):
    # a tile of these holds half the elements of other 8-byte sums (k_scan.cu,
    # ga_scan_tile_items: the conversions' registers): 7 tiles of 1024 a row here
    a = np.abs(_data(KERNEL_SHAPES["tiles"], dtype, 9) * 50).astype(dtype)  # real
    with np.errstate(all="ignore"):
        want = np.cumsum(a.real if a.dtype.kind == "c" else a, axis=1, dtype=out)
    got = gpuarr.cumulative_sum(gpuarr.asarray(a, device=dev), axis=1,
                                dtype=getattr(gpuarr, out)).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kernel", list(KERNEL_SHAPES))
def test_complex128_summed_into_integers_reads_the_real_parts(dev, kernel):
    # a thread loads only the real part of a complex128 going into an integer sum
    # (k_scan.cu, ga_scan_raw): the imaginary parts must change nothing
    a = np.round(_data(KERNEL_SHAPES[kernel], "complex128", 10) * 50)
    with np.errstate(all="ignore"):
        want = np.cumsum(a.real, axis=1, dtype=np.int64)
    got = gpuarr.cumulative_sum(gpuarr.asarray(a, device=dev), axis=1,
                                dtype=gpuarr.int64).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kernel", list(KERNEL_SHAPES))
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_sums_of_negative_zeros_stay_negative_zeros(dev, kernel, dtype):
    # the warp and tile kernels stand -0.0 in for "no element" (an identity every sum
    # leaves exact): +0.0 there would turn -0.0 + -0.0 into +0.0 at a lane, warp or
    # tile boundary
    a = np.full(KERNEL_SHAPES[kernel], -0.0, dtype=dtype)
    if dtype == "complex128":
        a = np.full(a.shape, complex(-0.0, -0.0))
    got = gpuarr.cumulative_sum(gpuarr.asarray(a, device=dev), axis=1).numpy()
    for part in ((got.real, got.imag) if dtype == "complex128" else (got,)):
        assert np.all(part == 0) and np.all(np.signbit(part)), part


@pytest.mark.parametrize("kernel", ["warp", "tiles"])
def test_typed_and_run_time_dtype_stores_give_the_same_bits(dev, kernel):
    # float32 summed into a float64 output goes through the run-time dtype switch; the
    # same values as float64 are stored by the unrolled typed stores (ga_scan_out):
    # both accumulate in double with the same grouping, so the bits must agree
    a = _data(KERNEL_SHAPES[kernel], "float32", 11)
    x = gpuarr.asarray(a, device=dev)
    switched = gpuarr.cumulative_sum(x, axis=1, dtype=gpuarr.float64).numpy()
    typed = gpuarr.cumulative_sum(gpuarr.asarray(a.astype(np.float64), device=dev),
                                  axis=1).numpy()
    assert switched.tobytes() == typed.tobytes()
    _check(switched, a.astype(np.float64), 1)


@pytest.mark.parametrize("kernel", list(KERNEL_SHAPES))
@pytest.mark.parametrize("dtype", ["int64", "float64", "complex64"])
def test_cumulative_prod_in_every_kernel(dev, kernel, dtype):
    a = _data(KERNEL_SHAPES[kernel], dtype, 6)
    if dtype == "int64":
        a = np.where(np.arange(a.size).reshape(a.shape) % 97 == 0, 3, 1).astype(dtype)
    else:
        a = (1 + 1e-3 * a).astype(dtype)
    got = gpuarr.cumulative_prod(gpuarr.asarray(a, device=dev), axis=1).numpy()
    _check(got, a, 1, "cumulative_prod")


def test_complex_cumprod_keeps_the_first_element_as_it_is(dev):
    # NumPy's accumulate copies the first element: (1+0j) * (inf+1j) would be inf+nanj
    for n in (5, 700, 3 * TILE // 2 + 17):
        a = np.full(n, 1 + 0j)
        a[0] = complex(np.inf, 1.0)
        got = gpuarr.cumulative_prod(gpuarr.asarray(a, device=dev)).numpy()
        assert got[0] == a[0], (n, got[0])


@pytest.mark.parametrize("kernel", list(KERNEL_SHAPES))
def test_scans_of_strided_views_and_along_axis_0(dev, kernel):
    shape = KERNEL_SHAPES[kernel]
    a = _data((shape[0] + 1, shape[1] * 2), "int64", 7)
    x = gpuarr.asarray(a, device=dev)
    v, w = x[::-1, 1::2], a[::-1, 1::2]
    np.testing.assert_array_equal(gpuarr.cumulative_sum(v, axis=1).numpy(),
                                  np.cumsum(w, axis=1))
    t, u = gpuarr.asarray(np.ascontiguousarray(w.T), device=dev), np.ascontiguousarray(w.T)
    np.testing.assert_array_equal(gpuarr.cumulative_sum(t, axis=0).numpy(),
                                  np.cumsum(u, axis=0))
    np.testing.assert_array_equal(
        gpuarr.cumulative_sum(v, axis=1, dtype=gpuarr.int16).numpy(),
        np.cumsum(w, axis=1, dtype=np.int16))


def test_a_scan_gives_the_same_bits_under_every_schedule():
    # the look-back tree's grouping depends on the tile alone, not on which block ran
    # first: a float64 scan is bitwise reproducible (two emulated schedules here)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr._core.__file__)))
    code = textwrap.dedent("""
        import hashlib, numpy as np, gpuarr
        a = np.random.default_rng(8).standard_normal((2, 40 * 2048 + 5))
        c = gpuarr.cumulative_sum(gpuarr.asarray(a, device=gpuarr.gpu(0)), axis=1)
        print(hashlib.sha256(c.numpy().tobytes()).hexdigest())
        b = np.random.default_rng(9).standard_normal((3000, 70))  # column tiles
        c = gpuarr.cumulative_sum(gpuarr.asarray(b, device=gpuarr.gpu(0)), axis=0)
        print(hashlib.sha256(c.numpy().tobytes()).hexdigest())
    """)
    outs = []
    for seed in ("3", "4"):
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUARR_")}
        env.update(PYTHONPATH=pkg + os.pathsep + env.get("PYTHONPATH", ""),
                   GPUARR_CUDA_EMULATE="1", GPUARR_CUDA_EMULATE_SCHEDULE=seed)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]
