"""sort, argsort, searchsorted and the unique_* functions: NumPy (stable sorts) is the
oracle, over dtypes and devices (CPU, simulated GPUs, CUDA: csrc/cuda/kernels/k_sort.cu), with
the standard's NaN rules. tests/cuda/test_cuda_sort.py adds the CUDA kernels' tile and run
boundaries and their launch budgets."""
import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES

def _data(dtype, shape=(4, 37), seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    a = rng.integers(-6, 7, size=shape)  # many ties: stability matters
    if dtype.startswith("u"):
        a = np.abs(a)
    a = a.astype(dtype)
    if dtype.startswith(("float", "complex")):
        a.flat[::7] = np.nan
        a.flat[3::11] = np.inf
        a.flat[5::13] = -0.0
    if dtype.startswith("complex"):
        a = a + 1j * rng.integers(-2, 3, size=shape).astype(dtype)
        a.flat[2::9] = complex(1, np.nan)
    return a


def _nan_last_desc(a, axis):
    """NumPy's stable descending order with NaNs last: the standard's rule."""
    n = a.shape[axis]
    rev = np.flip(a, axis=axis)
    idx = np.flip(np.argsort(rev, axis=axis, stable=True), axis=axis)
    idx = n - 1 - idx  # positions in a, stable among equals after the double flip
    # NaNs: np.argsort puts them last, the flips put them first; rotate them back.
    isnan = np.isnan(np.take_along_axis(a, idx, axis=axis))
    k = isnan.sum(axis=axis, keepdims=True)
    pos = np.arange(n).reshape([-1 if i == axis % a.ndim else 1 for i in range(a.ndim)])
    src = (pos + k) % n
    return np.take_along_axis(idx, src, axis=axis)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("axis", [-1, 0])
def test_sort_and_argsort_match_numpy_stable(device, dtype, axis):
    a = _data(dtype)
    x = gpuarr.asarray(a, device=device)
    got = gpuarr.sort(x, axis=axis)
    assert got.device == device and got.dtype == x.dtype
    np.testing.assert_array_equal(got.numpy(), np.sort(a, axis=axis, stable=True))
    idx = gpuarr.argsort(x, axis=axis)
    assert idx.dtype == gpuarr.int64
    np.testing.assert_array_equal(idx.numpy(), np.argsort(a, axis=axis, stable=True))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "float64", "float16", "bool"])
def test_descending_is_stable_with_nans_last(device, dtype):
    a = _data(dtype, (3, 29))
    x = gpuarr.asarray(a, device=device)
    idx = gpuarr.argsort(x, descending=True).numpy()
    want = _nan_last_desc(a, -1)
    np.testing.assert_array_equal(idx, want)
    np.testing.assert_array_equal(gpuarr.sort(x, descending=True).numpy(),
                                  np.take_along_axis(a, want, axis=-1))


def test_sort_edge_shapes(device):
    for shape in [(0,), (1,), (3, 0), (0, 3), (1000,)]:
        a = _data("float64", shape)
        x = gpuarr.asarray(a, device=device)
        np.testing.assert_array_equal(gpuarr.sort(x).numpy(), np.sort(a))
    a = _data("int32", (2, 3, 4))
    x = gpuarr.asarray(a, device=device)
    np.testing.assert_array_equal(gpuarr.sort(x, axis=1).numpy(), np.sort(a, axis=1))
    np.testing.assert_array_equal(gpuarr.sort(x[:, ::-1, 1:]).numpy(),
                                  np.sort(a[:, ::-1, 1:]))
    np.testing.assert_array_equal(gpuarr.sort(x, axis=None).numpy(), np.sort(a, axis=None))
    with pytest.raises(ValueError, match="0-d"):
        gpuarr.sort(gpuarr.asarray(1.0, device=device))
    with pytest.raises(ValueError, match="out of bounds"):
        gpuarr.argsort(x, axis=3)


def test_sort_never_touches_the_host(device):
    x = gpuarr.asarray(_data("float32"), device=device)
    with gpuarr.count_transfers() as t:
        gpuarr.sort(x)
        gpuarr.argsort(x, axis=0, descending=True)
    assert t.d2h_count == 0 and t.h2d_count == 0


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "float64", "complex64"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(device, dtype, side):
    a = np.sort(_data(dtype, (50,)), stable=True)
    v = _data(dtype, (3, 7), seed=1)
    x1, x2 = gpuarr.asarray(a, device=device), gpuarr.asarray(v, device=device)
    got = gpuarr.searchsorted(x1, x2, side=side)
    assert got.dtype == gpuarr.int64 and got.shape == v.shape
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(a, v, side=side))


def test_searchsorted_with_sorter_and_a_scalar(device):
    a = _data("float64", (40,))
    x = gpuarr.asarray(a, device=device)
    s = gpuarr.argsort(x)
    got = gpuarr.searchsorted(x, gpuarr.asarray([0.5, -3.0], device=device), sorter=s)
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(a, [0.5, -3.0],
                                                               sorter=np.argsort(a, stable=True)))
    assert gpuarr.searchsorted(gpuarr.sort(x), 2.0).item() == np.searchsorted(np.sort(a), 2.0)
    with pytest.raises(ValueError, match="side"):
        gpuarr.searchsorted(x, x, side="middle")
    with pytest.raises(ValueError, match="1-D"):
        gpuarr.searchsorted(gpuarr.ones((2, 2), device=device), x)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unique_functions_match_numpy(device, dtype):
    # NumPy's np.unique (sorted, each NaN distinct) is the oracle: the standard leaves
    # the order open, and gpuarr's is sorted.
    a = _data(dtype, (5, 9))
    x = gpuarr.asarray(a, device=device)
    values, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                               return_counts=True, equal_nan=False)
    inverse = inverse.reshape(a.shape)
    np.testing.assert_array_equal(gpuarr.unique_values(x).numpy(), values)
    got = gpuarr.unique_counts(x)
    np.testing.assert_array_equal(got.values.numpy(), values)
    np.testing.assert_array_equal(got.counts.numpy(), counts)
    got = gpuarr.unique_inverse(x)
    np.testing.assert_array_equal(got.values.numpy(), values)
    np.testing.assert_array_equal(got.inverse_indices.numpy(), inverse)
    got = gpuarr.unique_all(x)
    for field, want in zip(("values", "indices", "inverse_indices", "counts"),
                           (values, index, inverse, counts)):
        np.testing.assert_array_equal(getattr(got, field).numpy(), want)
    np.testing.assert_array_equal(got.values.numpy()[got.inverse_indices.numpy()], a)


def test_unique_nan_rules(device):
    a = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 1.0])
    x = gpuarr.asarray(a, device=device)
    v, c = gpuarr.unique_counts(x)
    np.testing.assert_array_equal(v.numpy(), [0.0, 1.0, np.nan, np.nan])  # each NaN distinct
    np.testing.assert_array_equal(c.numpy(), [2, 2, 1, 1])
    assert gpuarr.unique_values(gpuarr.ones(0, device=device)).shape == (0,)


def test_numpy_sort_functions_on_gpuarr_arrays(device):
    a = _data("float32")
    x = gpuarr.asarray(a, device=device)
    np.testing.assert_array_equal(np.sort(x).numpy(), np.sort(a, stable=True))
    np.testing.assert_array_equal(np.argsort(x, axis=0, stable=True).numpy(),
                                  np.argsort(a, axis=0, stable=True))
    np.testing.assert_array_equal(np.unique_values(x).numpy(), np.unique(a, equal_nan=False))
    with pytest.raises(TypeError, match="'kind'"):
        np.sort(x, kind="heapsort")
