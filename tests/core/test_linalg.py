"""gpuarr.linalg norms against numpy.linalg; results stay on the device."""
import math

import numpy as np
import pytest

import gpuarr
from conftest import to_numpy


def _close(got, want):
    got = to_numpy(got)
    want = np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "complex64"])
@pytest.mark.parametrize("ord", [None, 1, 2, math.inf, -math.inf, 0, 3, 0.5])
def test_vector_norm_matches_numpy(device, dtype, ord):
    a = np.random.default_rng(0).standard_normal(7) * 3
    a = (a + 1j * a[::-1] if dtype.startswith("complex") else a).astype(dtype)
    x = gpuarr.asarray(a, device=device)
    _close(gpuarr.linalg.norm(x, ord=ord), np.linalg.norm(a, ord=ord))


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, math.inf, -math.inf])
def test_matrix_norm_matches_numpy(device, ord):
    a = np.random.default_rng(1).standard_normal((2, 4, 5)).astype(np.float32)
    x = gpuarr.asarray(a, device=device)
    _close(gpuarr.linalg.norm(gpuarr.asarray(a[0], device=device), ord=ord),
           np.linalg.norm(a[0], ord=ord))
    for kd in (False, True):
        _close(gpuarr.linalg.norm(x, ord=ord, axis=(1, 2), keepdims=kd),
               np.linalg.norm(a, ord=ord, axis=(1, 2), keepdims=kd))
        if ord is not None:
            _close(gpuarr.linalg.matrix_norm(x, ord=ord, keepdims=kd),
                   np.linalg.matrix_norm(a, ord=ord, keepdims=kd))


def test_norm_over_axes_and_keepdims(device):
    a = np.random.default_rng(2).standard_normal((3, 4, 5))
    x = gpuarr.asarray(a, device=device)
    _close(gpuarr.linalg.norm(x), np.linalg.norm(a))
    _close(gpuarr.linalg.norm(x, axis=1, keepdims=True), np.linalg.norm(a, axis=1, keepdims=True))
    _close(gpuarr.linalg.vector_norm(x, axis=(0, 2), ord=1), np.linalg.vector_norm(a, axis=(0, 2), ord=1))


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_matrix_norms_from_singular_values_match_numpy(ord):
    # (tests/core/test_linalg_lapack.py checks them over dtypes, axes and devices)
    a = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
    _close(gpuarr.linalg.norm(gpuarr.asarray(a), ord=ord), np.linalg.norm(a, ord=ord))


def test_norm_on_a_gpu_makes_no_transfer(gpu_device):
    x = gpuarr.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device=gpu_device)
    gpuarr.reset_transfer_stats()
    n = gpuarr.linalg.norm(x)
    m = gpuarr.linalg.matrix_norm(x, ord=1)
    assert n.device == gpu_device and m.device == gpu_device
    assert gpuarr.transfer_stats().d2h_count == 0
    assert abs(float(n) - np.linalg.norm(np.arange(12.0))) < 1e-4


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(7,), (300, 501), (1,), ()])
def test_two_norm_over_every_axis_sums_squares_without_a_temporary(device, dtype, shape):
    # over every axis, sum(x * x) is one fused operation (csrc/ops/ga_norm.c): on the CPU
    # and simulated GPUs reduced as the squares are made, bitwise the multiply-then-sum
    # it replaces; CUDA multiplies, then sums
    from gpuarr.testing import count_work
    a = np.asarray(np.random.default_rng(3).standard_normal(shape) * 3).astype(dtype)
    x = gpuarr.asarray(a, device=device)
    with count_work(device) as w:
        n = gpuarr.linalg.norm(x)
    want = gpuarr.sqrt((x * x).sum())
    assert n.dtype == want.dtype and to_numpy(n).tobytes() == to_numpy(want).tobytes()
    on_cuda = device.type == "gpu" and gpuarr._core._gpu_mode()[0] in ("cuda", "emulated")
    # the sqrt, and the squares where the device cannot reduce them as they are made
    assert w[device].elementwise == 1 + on_cuda and w[device].reductions == 1, str(w)
    if len(shape) == 2:
        m = gpuarr.linalg.norm(x, keepdims=True)
        assert m.shape == (1, 1) and to_numpy(m)[0, 0] == to_numpy(n)
        assert to_numpy(gpuarr.linalg.matrix_norm(x)) == to_numpy(n)
