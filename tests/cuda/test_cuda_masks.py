"""Masks, nonzero and gathers on a CUDA device, second pass (issue 29 item 4): nonzero
is one launch (k_nonzero: 16-byte mask loads with a popcount when the mask is
C-contiguous and 16-byte aligned, a block-wide scan, the tiles' prefixes by the
look-back of the scans), and gathers and scatters over a one-dimensional loop take a
division-free path four elements at a time. NumPy is the oracle over layouts, tile
boundaries and densities; gpuarr.testing.count_kernels checks the launch budget. Run
on emulated CUDA or a GPU.
"""
import numpy as np
import pytest

import gpuarr
from conftest import needs_cuda_devices

pytestmark = needs_cuda_devices

TILE = 256 * 64  # mask elements of a k_nonzero tile


@pytest.fixture
def dev():
    d = gpuarr.gpu(0)
    gpuarr.synchronize(d)
    return d


def _nonzero(m, dev):
    return [c.numpy() for c in gpuarr.nonzero(gpuarr.asarray(m, device=dev))]


@pytest.mark.parametrize("n", [1, 15, 16, 17, 63, 64, 65, TILE - 1, TILE, TILE + 1,
                               3 * TILE + 100])
@pytest.mark.parametrize("density", [0.0, 0.03, 0.5, 1.0])
def test_nonzero_of_contiguous_masks_around_tiles(dev, n, density):
    m = np.random.default_rng(n).random(n) < density
    got = _nonzero(m, dev)
    np.testing.assert_array_equal(got[0], np.nonzero(m)[0])


def test_nonzero_is_one_launch_after_the_count(dev):
    m = np.random.default_rng(1).random(5 * TILE) < 0.3
    x = gpuarr.asarray(m, device=dev)
    gpuarr.synchronize(dev)
    with gpuarr.testing.count_kernels(dev) as k:
        got = gpuarr.nonzero(x)
    # the count (a bool sum: at most 2 launches), then k_nonzero; one host wait, for
    # the count the result's shape needs
    assert k.launches <= 3 and k.syncs == 1, k
    np.testing.assert_array_equal(got[0].numpy(), np.nonzero(m)[0])


@pytest.mark.parametrize("view", ["offset_1", "offset_7", "step_2", "reversed",
                                  "columns", "2d_contiguous", "3d_transposed"])
def test_nonzero_of_views_and_nd_masks(dev, view):
    r = np.random.default_rng(2)
    base = r.random((40, 3 * 1024 + 5)) < 0.2
    x = gpuarr.asarray(base, device=dev)
    sl = {"offset_1": (np.s_[0, 1:], None), "offset_7": (np.s_[3, 7:], None),
          "step_2": (np.s_[5, ::2], None), "reversed": (np.s_[7, ::-1], None),
          "columns": (np.s_[:, 100:140], None), "2d_contiguous": (np.s_[:, :], None),
          "3d_transposed": (None, (4, 10, 3 * 1024 + 5))}[view]
    if sl[0] is not None:
        m, v = base[sl[0]], x[sl[0]]
    else:
        m = base.reshape(sl[1]).transpose(2, 0, 1)
        v = gpuarr.permute_dims(gpuarr.reshape(x, sl[1]), (2, 0, 1))
    got = gpuarr.nonzero(v)
    for g, w in zip(got, np.nonzero(m)):
        np.testing.assert_array_equal(g.numpy(), w)


def test_boolean_mask_indexing_of_every_dtype(dev):
    r = np.random.default_rng(3)
    m = r.random(2 * TILE + 33) < 0.4
    for dtype in ["bool", "int8", "int16", "float32", "int64", "complex64", "complex128"]:
        a = (r.standard_normal(m.size) * 10).astype(dtype)
        x = gpuarr.asarray(a, device=dev)
        np.testing.assert_array_equal(x[gpuarr.asarray(m, device=dev)].numpy(), a[m])


@pytest.mark.parametrize("n", [1, 3, 4, 5, 1000, 100_003])
def test_one_dimensional_gather_and_scatter_in_fours(dev, n):
    r = np.random.default_rng(n)
    a = r.standard_normal(2 * n + 7)
    idx = r.integers(-a.size, a.size, n)
    x, ix = gpuarr.asarray(a, device=dev), gpuarr.asarray(idx, device=dev)
    np.testing.assert_array_equal(x[ix].numpy(), a[idx])
    np.testing.assert_array_equal(gpuarr.take(x[::2], ix // 2).numpy(),
                                  np.take(a[::2], idx // 2))
    # scatter of distinct positions (which write wins among repeats is unspecified)
    pos = r.permutation(a.size)[:n]
    vals = r.standard_normal(n)
    y = gpuarr.asarray(a.copy(), device=dev)
    y[gpuarr.asarray(pos, device=dev)] = gpuarr.asarray(vals, device=dev)
    want = a.copy()
    want[pos] = vals
    np.testing.assert_array_equal(y.numpy(), want)


def test_one_dimensional_gather_reports_a_bad_index_in_any_of_the_four(dev):
    a = np.arange(10.0)
    x = gpuarr.asarray(a, device=dev)
    for bad_at in range(6):
        idx = np.zeros(6, np.int64)
        idx[bad_at] = 10
        with pytest.raises(IndexError, match="index 10 is out of bounds"):
            x[gpuarr.asarray(idx, device=dev)].numpy()
