"""x[key] and x[key] = value against NumPy: basic keys give views, integer arrays and
boolean masks give copies (gather) and assignments (scatter), with NumPy's shapes,
errors and assignment rules, on every device."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuarr
from conftest import ALL_DTYPES

A = np.arange(4 * 5 * 6).reshape(4, 5, 6)
A.flags.writeable = False  # CPU arrays made with asarray(A) share it: keep it intact

# Keys NumPy accepts on an array of shape (4, 5, 6).
KEYS = [
    # basic
    1, -1, (1, 2), (1, 2, 3), (-4, -5, -6), slice(None), slice(1, 3), slice(None, None, -1),
    slice(3, 0, -2), slice(-100, 100), slice(10, 20), (slice(None), 2), (Ellipsis, 0),
    (0, Ellipsis), (0, Ellipsis, 0), Ellipsis, None, (None, 1), (1, None, slice(None), None),
    (slice(None, None, 2), slice(None, None, -3), slice(1, None, 4)), (Ellipsis, None),
    (slice(2, 2),), (slice(None), slice(4, 1)), (),
    # integer arrays
    [0, 2], [-1, 0, -4], [[0, 1], [2, 3]], ([0, 1], [1, 2]), ([0, 1], [1, 2], [3, 4]),
    (slice(None), [0, 4]), (1, [0, 4]), (1, slice(None), [0, -1]), ([0, 1], slice(None), [1, 2]),
    ([[0], [3]], [0, 2]), ([0, 1], None, [0, 1]), ([0, 1], Ellipsis, [0, 1]),
    (slice(None), [0, 1], 2), (slice(1, 3), [[0, 1, 2]]), (Ellipsis, [5, 0]),
    (np.array([3, 1], dtype=np.int64), slice(None, None, -1)), ([],), (slice(None), []),
    (0, [[1, 2], [3, 4]], slice(None, 2)), ([1], [2], [3]), (None, [0, 1], [0, 1]),
    # boolean masks
    A > 50, A[:, :, 0] > 30, (slice(None), slice(None), A[0, 0] % 2 == 0), (slice(None), A[0] % 3 == 0),
    A > 1000, np.array([True, False, True, False]), (Ellipsis, A[0, 0] > 2),
    (A[:, 0, 0] > 20, 1), (A[:, :, 0] > 105, [1, 2]), True, False, (0, True), (np.True_, 1),
    (np.array([True, True, False, False]), slice(None), [0, 1]),
]


def _ids(k):
    s = repr(k)
    return s if len(s) < 40 else s[:37] + "..."


def _gkey(key, device):
    """The same key for gpuarr: NumPy index arrays become gpuarr arrays on the device
    (gpuarr refuses host NumPy arrays beside GPU arrays)."""
    if isinstance(key, tuple):
        return tuple(_gkey(k, device) for k in key)
    if isinstance(key, np.ndarray):
        return gpuarr.asarray(key, device=device)
    return key


@pytest.mark.parametrize("key", KEYS, ids=_ids)
def test_getitem_matches_numpy(device, key):
    x = gpuarr.asarray(A, device=device)
    expect = A[key]
    got = x[_gkey(key, device)]
    assert isinstance(got, gpuarr.Array)
    assert got.device == device
    assert got.shape == expect.shape
    np.testing.assert_array_equal(got.numpy(), expect)


@pytest.mark.parametrize("key", KEYS, ids=_ids)
def test_setitem_scalar_matches_numpy(device, key):
    a = A.copy()
    x = gpuarr.array(a, device=device)
    a[key] = -7
    x[_gkey(key, device)] = -7
    np.testing.assert_array_equal(x.numpy(), a)


@pytest.mark.parametrize("key", KEYS, ids=_ids)
def test_setitem_array_broadcast_to_indexed_shape(device, key):
    a = A.copy()
    x = gpuarr.array(a, device=device)
    shape = a[key].shape
    # the last axis only, so the value broadcasts over the others
    v = -np.arange(1, (shape[-1] if shape else 1) + 1).reshape(shape[-1:])
    if len(set(np.ravel(np.arange(a.size).reshape(a.shape)[key]))) != a[key].size:
        pytest.skip("repeated indices: which write wins is unspecified")
    a[key] = v
    x[_gkey(key, device)] = gpuarr.asarray(v, device=device)
    np.testing.assert_array_equal(x.numpy(), a)


BASIC = [k for k in KEYS[:24]]


@pytest.mark.parametrize("key", BASIC, ids=_ids)
def test_basic_indexing_gives_a_view_that_shares_memory(device, key):
    a = A.copy()
    x = gpuarr.array(a, device=device)
    v = x[key]
    assert v._storage_id == x._storage_id
    if v.size:
        v[...] = 999
        a[key] = 999
        np.testing.assert_array_equal(x.numpy(), a)


def test_single_element_is_a_0d_array_on_the_device(device):
    x = gpuarr.asarray(A, device=device)
    e = x[1, 2, 3]
    assert isinstance(e, gpuarr.Array) and e.shape == () and e.device == device
    assert e._storage_id == x._storage_id
    assert e.item() == A[1, 2, 3]


def test_slice_of_a_slice_shares_storage(device):
    x = gpuarr.asarray(A, device=device)
    assert x[1:]._storage_id == x._storage_id
    assert x[1:][::-1, 2]._storage_id == x._storage_id


@pytest.mark.parametrize("key", KEYS, ids=_ids)
def test_strided_negative_stride_base(device, key):
    big = np.arange(8 * 10 * 12).reshape(8, 10, 12)
    base_np = big[::-2, ::2, ::-2]  # shape (4, 5, 6), negative and positive strides
    xb = gpuarr.asarray(big, device=device)[::-2, ::2, ::-2]
    assert xb.shape == base_np.shape
    np.testing.assert_array_equal(xb[_gkey(key, device)].numpy(), base_np[key])
    b2 = big.copy()
    b2[::-2, ::2, ::-2][key] = -1
    xb[_gkey(key, device)] = -1
    np.testing.assert_array_equal(xb.numpy(), b2[::-2, ::2, ::-2])


def test_transposed_base_with_masks(device):
    a = A.copy()
    x = gpuarr.array(a, device=device)
    xt, at = x.T, a.T
    for key in [at > 60, at[:, :, 0] % 2 == 0, (at[:, 0, 0] > 2, slice(None), 1)]:
        np.testing.assert_array_equal(xt[_gkey(key, device)].numpy(), at[key])
        xt[_gkey(key, device)] = 0
        at[key] = 0
        np.testing.assert_array_equal(x.numpy(), a)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_and_scatter_every_dtype(device, dtype):
    a = (np.arange(30).reshape(5, 6) % 7).astype(dtype)
    x = gpuarr.array(a, device=device)
    idx = [4, 0, -1]
    np.testing.assert_array_equal(x[idx].numpy(), a[idx])
    np.testing.assert_array_equal(x[:, [1, 3]].numpy(), a[:, [1, 3]])
    np.testing.assert_array_equal(x[gpuarr.asarray(a > 3, device=device)].numpy(), a[a > 3])
    v = (np.arange(12).reshape(2, 6) % 2).astype(dtype)
    a[[1, 3]] = v
    x[[1, 3]] = gpuarr.asarray(v, device=device)
    one = np.ones((), dtype)
    m = a == 0
    a[m] = one
    x[gpuarr.asarray(m, device=device)] = one.item()
    np.testing.assert_array_equal(x.numpy(), a)


def test_repeated_indices_in_getitem(device):
    x = gpuarr.asarray(A, device=device)
    np.testing.assert_array_equal(x[[1, 1, 1]].numpy(), A[[1, 1, 1]])


def test_out_of_range_index_array_raises_and_leaves_x_unchanged(device):
    a = A.copy()
    x = gpuarr.array(a, device=device)
    # index arrays are checked by the device's kernel: on a GPU, queued work, whose
    # error surfaces at the next synchronizing call (docs/DESIGN.md, "Ordering")
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 4]]
        gpuarr.synchronize()
    with pytest.raises(IndexError, match="out of bounds"):
        x[[-5]]
        gpuarr.synchronize()
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 3, 9]] = 1
        gpuarr.synchronize()
    np.testing.assert_array_equal(x.numpy(), a)


@pytest.mark.parametrize("key, msg", [
    ([0, 4], "index 4 is out of bounds for axis 0 with size 4"),
    ((slice(None), [-6]), "index -6 is out of bounds for axis 1 with size 5"),
    ((Ellipsis, [[1], [7]]), "index 7 is out of bounds for axis 2 with size 6"),
], ids=["axis0", "axis1", "ellipsis"])
def test_out_of_range_host_index_raises_at_once_naming_the_axis(device, key, msg):
    # host data (a list) is checked on the host before it goes to the device, so the
    # error comes from the indexing call itself on every device, as in NumPy
    a = np.zeros((4, 5, 6))
    x = gpuarr.asarray(a, device=device)
    with pytest.raises(IndexError) as np_err:
        a[key]
    assert str(np_err.value) == msg
    with pytest.raises(IndexError, match=re.escape(msg)):
        x[key]
    with pytest.raises(IndexError, match=re.escape(msg)):
        x[key] = 1.0
    gpuarr.synchronize()  # nothing was deferred
    np.testing.assert_array_equal(x.numpy(), a)


BAD_KEYS = [
    (0, 0, 0, 0), 4, -5, (0, 5), [4], 1.0, "a", (Ellipsis, Ellipsis), [0.5],
    ([0, 1], [0, 1, 2]), np.ones(3, bool), (slice(None), np.ones(4, bool)), slice(0, 1, 0),
    {0}, 2**70, np.array([1.5]),
]


@pytest.mark.parametrize("key", BAD_KEYS, ids=_ids)
def test_bad_keys_raise_like_numpy(device, key):
    x = gpuarr.asarray(A, device=device)
    with pytest.raises(Exception) as np_err:
        A[key]
    with pytest.raises(Exception) as ga_err:
        x[_gkey(key, device)]
        gpuarr.synchronize()  # an index array out of range: the GPU reports it here
    assert isinstance(ga_err.value, np_err.type), (ga_err.value, np_err.value)


def test_bad_index_message_lists_valid_kinds():
    x = gpuarr.asarray(A)
    with pytest.raises(IndexError, match=r"only integers, slices"):
        x[1.5]
    with pytest.raises(IndexError, match="too many indices for array: array is "
                       "3-dimensional, but 4 were indexed"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 5"):
        x[0, 7]


def test_float_array_index_raises_index_error(device):
    x = gpuarr.asarray(A, device=device)
    with pytest.raises(IndexError, match="integer"):
        x[gpuarr.asarray(np.array([0.0, 1.0]), device=device)]


def test_overlapping_assignment_matches_numpy(device):
    a = np.arange(10.0)
    x = gpuarr.array(a, device=device)
    a[1:] = a[:-1]
    x[1:] = x[:-1]
    np.testing.assert_array_equal(x.numpy(), a)
    a[::-1] = a
    x[::-1] = x
    np.testing.assert_array_equal(x.numpy(), a)
    a[[0, 1, 2]] = a[[2, 1, 0]]
    x[[0, 1, 2]] = x[[2, 1, 0]]
    np.testing.assert_array_equal(x.numpy(), a)


def test_scalar_assignment_follows_numpy_overflow_rules(device):
    x = gpuarr.asarray(np.zeros(3, np.int8), device=device)
    with pytest.raises(OverflowError):
        x[0] = 300
    x[1] = -5.7  # float to int truncates, as NumPy's setitem
    x[2] = True
    np.testing.assert_array_equal(x.numpy(), np.array([0, -5, 1], np.int8))
    u = gpuarr.asarray(np.zeros(2, np.uint8), device=device)
    with pytest.raises(OverflowError):
        u[0] = -1


def test_value_with_extra_leading_ones_broadcasts(device):
    a = np.zeros((3, 4))
    x = gpuarr.array(a, device=device)
    v = np.arange(4.0).reshape(1, 1, 4)
    a[1:] = v
    x[1:] = gpuarr.asarray(v, device=device)
    np.testing.assert_array_equal(x.numpy(), a)


def test_value_that_does_not_broadcast_raises(device):
    x = gpuarr.asarray(np.zeros((3, 4)), device=device)
    with pytest.raises(ValueError, match="could not broadcast"):
        x[0] = gpuarr.asarray(np.ones(3), device=device)
    with pytest.raises(ValueError, match="could not broadcast"):
        x[[0, 1]] = gpuarr.asarray(np.ones((3, 4)), device=device)


def test_read_only_array_refuses_assignment():
    a = np.zeros(3)
    a.flags.writeable = False
    x = gpuarr.asarray(a)
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        x[[0]] = 1.0


def test_index_and_value_on_another_device_raise(two_gpus):
    g0, g1 = two_gpus
    x = gpuarr.asarray(A, device=g0)
    with pytest.raises(gpuarr.DeviceMismatchError):
        x[gpuarr.asarray([0, 1], device=g1)]
    with pytest.raises(gpuarr.DeviceMismatchError):
        x[gpuarr.asarray(A > 3, device=gpuarr.cpu())]
    with pytest.raises(gpuarr.DeviceMismatchError):
        x[0] = gpuarr.asarray(np.ones((5, 6), np.int64), device=g1)
    c = gpuarr.asarray(A)
    with pytest.raises(gpuarr.DeviceMismatchError):
        c[gpuarr.asarray([0], device=g0)]


def test_numpy_value_beside_a_gpu_array_raises_and_a_numpy_key_is_host_data(gpu_device):
    """A NumPy index array is a key, host data like a list (one counted upload, issue
    31); a NumPy array assigned as the value is data, still refused."""
    x = gpuarr.asarray(A, device=gpu_device)
    np.testing.assert_array_equal(x[np.array([0, 1])].numpy(), A[np.array([0, 1])])
    with pytest.raises(gpuarr.DeviceMismatchError):
        x[0] = np.ones((5, 6), np.int64)


def test_python_list_index_on_a_gpu_is_a_counted_transfer(gpu_device):
    x = gpuarr.asarray(A, device=gpu_device)
    with gpuarr.count_transfers() as t:
        y = x[[0, 2]]
    assert t.h2d_count == 1 and t.d2h_count == 0
    np.testing.assert_array_equal(y.numpy(), A[[0, 2]])


def test_mask_count_is_one_small_read_on_a_gpu(gpu_device):
    x = gpuarr.asarray(A, device=gpu_device)
    m = gpuarr.asarray(A > 60, device=gpu_device)
    with gpuarr.count_transfers() as t:
        y = x[m]
    assert t.d2h_count == 1 and t.d2h_bytes == 8 and t.h2d_count == 0
    np.testing.assert_array_equal(y.numpy(), A[A > 60])


def test_delete_item_is_refused():
    x = gpuarr.asarray(A)
    with pytest.raises(ValueError):
        del x[0]


# --- hypothesis: random basic keys against NumPy ------------------------------------

SHAPE = (5, 4, 3)
BASE = np.arange(60).reshape(SHAPE)
BASE.flags.writeable = False


def _slices(n):
    b = st.one_of(st.none(), st.integers(-n - 3, n + 3))
    return st.builds(slice, b, b, st.one_of(st.none(), st.integers(-4, 4).filter(bool)))


@st.composite
def basic_keys(draw):
    items = []
    axis = 0
    ellipsis = False
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis"]))
        if kind == "int" and axis < len(SHAPE):
            # after an Ellipsis the axis is not known: stay within the smallest one
            n = min(SHAPE)
            items.append(draw(st.integers(-n, n - 1)))
            axis += 1
        elif kind == "slice" and axis < len(SHAPE):
            items.append(draw(_slices(SHAPE[axis])))
            axis += 1
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis" and not ellipsis:
            items.append(Ellipsis)
            ellipsis = True
    return tuple(items)


@settings(max_examples=150, deadline=None)
@given(key=basic_keys())
def test_random_basic_keys_match_numpy(key):
    x = gpuarr.asarray(BASE)
    got = x[key]
    assert got._storage_id == x._storage_id
    np.testing.assert_array_equal(got.numpy(), BASE[key])
    a = BASE.copy()
    y = gpuarr.array(a)
    a[key] = -1
    y[key] = -1
    np.testing.assert_array_equal(y.numpy(), a)


@settings(max_examples=60, deadline=None)
@given(idx=st.lists(st.integers(-5, 4), max_size=6), key=basic_keys())
def test_random_integer_array_after_a_basic_view_matches_numpy(idx, key):
    x = gpuarr.asarray(BASE)
    v, vn = x[key], BASE[key]
    if vn.ndim == 0 or vn.shape[0] == 0:
        return
    idx = [i % vn.shape[0] for i in idx]
    np.testing.assert_array_equal(v[idx].numpy(), vn[idx])


@pytest.mark.parametrize("idx_dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                       "uint32", "uint64"])
def test_index_arrays_of_every_integer_dtype(device, idx_dtype):
    idx = np.array([3, 0, 2], dtype=idx_dtype)
    gidx = gpuarr.asarray(idx, device=device)
    x = gpuarr.asarray(A, device=device)
    np.testing.assert_array_equal(x[gidx].numpy(), A[idx])
    np.testing.assert_array_equal(x[1, gidx, gidx].numpy(), A[1, idx, idx])
    a = A.copy()
    y = gpuarr.array(a, device=device)
    a[:, idx] = 5
    y[:, gidx] = 5
    np.testing.assert_array_equal(y.numpy(), a)


def test_value_of_another_dtype_is_cast_like_numpy(device):
    a = np.zeros((3, 4), np.int32)
    x = gpuarr.array(a, device=device)
    v = np.array([1.7, -2.2, 3.9, 250.0])
    a[1] = v
    x[1] = gpuarr.asarray(v, device=device)
    b = np.array([True, False, True])
    a[[0, 2, 1], 0] = b
    x[[0, 2, 1], 0] = gpuarr.asarray(b, device=device)
    np.testing.assert_array_equal(x.numpy(), a)
    f = gpuarr.array(np.zeros(3, np.float32), device=device)
    f[:] = [1, 2, 3]  # a Python list of ints is made on the device, then cast
    np.testing.assert_array_equal(f.numpy(), np.array([1, 2, 3], np.float32))


def test_list_of_bools_is_a_mask(device):
    x = gpuarr.asarray(A, device=device)
    m = [True, False, False, True]
    np.testing.assert_array_equal(x[m].numpy(), A[m])


def test_indexing_frees_what_it_allocates(device):
    x = gpuarr.array(A, device=device)
    m = gpuarr.asarray(A > 30, device=device)
    before = gpuarr.memory_stats(device)["allocated_bytes"]
    for _ in range(20):
        x[m]
        x[[0, 1], [1, 2], [2, 3]]
        x[m] = 1
        x.T[[1, 2]] = x.T[[2, 1]]
        x[1:, None, ::-1]
    assert gpuarr.memory_stats(device)["allocated_bytes"] == before
