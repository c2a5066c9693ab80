"""Overflow is checked wherever a shape, index or device number enters: NumPy's
exception types, never a silently wrapped value."""
import numpy as np
import pytest

import gpuarr


def test_broadcast_to_a_size_that_overflows_raises(device):
    x = gpuarr.ones(1, device=device)
    with pytest.raises(ValueError, match="too big"):
        gpuarr.broadcast_to(x, (2**32,) * 3)
    with pytest.raises(ValueError):
        np.broadcast_to(np.ones(1), (2**32,) * 3)
    big = gpuarr.broadcast_to(x, (2**20, 2**20))  # fits: a view, no memory
    assert big.size == 2**40


def test_reshape_to_a_size_that_overflows_raises():
    with pytest.raises((ValueError, MemoryError)):
        gpuarr.ones(1).reshape(2**32, 2**32, 2**32)


@pytest.mark.parametrize("index", [2**32 + 1, 2**31, 2**63, 2**64 + 1])
def test_device_numbers_beyond_int32_raise_overflow_error(index):
    with pytest.raises(OverflowError):
        gpuarr.Device("gpu", index)
    with pytest.raises(OverflowError):
        gpuarr.gpu(index)


def test_a_uint64_scalar_index_beyond_int64_raises_index_error(device):
    x = gpuarr.arange(5, device=device)
    with pytest.raises(IndexError):
        x[np.uint64(2**64 - 1)]
    with pytest.raises(IndexError):
        x[2**63]


def test_out_of_range_index_arrays_are_reported_when_the_result_is_empty(device):
    x = gpuarr.zeros((0, 3), device=device)
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, gpuarr.asarray([5], device=device)]
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, gpuarr.asarray([-4], device=device)]
    # newer NumPy raises here too (2.2, the floor CI tests, only warns): gpuarr
    # follows the newer rule on every NumPy
    # in range: an empty result, as NumPy
    assert x[:, gpuarr.asarray([2, -3], device=device)].shape == (0, 2)
    # an empty broadcast of the index arrays is not checked (NumPy neither)
    y = gpuarr.zeros((2, 3), device=device)
    r = y[gpuarr.asarray([7], device=device), gpuarr.asarray([], dtype="int64", device=device)]
    assert r.shape == np.zeros((2, 3))[np.asarray([7]), np.asarray([], dtype=np.int64)].shape
