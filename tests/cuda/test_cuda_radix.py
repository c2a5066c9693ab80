"""The CUDA radix sort (csrc/cuda/kernels/k_radix.cu, issue 29 item 3): rows of numeric keys
longer than 1024, a histogram launch and one onesweep pass per key byte. Stable in both
directions with NaNs last; -0.0 and 0.0 tie; the sorted values are the input's bits
(the sign of each zero and each NaN's payload, in input order); positions with them.
NumPy's stable sort is the oracle. Run on emulated CUDA or a GPU.
"""
import numpy as np
import pytest

import gpuarr
from conftest import needs_cuda_devices
from test_sorting import _data, _nan_last_desc

pytestmark = needs_cuda_devices

RADIX = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
         "uint64", "float16", "float32", "float64"]


@pytest.fixture
def dev():
    d = gpuarr.gpu(0)
    gpuarr.synchronize(d)
    return d


def _order(a, descending):
    return _nan_last_desc(a, -1) if descending else np.argsort(a, axis=-1, stable=True)


@pytest.mark.parametrize("dtype", RADIX)
@pytest.mark.parametrize("descending", [False, True])
def test_every_radix_dtype_in_both_directions(dev, dtype, descending):
    a = _data(dtype, (3, 2 * 2048 + 77), seed=11)
    if dtype.startswith(("int", "uint")):  # the whole range: every byte matters
        info = np.iinfo(dtype)
        a.flat[::5] = np.random.default_rng(1).integers(info.min, info.max, a.size // 5 + 1,
                                                        dtype=dtype, endpoint=True)
    x = gpuarr.asarray(a, device=dev)
    want = _order(a, descending)
    with gpuarr.testing.count_kernels(dev) as k:
        idx = gpuarr.argsort(x, descending=descending)
    assert k.launches == 1 + a.dtype.itemsize and k.syncs == 0, k
    np.testing.assert_array_equal(idx.numpy(), want)
    val = gpuarr.sort(x, descending=descending).numpy()
    np.testing.assert_array_equal(val.view(f"u{a.dtype.itemsize}"),
                                  np.take_along_axis(a, want, -1).view(f"u{a.dtype.itemsize}"))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("descending", [False, True])
def test_sorted_floats_keep_each_zeros_sign_and_each_nans_payload(dev, dtype, descending):
    n = 5 * 1024 + 3
    r = np.random.default_rng(12)
    a = r.choice(np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf], dtype), n)
    u = a.view(f"u{a.dtype.itemsize}")
    nan = r.random(n) < 0.1
    bits = {"float16": (0x7C00, 0x3FF), "float32": (0x7F800000, 0x7FFFFF),
            "float64": (0x7FF0000000000000, 0xFFFFFFFFFFFFF)}[dtype]
    payload = r.integers(1, bits[1], n, endpoint=True).astype(u.dtype)
    sign = (r.random(n) < 0.5).astype(u.dtype) << (8 * a.dtype.itemsize - 1)
    u[nan] = (bits[0] | payload | sign)[nan]
    want = np.take_along_axis(a, _order(a, descending), -1)
    got = gpuarr.sort(gpuarr.asarray(a, device=dev), descending=descending).numpy()
    np.testing.assert_array_equal(got.view(u.dtype), want.view(u.dtype))


def test_rows_tiles_and_tails(dev):
    for rows, n in [(1, 1025), (2, 2048), (5, 2049), (7, 3 * 2048 + 1), (2, 40000)]:
        a = np.random.default_rng(n).integers(-1000, 1000, (rows, n)).astype(np.int32)
        x = gpuarr.asarray(a, device=dev)
        np.testing.assert_array_equal(gpuarr.argsort(x).numpy(),
                                      np.argsort(a, axis=-1, stable=True))
        np.testing.assert_array_equal(gpuarr.sort(x).numpy(), np.sort(a, axis=-1))


def test_int64_keys_use_8_passes_and_sort_extremes(dev):
    a = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0, -1, 1] * 600,
                 np.int64)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        got = gpuarr.sort(x)
    assert k.launches == 9 and k.syncs == 0, k
    np.testing.assert_array_equal(got.numpy(), np.sort(a))
    np.testing.assert_array_equal(gpuarr.argsort(x, descending=True).numpy(),
                                  _nan_last_desc(a, -1))


def test_sort_along_axis_0_and_of_views(dev):
    a = np.random.default_rng(13).standard_normal((3000, 3)).astype(np.float32)
    x = gpuarr.asarray(a, device=dev)
    np.testing.assert_array_equal(gpuarr.sort(x, axis=0).numpy(), np.sort(a, axis=0))
    v, w = x[::-2, 1], a[::-2, 1]
    np.testing.assert_array_equal(gpuarr.argsort(v).numpy(), np.argsort(w, stable=True))
