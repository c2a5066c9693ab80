"""Views: reshape, permute_dims/transpose/.T/.mT, squeeze, expand_dims, flip, moveaxis,
swapaxes, broadcast_to share memory with their input (no data moves), and give
NumPy's values and shapes."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuarr

A = np.arange(24.0).reshape(2, 3, 4)


def _x(device, a=A):
    return gpuarr.array(a, device=device)


def _same(got, expect):
    assert got.shape == expect.shape
    np.testing.assert_array_equal(got.numpy(), expect)


@pytest.mark.parametrize("shape", [(6, 4), (4, -1), (-1,), (24,), (2, 12), (1, 24, 1),
                                   (2, 3, 2, 2), (3, 8)])
def test_reshape_of_contiguous_is_a_view(device, shape):
    x = _x(device)
    y = gpuarr.reshape(x, shape)
    _same(y, A.reshape(shape))
    assert y._storage_id == x._storage_id


def test_reshape_method_accepts_varargs_and_tuple(device):
    x = _x(device)
    _same(x.reshape(4, 6), A.reshape(4, 6))
    _same(x.reshape((4, 6)), A.reshape(4, 6))
    _same(x.reshape(-1), A.reshape(-1))


def test_reshape_of_some_non_contiguous_inputs_is_still_a_view(device):
    x = _x(device)[:, :, ::2]  # (2, 3, 2), strided last axis
    a = A[:, :, ::2]
    y = x.reshape(6, 2)  # merges the two leading (contiguous among themselves) axes
    _same(y, a.reshape(6, 2))
    assert y._storage_id == x._storage_id
    t = _x(device).T  # (4, 3, 2)
    y = t.reshape(4, 3, 1, 2)
    _same(y, A.T.reshape(4, 3, 1, 2))
    assert y._storage_id == t._storage_id


def test_reshape_that_needs_a_copy_copies(device):
    t = _x(device).T
    y = t.reshape(-1)
    _same(y, A.T.reshape(-1))
    assert y._storage_id != t._storage_id
    with pytest.raises(ValueError, match="copy"):
        gpuarr.reshape(t, (-1,), copy=False)
    z = gpuarr.reshape(_x(device), (24,), copy=True)
    assert z._storage_id != _x(device)._storage_id


@pytest.mark.parametrize("shape", [(5, -1), (-1, -1), (25,), (-2, -3), (7, 0, -1)])
def test_reshape_errors_like_numpy(device, shape):
    with pytest.raises(ValueError):
        A.reshape(shape)
    with pytest.raises(ValueError):
        _x(device).reshape(shape)


def test_reshape_of_empty_and_0d(device):
    e = gpuarr.array(np.zeros((0, 3)), device=device)
    _same(e.reshape(3, 0, 5), np.zeros((3, 0, 5)))
    _same(e.reshape(-1, 3), np.zeros((0, 3)))
    z = gpuarr.array(np.array(5.0), device=device)
    _same(z.reshape(1, 1), np.full((1, 1), 5.0))
    _same(gpuarr.array(np.array([7.0]), device=device).reshape(()), np.array(7.0))


@pytest.mark.parametrize("axes", [(0, 1, 2), (2, 1, 0), (1, 0, 2), (-1, 0, 1)])
def test_permute_dims_is_a_view(device, axes):
    x = _x(device)
    y = gpuarr.permute_dims(x, axes)
    _same(y, np.transpose(A, axes))
    assert y._storage_id == x._storage_id


def test_transpose_T_and_mT(device):
    x = _x(device)
    _same(x.T, A.T)
    _same(x.mT, np.swapaxes(A, -1, -2))
    _same(gpuarr.matrix_transpose(x), np.swapaxes(A, -1, -2))
    _same(gpuarr.transpose(x), A.T)
    _same(x.transpose(), A.T)
    _same(x.transpose(1, 0, 2), A.transpose(1, 0, 2))
    _same(x.transpose((1, 0, 2)), A.transpose(1, 0, 2))
    v = gpuarr.array(np.arange(3.0), device=device)
    _same(v.T, np.arange(3.0))
    with pytest.raises(ValueError):
        v.mT


def test_bad_permutations_raise(device):
    x = _x(device)
    for axes in [(0, 1), (0, 0, 1), (0, 1, 3)]:
        with pytest.raises(ValueError):
            gpuarr.permute_dims(x, axes)


def test_squeeze_and_expand_dims(device):
    a = np.arange(6.0).reshape(1, 2, 1, 3)
    x = _x(device, a)
    _same(gpuarr.squeeze(x), np.squeeze(a))
    _same(gpuarr.squeeze(x, axis=0), np.squeeze(a, axis=0))
    _same(gpuarr.squeeze(x, axis=(0, -2)), np.squeeze(a, axis=(0, -2)))
    _same(x.squeeze(), np.squeeze(a))
    assert gpuarr.squeeze(x)._storage_id == x._storage_id
    with pytest.raises(ValueError, match="size not equal to one"):
        gpuarr.squeeze(x, axis=1)
    with pytest.raises(ValueError, match="out of bounds"):
        gpuarr.squeeze(x, axis=4)
    _same(gpuarr.expand_dims(x, axis=0), np.expand_dims(a, 0))
    _same(gpuarr.expand_dims(x, axis=-1), np.expand_dims(a, -1))
    _same(gpuarr.expand_dims(x, axis=(0, 3)), np.expand_dims(a, (0, 3)))
    assert gpuarr.expand_dims(x, axis=1)._storage_id == x._storage_id
    with pytest.raises(ValueError):
        gpuarr.expand_dims(x, axis=6)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
def test_flip_is_a_negative_stride_view(device, axis):
    x = _x(device)
    y = gpuarr.flip(x, axis=axis)
    _same(y, np.flip(A, axis=axis))
    assert y._storage_id == x._storage_id
    _same(gpuarr.flip(y, axis=axis), A)


def test_write_through_views_is_seen_in_the_base(device):
    a = A.copy()
    x = _x(device, a)
    gpuarr.flip(x, axis=2)[0, 0, 0] = -1.0
    a[0, 0, -1] = -1.0
    x.T[1, 2, 0] = -2.0
    a[0, 2, 1] = -2.0
    x.reshape(6, 4)[5] = -3.0
    a[1, 2] = -3.0
    gpuarr.expand_dims(x, axis=0)[0, 1, 0, 0] = -4.0
    a[1, 0, 0] = -4.0
    np.testing.assert_array_equal(x.numpy(), a)


def test_moveaxis_and_swapaxes(device):
    x = _x(device)
    _same(gpuarr.moveaxis(x, 0, -1), np.moveaxis(A, 0, -1))
    _same(gpuarr.moveaxis(x, (0, 1), (2, 0)), np.moveaxis(A, (0, 1), (2, 0)))
    _same(gpuarr.swapaxes(x, 0, 2), np.swapaxes(A, 0, 2))
    _same(x.swapaxes(-1, 1), np.swapaxes(A, -1, 1))
    assert gpuarr.moveaxis(x, 0, 1)._storage_id == x._storage_id


def test_broadcast_to_and_broadcast_arrays(device):
    v = _x(device, np.arange(4.0))
    b = gpuarr.broadcast_to(v, (3, 4))
    _same(b, np.broadcast_to(np.arange(4.0), (3, 4)))
    assert b._storage_id == v._storage_id and b.strides[0] == 0
    with pytest.raises(ValueError):
        gpuarr.broadcast_to(v, (3, 5))
    with pytest.raises(ValueError):
        gpuarr.broadcast_to(_x(device), (3, 4))
    c = _x(device, np.arange(3.0).reshape(3, 1))
    p, q = gpuarr.broadcast_arrays(v, c)
    ep, eq = np.broadcast_arrays(np.arange(4.0), np.arange(3.0).reshape(3, 1))
    _same(p, ep)
    _same(q, eq)
    assert gpuarr.broadcast_shapes((3, 1), (4,)) == (3, 4)


def test_broadcast_arrays_refuses_two_devices(two_gpus):
    g0, g1 = two_gpus
    with pytest.raises(gpuarr.DeviceMismatchError):
        gpuarr.broadcast_arrays(gpuarr.array([1.0], device=g0), gpuarr.array([1.0], device=g1))


def test_ravel_is_a_view_when_contiguous_and_flatten_always_copies(device):
    x = _x(device)
    r = gpuarr.ravel(x)
    _same(r, A.ravel())
    assert r._storage_id == x._storage_id
    f = x.flatten()
    _same(f, A.flatten())
    assert f._storage_id != x._storage_id
    _same(x.T.ravel(), A.T.ravel())


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_random_reshape_of_random_views_matches_numpy(data):
    base = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    perm = data.draw(st.permutations(range(4)))
    steps = data.draw(st.tuples(*[st.sampled_from([1, -1, 2]) for _ in range(4)]))
    a = base.transpose(perm)[tuple(slice(None, None, s) for s in steps)]
    x = gpuarr.asarray(base).transpose(perm)[tuple(slice(None, None, s) for s in steps)]
    dims = [d for d in a.shape]
    # a random regrouping of the element count into a new shape
    shape = data.draw(st.permutations(dims))
    y = x.reshape(shape)
    np.testing.assert_array_equal(y.numpy(), a.reshape(shape))
    # a view exactly when NumPy can make one
    view_np = np.shares_memory(a.reshape(shape), a)
    assert (y._storage_id == x._storage_id) == view_np


def test_iterating_yields_views_of_the_first_axis(device):
    a = np.arange(6.0).reshape(3, 2)
    x = gpuarr.asarray(a, device=device)
    rows = list(x)
    assert len(rows) == 3 and all(r.device == device for r in rows)
    assert all(r._storage_id == x._storage_id for r in rows)
    np.testing.assert_array_equal(np.stack([r.numpy() for r in rows]), a)
    with pytest.raises(TypeError, match="0-d"):
        iter(gpuarr.asarray(np.float32(1.0), device=device)).__next__()
