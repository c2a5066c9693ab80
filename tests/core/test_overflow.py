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


@pytest.mark.parametrize("values", [[2**64 - 1], [0, 2**63], [2**63 + 5, 1]],
                         ids=["max", "int64_min_bits", "first"])
def test_uint64_index_arrays_beyond_int64_raise_index_error(device, values):
    # The conversion to int64 must not wrap 2**64 - 1 to -1 (x[-1], silently).
    # NumPy itself wraps uint64 index arrays (2.4: a[[2**64 - 1]] is a[-1], and
    # 2**63 is reported as index -9223372036854775808); gpuarr reports every value
    # above int64's range as out of bounds instead (docs/DESIGN.md, "Decisions").
    a = np.arange(5.0)
    idx = np.asarray(values, dtype=np.uint64)
    x = gpuarr.asarray(a, device=device)
    keys = [gpuarr.asarray(idx, device=device)]
    if device == gpuarr.cpu():
        keys.append(idx)  # a NumPy index wraps host memory: the CPU only
    w = gpuarr.asarray(a, device=device)
    for key in keys:
        # on a GPU the kernel's bounds check fails the operation after it was queued:
        # synchronize() raises it (docs/DESIGN.md, "Failed queued work")
        with pytest.raises(IndexError, match="out of bounds"):
            x[key]
            gpuarr.synchronize()
        with pytest.raises(IndexError, match="out of bounds"):
            w[key] = 7.0
            gpuarr.synchronize()
        with pytest.raises(IndexError, match="out of bounds"):
            gpuarr.take(x, gpuarr.asarray(idx, device=device))
            gpuarr.synchronize()
        with pytest.raises(IndexError, match="out of bounds"):
            x.reshape(1, 5)[0, key]  # next to a basic index
            gpuarr.synchronize()
    np.testing.assert_array_equal(x.numpy(), a)
    if device == gpuarr.cpu():
        np.testing.assert_array_equal(w.numpy(), a)  # refused at once: nothing written
    else:
        with pytest.raises(IndexError, match="out of bounds"):
            w.numpy()  # the destination of a failed scatter is failed
    # in range, uint64 indices still work
    ok = np.asarray([4, 0], dtype=np.uint64)
    np.testing.assert_array_equal(x[gpuarr.asarray(ok, device=device)].numpy(), a[ok])
