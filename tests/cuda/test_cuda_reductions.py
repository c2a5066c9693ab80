"""Reductions on a CUDA device (csrc/cuda/kernels/k_reduce.cu), second pass (issue 29 item 1):
a warp per output for inner-axis rows of 65 to 2048 elements, 16-byte loads four deep
where the reduced axis is contiguous (a scalar head up to the first 16-byte boundary
and a scalar tail), four independent scalar loads otherwise. Every path against NumPy
over dtypes, odd row lengths (so rows start at every alignment) and strided views, and
its launch geometry (gpuarr.testing.count_kernels). Run on emulated CUDA or a GPU.
"""
import numpy as np
import pytest

import gpuarr
from conftest import needs_cuda_devices

pytestmark = needs_cuda_devices

OPS = ["sum", "prod", "max", "min", "argmax", "argmin", "all", "any"]
DTYPES = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "float16",
          "float32", "float64", "complex64", "complex128"]


@pytest.fixture
def dev():
    d = gpuarr.gpu(0)
    gpuarr.synchronize(d)
    return d


def _data(shape, dtype, op, seed):
    r = np.random.default_rng(seed)
    if dtype == "bool":
        return r.random(shape) > (0.02 if op == "all" else 0.98)
    if op == "prod":
        a = np.ones(shape, dtype)
        a.reshape(-1)[:: 37] = 2 if np.dtype(dtype).kind != "c" else 1 + 1j
        return a
    if np.dtype(dtype).kind in "iu":
        return r.integers(0, 100, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dtype)
    return r.standard_normal(shape).astype(dtype)


def _cases():
    for op in OPS:
        for dtype in DTYPES:
            if dtype.startswith("complex") and op in ("max", "min", "argmax", "argmin"):
                continue  # the array API orders no complex numbers
            if dtype == "bool" and op in ("sum", "prod"):
                continue
            yield op, dtype


def _compare(got, a, op, axis):
    want = getattr(np, op)(a, axis=axis)
    if op == "sum" and a.dtype.kind in "fc":
        wide = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64).sum(axis=axis)
        tol = {2: 3e-2, 4: 1e-5, 8: 1e-12, 16: 1e-12}[a.dtype.itemsize]
        if a.dtype == np.complex64:
            tol = 1e-5
        np.testing.assert_allclose(got.astype(wide.dtype), wide, rtol=tol,
                                   atol=tol * np.sqrt(a.shape[-1]))
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op, dtype", list(_cases()))
def test_warp_per_row_matches_numpy_at_every_alignment(dev, op, dtype):
    # rows of 1001: each starts at another offset from a 16-byte boundary, so the
    # scalar head, the 16-byte words four deep and the scalar tail all take part
    a = _data((19, 1001), dtype, op, 11)
    if op in ("argmax", "argmin"):
        a[3, 900] = a[3, 950] = a.max() if op == "argmax" else a.min()  # ties: first
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        got = getattr(gpuarr, op)(x, axis=1)
    assert k.launches == 1 and k.max_grid_blocks == 3, k  # 19 warps, 8 per block
    _compare(got.numpy(), a, op, 1)


@pytest.mark.parametrize("op, dtype", list(_cases()))
def test_block_per_row_matches_numpy_at_every_alignment(dev, op, dtype):
    a = _data((5, 6007), dtype, op, 12)
    if op in ("argmax", "argmin"):
        a[2, 6000] = a[2, 6005] = a.max() if op == "argmax" else a.min()
    got = getattr(gpuarr, op)(gpuarr.asarray(a, device=dev), axis=1).numpy()
    _compare(got, a, op, 1)


@pytest.mark.parametrize("shape", [(19, 1001), (5, 6007)])  # a warp, a block per row
@pytest.mark.parametrize("dtype, out", [
    ("int8", "complex128"), ("uint16", "complex128"), ("float16", "complex128"),
    ("int32", "complex128"), ("float32", "int64"), ("float16", "int64"),
    ("float64", "uint64")])
def test_sums_into_another_kind(dev, shape, dtype, out):
    # k_reduce.cu's lighter paths: a real element's complex sum runs Kahan on the real
    # part alone (the imaginary part must stay exactly +0.0), and float elements into an
    # integer sum load 2 to a word
    a = _data(shape, dtype, "sum", 13)
    if out != "complex128":
        a = (np.abs(a) * 100).astype(dtype)
    got = gpuarr.sum(gpuarr.asarray(a, device=dev), axis=1,
                     dtype=getattr(gpuarr, out)).numpy()
    want = np.sum(a, axis=1, dtype=out)
    assert got.dtype == want.dtype
    if out == "complex128":
        assert (got.imag == 0).all() and not np.signbit(got.imag).any(), got.imag
        if a.dtype.kind == "f":
            np.testing.assert_allclose(got.real, a.astype(np.float64).sum(axis=1),
                                       rtol=1e-12, atol=1e-9)
            return
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [65, 66, 127, 2047, 2048, 2049, 4099])
@pytest.mark.parametrize("dtype", ["int8", "float32", "float64", "complex128"])
def test_row_lengths_around_the_kernel_boundaries(dev, n, dtype):
    a = _data((10, n), dtype, "sum", n)
    got = gpuarr.sum(gpuarr.asarray(a, device=dev), axis=1).numpy()
    _compare(got, a, "sum", 1)
    if dtype != "complex128":
        got = gpuarr.argmax(gpuarr.asarray(a, device=dev), axis=1).numpy()
        np.testing.assert_array_equal(got, np.argmax(a, axis=1))


@pytest.mark.parametrize("view", ["reversed", "every_other", "column_block"])
@pytest.mark.parametrize("op", ["sum", "max", "argmin"])
def test_strided_rows_take_the_scalar_path(dev, view, op):
    a = _data((12, 3000), "float32", op, 13)
    x = gpuarr.asarray(a, device=dev)
    sl = {"reversed": np.s_[:, ::-1], "every_other": np.s_[:, ::2],
          "column_block": np.s_[:, 7:1500]}[view]
    got = getattr(gpuarr, op)(x[sl], axis=1).numpy()
    _compare(got, a[sl], op, 1)


def test_full_reduction_of_an_unaligned_view_is_exact_for_integers(dev):
    a = np.random.default_rng(14).integers(-1000, 1000, 300_001).astype(np.int32)
    x = gpuarr.asarray(a, device=dev)
    for start in range(4):  # offsets of 0 to 12 bytes from a 16-byte boundary
        assert int(gpuarr.sum(x[start:])) == int(a[start:].sum())
        assert int(gpuarr.argmin(x[start:])) == int(np.argmin(a[start:]))


def test_outer_axis_reduction_loads_four_rows_at_a_time(dev):
    a = _data((1003, 64), "float64", "sum", 15)  # 1003 = 4 x 250 + 3: a tail of 3
    got = gpuarr.sum(gpuarr.asarray(a, device=dev), axis=0).numpy()
    _compare(got, a, "sum", 0)
    for op in ("max", "argmax"):
        got = getattr(gpuarr, op)(gpuarr.asarray(a, device=dev), axis=0).numpy()
        np.testing.assert_array_equal(got, getattr(np, op)(a, axis=0))
    b = np.random.default_rng(16).integers(-2**62, 2**62, (1003, 40), dtype=np.int64)
    for op in ("max", "min"):
        got = getattr(gpuarr, op)(gpuarr.asarray(b, device=dev), axis=0).numpy()
        np.testing.assert_array_equal(got, getattr(np, op)(b, axis=0))
