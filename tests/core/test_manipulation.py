"""Functions that make new arrays from others: concat/concatenate, stack, copy,
nonzero, take; their device rules and NumPy's shapes, values and errors."""
import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES


def _same(got, expect):
    assert got.shape == expect.shape
    assert got.dtype == str(expect.dtype)
    np.testing.assert_array_equal(got.numpy(), expect)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_matches_numpy(device, dtype, axis):
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    b = (np.arange(24).reshape(2, 3, 4)[:, :, ::-1] % 3).astype(dtype)
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    r = gpuarr.concat([x, y, x], axis=axis)
    _same(r, np.concatenate([a, b, a], axis=axis))
    assert r.device == device
    _same(gpuarr.concatenate((x, y), axis), np.concatenate((a, b), axis))


def test_concat_of_strided_views_and_empty_parts(device):
    a = np.arange(20.0).reshape(4, 5)
    x = gpuarr.asarray(a, device=device)
    e = gpuarr.asarray(np.zeros((0, 5)), device=device)
    _same(gpuarr.concat([x[::-2], e, x.T.T[1:3, ::-1]]), np.concatenate([a[::-2], a[1:3, ::-1]]))
    _same(gpuarr.concat([x, x], axis=None), np.concatenate([a, a], axis=None))
    _same(gpuarr.concat([e, e]), np.zeros((0, 5)))


def test_concat_errors_like_numpy(device):
    x = gpuarr.asarray(np.zeros((2, 3)), device=device)
    with pytest.raises(ValueError, match="same number of dimensions"):
        gpuarr.concat([x, gpuarr.asarray(np.zeros(3), device=device)])
    with pytest.raises(ValueError, match="must match exactly"):
        gpuarr.concat([x, gpuarr.asarray(np.zeros((2, 4)), device=device)])
    with pytest.raises(ValueError, match="out of bounds"):
        gpuarr.concat([x, x], axis=2)
    with pytest.raises(ValueError):
        gpuarr.concat([])
    with pytest.raises(ValueError, match="zero-dimensional"):
        gpuarr.concat([gpuarr.asarray(np.float64(1.0), device=device)])


def test_concat_promotes_dtypes_like_numpy(device):
    a = np.arange(3, dtype=np.int32)
    b = np.arange(3, dtype=np.float32)
    c = np.array([True, False, True])
    r = gpuarr.concat([gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device),
                       gpuarr.asarray(c, device=device)])
    _same(r, np.concatenate([a, b, c]))


def test_concat_and_stack_refuse_two_devices(two_gpus):
    g0, g1 = two_gpus
    x, y = gpuarr.array([1.0], device=g0), gpuarr.array([2.0], device=g1)
    with pytest.raises(gpuarr.DeviceMismatchError, match="gpu"):
        gpuarr.concat([x, y])
    with pytest.raises(gpuarr.DeviceMismatchError):
        gpuarr.stack([x, y])
    with pytest.raises(gpuarr.DeviceMismatchError):
        gpuarr.concat([gpuarr.array([1.0]), x])


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_matches_numpy(device, axis):
    a = np.arange(6.0).reshape(2, 3)
    x = gpuarr.asarray(a, device=device)
    _same(gpuarr.stack([x, x.T.T, x[::1]], axis=axis),
          np.stack([a, a, a], axis=axis))


def test_stack_errors(device):
    x = gpuarr.asarray(np.zeros((2, 3)), device=device)
    with pytest.raises(ValueError, match="same shape"):
        gpuarr.stack([x, x.T])
    with pytest.raises(ValueError):
        gpuarr.stack([])
    with pytest.raises(ValueError, match="out of bounds"):
        gpuarr.stack([x, x], axis=3)


def test_stack_of_0d_arrays(device):
    s = gpuarr.asarray(np.float32(2.5), device=device)
    _same(gpuarr.stack([s, s]), np.array([2.5, 2.5], np.float32))


def test_copy_never_shares_memory(device):
    a = np.arange(12.0).reshape(3, 4)
    x = gpuarr.array(a, device=device)
    for c in (gpuarr.copy(x), x.copy(), x.T.copy()):
        assert c._storage_id != x._storage_id and c.is_contiguous
    c = x.copy()
    c[0, 0] = 100.0
    assert x[0, 0].item() == 0.0
    _same(x.T.copy(), a.T)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nonzero_of_bool_and_numbers(device, dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    m = a.astype(bool)
    x = gpuarr.asarray(m, device=device)
    got = gpuarr.nonzero(x)
    expect = np.nonzero(m)
    assert len(got) == 3
    for g, e in zip(got, expect):
        assert g.dtype == gpuarr.int64 and g.device == device
        np.testing.assert_array_equal(g.numpy(), e)
    for g, e in zip(gpuarr.asarray(a, device=device).nonzero(), np.nonzero(a)):
        np.testing.assert_array_equal(g.numpy(), e)


def test_nonzero_of_strided_empty_and_all_false(device):
    m = np.arange(30).reshape(5, 6) % 4 == 0
    x = gpuarr.asarray(m, device=device)
    for g, e in zip(gpuarr.nonzero(x[::-1, ::2]), np.nonzero(m[::-1, ::2])):
        np.testing.assert_array_equal(g.numpy(), e)
    for g in gpuarr.nonzero(gpuarr.asarray(np.zeros((3, 0), bool), device=device)):
        assert g.shape == (0,)
    for g in gpuarr.nonzero(gpuarr.asarray(np.zeros(4, bool), device=device)):
        assert g.shape == (0,)
    with pytest.raises(ValueError, match="0-d"):
        gpuarr.nonzero(gpuarr.asarray(np.True_, device=device))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_matches_numpy(device, axis):
    a = np.arange(20.0).reshape(4, 5)
    x = gpuarr.asarray(a, device=device)
    idx = np.array([[0, -1], [2, 3]])
    _same(gpuarr.take(x, gpuarr.asarray(idx, device=device), axis=axis),
          np.take(a, idx, axis=axis))
    _same(x.take(gpuarr.asarray(idx, device=device), axis=axis), np.take(a, idx, axis=axis))


def test_take_errors(device):
    x = gpuarr.asarray(np.arange(6.0), device=device)
    with pytest.raises(IndexError, match="out of bounds"):
        gpuarr.take(x, gpuarr.asarray([6], device=device))
        gpuarr.synchronize()  # a GPU reports its kernel's error at the next wait
    with pytest.raises(IndexError, match="integer"):
        gpuarr.take(x, gpuarr.asarray([1.0], device=device))
    with pytest.raises(ValueError, match="out of bounds"):
        gpuarr.take(x, gpuarr.asarray([0], device=device), axis=1)


def test_take_refuses_indices_on_another_device(two_gpus):
    g0, g1 = two_gpus
    x = gpuarr.asarray(np.arange(6.0), device=g0)
    with pytest.raises(gpuarr.DeviceMismatchError):
        gpuarr.take(x, gpuarr.asarray([0], device=g1))


def test_functions_refuse_non_arrays():
    with pytest.raises(TypeError, match="gpuarr.Array"):
        gpuarr.reshape(np.zeros(3), (3,))
    with pytest.raises(TypeError):
        gpuarr.concat([np.zeros(3)])
