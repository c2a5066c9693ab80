"""The CUDA sort (csrc/cuda/kernels/k_sort.cu, k_radix.cu) at the sizes where its structure
shows.

Rows of numeric keys longer than 1024 go to the LSD radix sort (k_radix.cu: a histogram
launch, then a launch per key byte); complex keys and rows of at most 1024 to the merge
sort, which sorts tiles of 1024 elements in shared memory (rows shorter than a tile
share one, each in a segment of the next power of two), then merges runs of 1024, 2048,
... one launch per doubling, every element finding its place by binary search in the
sibling run. So the interesting sizes are around the tile and the run boundaries,
rows much shorter than a tile, and one row much longer. NumPy's stable sort is the
oracle, and the kernel counters (gpuarr.testing.count_kernels) check the budgets:
1 + key bytes launches (radix) or 1 + ceil(log2(n / 1024)) (merge), no host wait, a
grid that fills the device. tests/cuda/test_cuda_radix.py has the radix sort's own cases;
tests/core/test_sorting.py covers the API (axes, unique_*, searchsorted's sorter) on every
device.
"""
import math

import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES, needs_cuda_devices
from test_sorting import _data, _nan_last_desc

pytestmark = needs_cuda_devices

TILE = 1024


@pytest.fixture
def dev():
    d = gpuarr.gpu(0)
    gpuarr.synchronize(d)  # nothing pending from an earlier test
    return d


def _want_order(a, descending):
    if not descending:
        return np.argsort(a, axis=-1, stable=True)
    if a.dtype.kind != "c":
        return _nan_last_desc(a, -1)
    # Among complex NaNs the CPU backend keeps NumPy's ascending class order (NaN
    # imaginary part, then NaN real part, then both) in descending sorts too, which
    # the flip-based oracle cannot express: it is the oracle here, once its numbers
    # are checked against NumPy's descending order.
    want = gpuarr.argsort(gpuarr.asarray(a), descending=True).numpy()
    got = np.take_along_axis(a, want, axis=-1)
    ref = np.take_along_axis(a, _nan_last_desc(a, -1), axis=-1)
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan], ref[~nan])
    return want


def _check_sort(a, d, descending=False):
    x = gpuarr.asarray(a, device=d)
    idx = gpuarr.argsort(x, descending=descending)
    val = gpuarr.sort(x, descending=descending)
    assert idx.device == d and val.device == d
    want = _want_order(a, descending)
    np.testing.assert_array_equal(idx.numpy(), want)
    np.testing.assert_array_equal(val.numpy(), np.take_along_axis(a, want, axis=-1))


def _merge_passes(n):
    return max(0, math.ceil(math.log2(n / TILE))) if n > TILE else 0


def _launches(n, dtype):
    """Radix sort for numeric rows longer than a tile: a histogram, then a pass per key
    byte; the merge sort otherwise."""
    if n > TILE and np.dtype(dtype).kind != "c":
        return 1 + np.dtype(dtype).itemsize
    return 1 + _merge_passes(n)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 511, TILE - 1, TILE, TILE + 1, 2 * TILE - 1,
                               2 * TILE, 2 * TILE + 1, 4 * TILE + 3, 5000])
@pytest.mark.parametrize("descending", [False, True])
def test_sizes_around_tile_and_run_boundaries(dev, n, descending):
    _check_sort(_data("float64", (2, n), seed=n), dev, descending)


@pytest.mark.parametrize("n", [5, 8, 33, 600])
def test_many_short_rows_share_tiles(dev, n):
    rows = 100000 // n
    a = np.random.default_rng(n).integers(-3, 4, size=(rows, n)).astype(np.int32)
    _check_sort(a, dev)
    _check_sort(a, dev, descending=True)


def test_one_long_row(dev):
    a = np.random.default_rng(1).standard_normal(1 << 20).astype(np.float32)
    a[::1001] = np.nan
    a[5::999] = 0.5  # ties across tiles and runs
    _check_sort(a, dev)


@pytest.mark.parametrize("n", [TILE - 3, 3 * TILE + 7])
def test_all_equal_keys_keep_their_order(dev, n):
    for descending in (False, True):
        for value in (0.0, -0.0, 2.5):
            x = gpuarr.asarray(np.full(n, value), device=dev)
            np.testing.assert_array_equal(
                gpuarr.argsort(x, descending=descending).numpy(), np.arange(n))


def test_signed_zeros_are_ties(dev):
    a = np.tile([0.0, -0.0, 1.0, -0.0, 0.0], 700)
    _check_sort(a, dev)
    _check_sort(a, dev, descending=True)
    got = gpuarr.sort(gpuarr.asarray(a, device=dev)).numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.sort(a, stable=True)))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_all_nan_rows_keep_their_order(dev, dtype):
    a = np.full((3, 2 * TILE + 5), np.nan, dtype=dtype)
    if dtype == "complex64":
        a[1] = complex(np.nan, 1.0)  # NaN real part: one class, ties among themselves
        a[2, ::2] = complex(1.0, np.nan)  # before the NaN-real ones
    _check_sort(a, dev)
    _check_sort(a, dev, descending=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_every_dtype_across_a_merge(dev, dtype, descending):
    _check_sort(_data(dtype, (3, 2 * TILE + 37), seed=3), dev, descending)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float32",
                                   "complex128"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_long_sorted_array(dev, dtype, side):
    a = np.sort(_data(dtype, (3000,)), stable=True)
    v = _data(dtype, (40, 9), seed=5)
    got = gpuarr.searchsorted(gpuarr.asarray(a, device=dev), gpuarr.asarray(v, device=dev),
                              side=side)
    assert got.device == dev
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(a, v, side=side))


def test_searchsorted_into_nothing_and_nothing_into(dev):
    empty = gpuarr.asarray(np.zeros(0, np.float32), device=dev)
    v = gpuarr.asarray(np.array([1.0, np.nan], np.float32), device=dev)
    np.testing.assert_array_equal(gpuarr.searchsorted(empty, v).numpy(), [0, 0])
    assert gpuarr.searchsorted(v, empty).shape == (0,)


def test_sort_on_the_second_device(two_gpus):
    d = gpuarr.gpu(1)
    _check_sort(_data("float32", (3, 3 * TILE)), d)


# --- budgets ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [100, TILE, TILE + 1, 4 * TILE, 5 * TILE, 1 << 16])
def test_launches_grow_with_log_n_and_nothing_waits(dev, n):
    a = np.random.default_rng(n).standard_normal((2, n)).astype(np.float32)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        v = gpuarr.sort(x)
    assert k.supported
    assert k.launches == _launches(n, "float32") and k.syncs == 0 and k.d2h == 0, k
    with gpuarr.testing.count_kernels(dev) as k:
        i = gpuarr.argsort(x, descending=True)
    assert k.launches == _launches(n, "float32") and k.syncs == 0 and k.d2h == 0, k
    c = gpuarr.asarray(a.astype(np.complex64), device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        gpuarr.sort(c)
    assert k.launches == _launches(n, "complex64") and k.syncs == 0, k
    np.testing.assert_array_equal(v.numpy(), np.sort(a))
    np.testing.assert_array_equal(i.numpy(), _nan_last_desc(a, -1))


def test_long_row_fills_the_device(dev):
    a = np.random.default_rng(2).standard_normal(136 * 2 * TILE).astype(np.float32)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        v = gpuarr.sort(x)
    # a histogram launch, then 4 passes of a block per tile of 2048 keys
    assert k.launches == 1 + 4 and k.syncs == 0, k
    assert k.max_grid_blocks >= 132, k  # as many as an H100 has multiprocessors
    np.testing.assert_array_equal(v.numpy(), np.sort(a))


def test_short_rows_are_packed_into_tiles(dev):
    # 100000 rows of 8: one launch of 782 blocks (128 rows a tile), not a block per row
    a = np.random.default_rng(3).integers(0, 5, size=(100000, 8)).astype(np.int16)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        i = gpuarr.argsort(x)
    assert k.launches == 1 and k.syncs == 0, k
    assert k.max_grid_blocks == math.ceil(100000 / (TILE // 8)), k
    np.testing.assert_array_equal(i.numpy(), np.argsort(a, axis=-1, stable=True))


def test_searchsorted_is_one_launch_without_a_wait(dev):
    a = np.sort(np.random.default_rng(4).standard_normal(5000))
    v = np.random.default_rng(5).standard_normal(3000)
    x1, x2 = gpuarr.asarray(a, device=dev), gpuarr.asarray(v, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        got = gpuarr.searchsorted(x1, x2, side="right")
    assert k.launches == 1 and k.syncs == 0 and k.d2h == 0, k
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(a, v, side="right"))
