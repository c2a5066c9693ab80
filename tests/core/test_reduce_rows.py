"""Reductions whose kept axis has the smallest stride (x.sum(axis=0) of a C-contiguous
matrix): the CPU's row accumulation (ga_cpu_reduce.c, rows_task), against NumPy.

The CPU device and simulated GPUs run that code: a float sum accumulates rows in
order in double, so it equals NumPy's float64 sum along axis 0 (also row by row)
rounded once, bit for bit; emulated CUDA has its own kernels and is compared within
a tolerance. Row counts around the four rows combined per pass, widths around the
1,024-element tiles, several kept axes (the output walked across an axis boundary),
NaN and infinities for max/min, and strided and transposed inputs."""
import numpy as np
import pytest

import gpuarr
from conftest import to_numpy


def _runs_cpu_code(device):
    return device.type == "cpu" or gpuarr._core._gpu_mode()[0] == "simulated"


def _data(shape, dtype, seed, specials=False):
    r = np.random.default_rng(seed)
    a = (r.standard_normal(shape) * 10).astype(dtype)
    if specials and a.size:
        flat = a.reshape(-1)
        idx = r.choice(flat.size, size=max(1, flat.size // 50), replace=False)
        flat[idx] = r.choice(np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dtype),
                             size=idx.size)
    return a


def _check(got, want, exact):
    got = to_numpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        # values of about 10 summed over up to 130 rows: float32 partial sums near
        # 1e3 round at about 1e-4 (the GPU's float32 accumulators)
        f32 = want.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5 if f32 else 1e-12,
                                   atol=2e-4 if f32 else 1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rows", [2, 3, 4, 5, 7, 8, 9, 130])
@pytest.mark.parametrize("cols", [4, 10, 1023, 1025, 4100])
def test_sum_over_rows_is_the_ordered_double_sum(device, dtype, rows, cols):
    a = _data((rows, cols), dtype, rows * cols)
    x = gpuarr.asarray(a, device=device)
    want = a.astype(np.float64).sum(axis=0).astype(dtype)
    _check(gpuarr.sum(x, axis=0), want, _runs_cpu_code(device))
    _check(gpuarr.mean(x, axis=0), (a.astype(np.float64).sum(axis=0) / rows)
           .astype(dtype), False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("rows", [2, 4, 5, 9, 64])
@pytest.mark.parametrize("cols", [4, 33, 1030])
def test_max_min_over_rows_with_nan_and_infinities(device, dtype, name, rows, cols):
    a = _data((rows, cols), dtype, 7 * rows + cols, specials=True)
    if rows >= 5:  # a NaN in the last row of a four-row pass, and one in the remainder
        a[3, 0] = np.nan
        a[rows - 1, 1] = np.nan
    x = gpuarr.asarray(a, device=device)
    want = getattr(np, name)(a, axis=0)
    _check(getattr(gpuarr, name)(x, axis=0), want, True)


@pytest.mark.parametrize("shape,axis", [((6, 3, 5), 0), ((5, 2, 3, 7), 0),
                                        ((9, 4, 300), (0,)), ((3, 5, 6, 4), (0, 1)),
                                        ((7, 2, 1100), 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int8"])
def test_rows_with_several_kept_axes(device, shape, axis, dtype):
    """The kept axes coalesce into one run, and the output is walked across its own
    axes' boundaries; float16 and integer outputs take the general store."""
    a = _data(shape, "float64", sum(shape))
    a = a.astype(dtype) if dtype.startswith("float") else np.round(a).astype(dtype)
    x = gpuarr.asarray(a, device=device)
    for name in ("sum", "max", "min"):
        got = getattr(gpuarr, name)(x, axis=axis, keepdims=False)
        if name == "sum" and dtype.startswith("float"):
            want = a.astype(np.float64).sum(axis=axis).astype(dtype)
            _check(got, want, _runs_cpu_code(device) and dtype != "float16")
            if dtype == "float16":
                np.testing.assert_allclose(to_numpy(got).astype(np.float64), want, rtol=2e-3)
        else:
            _check(got, getattr(np, name)(a, axis=axis), True)
        kept = gpuarr.sum(x, axis=axis, keepdims=True)
        assert tuple(kept.shape) == np.sum(a, axis=axis, keepdims=True).shape


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_of_strided_and_transposed_views(device, dtype):
    a = _data((40, 60), dtype, 3)
    x = gpuarr.asarray(a, device=device)
    for view_g, view_n in [(x[::2, 1::3], a[::2, 1::3]), (x.T.T[:, ::-1], a[:, ::-1]),
                           (x[5:37, :], a[5:37, :])]:
        want = view_n.astype(np.float64).sum(axis=0).astype(dtype)
        _check(gpuarr.sum(view_g, axis=0), want, _runs_cpu_code(device))
        _check(gpuarr.max(view_g, axis=0), view_n.max(axis=0), True)
    # the transposed input reduces over its columns: the kept axis has the larger
    # stride there, so this is the per-output path, pairwise within each output
    _check(gpuarr.sum(x.T, axis=1), a.T.sum(axis=1), False)


def test_sum_of_negative_zeros_over_rows(device):
    """-0.0 rows: the sum starts from the identity 0.0, as every sum path does
    (NumPy's starts from the first row and keeps -0.0; both compare equal)."""
    a = np.full((6, 8), -0.0, dtype=np.float32)
    got = to_numpy(gpuarr.sum(gpuarr.asarray(a, device=device), axis=0))
    assert (got == 0).all()
