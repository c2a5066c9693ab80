"""One overlap rule for every write path: a write whose source shares bytes with its
destination reads the source as it was before the write (NumPy's result), whether the
two are views of one gpuarr array or separate arrays wrapping overlapping NumPy
memory. Random pairs of views (hypothesis) against NumPy's copyto and setitem of a
copy of the source (NumPy's documented meaning)."""
import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

import gpuarr
from conftest import DEVICES

N = 24


def _slice(draw, n):
    start = draw(st.integers(0, n))
    stop = draw(st.integers(0, n))
    step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
    if step < 0:
        start, stop = max(start, stop), min(start, stop)
        stop = None if stop == 0 else stop - 1
    return slice(start, stop, step)


@st.composite
def view_pair(draw):
    """Two keys into a (4, 6) buffer whose views have the same shape (2-D pairs may
    be transposed)."""
    two_d = draw(st.booleans())
    if not two_d:
        a = _slice(draw, N)
        la = len(range(*a.indices(N)))
        b_start = draw(st.integers(0, N - 1))
        step = draw(st.sampled_from([1, -1, 2, -2]))
        idx = [b_start + i * step for i in range(la)]
        if any(i < 0 or i >= N for i in idx) or la == 0:
            return (slice(0, 0), slice(0, 0)), False
        stop = b_start + la * step
        b = slice(b_start, None if stop < 0 else stop, step)
        return (a, b), False
    t = draw(st.booleans())
    return ((slice(None), slice(None)), "T") if t else (
        (slice(None, None, -1), slice(None)), False)


def _views(buf, keys, reshape):
    a_key, b_key = keys
    if reshape == "T":
        m = buf[:N].reshape(4, 6)[:, :4]
        return m, m.T
    if isinstance(a_key, tuple):
        m = buf[:N].reshape(4, 6)
        return m[a_key], m
    return buf[a_key], buf[b_key]


def _write(kind, dst, src):
    if isinstance(dst, np.ndarray):
        # The oracle reads the source before writing. (NumPy 2.4 itself does not copy
        # for some strided 1-D overlaps: r[0:6:2] = r[0:3] gives [0, 1, 1, 3, 1].)
        src = src.copy()
    if kind == "setitem":
        dst[...] = src
    elif kind == "copyto":
        if isinstance(dst, np.ndarray):
            np.copyto(dst, src)
        else:
            src.copyto(dst)
    elif kind == "out":
        if isinstance(dst, np.ndarray):
            np.add(src, 0, out=dst)
        else:
            gpuarr.add(src, 0, out=dst)
    elif kind == "iadd":
        dst += src


KINDS = ["setitem", "copyto", "out", "iadd"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dev", DEVICES, ids=[repr(d) for d in DEVICES])
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(pair=view_pair(), swap=st.booleans())
def test_overlapping_views_of_one_array_write_as_numpy(dev, kind, pair, swap):
    keys, reshape = pair
    ref = np.arange(N, dtype=np.float64)
    buf = gpuarr.asarray(ref.copy(), device=dev)
    rs, rd = _views(ref, keys, reshape)
    gs, gd = _views(buf, keys, reshape)
    if swap:
        rs, rd, gs, gd = rd, rs, gd, gs
    _write(kind, rd, rs)
    _write(kind, gd, gs)
    np.testing.assert_array_equal(buf.numpy(), ref)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(pair=view_pair(), swap=st.booleans())
def test_wrappers_of_overlapping_numpy_memory_write_as_numpy(kind, pair, swap):
    """Two gpuarr arrays that wrap overlapping NumPy views (zero-copy, separate
    storages): the overlap is decided by addresses."""
    keys, reshape = pair
    ref = np.arange(N, dtype=np.float64)
    mem = ref.copy()
    rs, rd = _views(ref, keys, reshape)
    ms, md = _views(mem, keys, reshape)
    if swap:
        rs, rd, ms, md = rd, rs, md, ms
    gs, gd = gpuarr.asarray(ms), gpuarr.asarray(md)
    _write(kind, rd, rs)
    _write(kind, gd, gs)
    np.testing.assert_array_equal(mem, ref)


@pytest.mark.parametrize("dev", DEVICES, ids=[repr(d) for d in DEVICES])
def test_reported_overlapping_copies(dev):
    x = gpuarr.asarray(np.arange(20.0), device=dev)
    x.copyto(x[::-1])
    np.testing.assert_array_equal(x.numpy(), np.arange(20.0)[::-1])
    a = gpuarr.asarray(np.arange(16.0).reshape(4, 4), device=dev)
    a.copyto(a.T)
    np.testing.assert_array_equal(a.numpy(), np.arange(16.0).reshape(4, 4).T)
    n = 1_000_000
    y = gpuarr.asarray(np.arange(n, dtype=np.float64), device=dev)
    y[:-1].copyto(y[1:])
    want = np.arange(n, dtype=np.float64)
    want[1:] = want[:-1].copy()
    np.testing.assert_array_equal(y.numpy(), want)


def test_setitem_between_wrappers_of_one_numpy_buffer():
    n = np.arange(10.0)
    a = gpuarr.asarray(n)
    a[...] = gpuarr.asarray(n[::-1])
    np.testing.assert_array_equal(n, np.arange(10.0)[::-1])


def _scatter_cases():
    """(start, key, value) for x[key(x)] = value(x), each key an int64 index array
    that is a view of x's own memory."""
    first = np.array([1, 2, 0, 3, 4, 5, 6, 7, 8, 9], dtype=np.int64)
    perm = np.random.default_rng(7).permutation(50_000).astype(np.int64)
    return [
        ("scalar", first, lambda x: x[:3], lambda x: 9),
        ("value_too", first, lambda x: x[:3], lambda x: x[3:6]),
        ("reversed", first, lambda x: x[2::-1], lambda x: x[5:2:-1]),
        ("column", first.reshape(5, 2) % 5, lambda x: (x[:, 0], 1), lambda x: 4),
        ("two_keys", first.reshape(5, 2) % 2, lambda x: (x[:, 1], x[:, 0]), lambda x: 7),
        # x[x] = arange: every write moves an index not yet read (the inverse
        # permutation when the indices are read first)
        ("permutation", perm, lambda x: x, _arange_like),
    ]


def _arange_like(x):
    if isinstance(x, np.ndarray):
        return np.arange(x.size)
    return gpuarr.arange(x.size, device=x.device)


@pytest.mark.parametrize("case", _scatter_cases(), ids=lambda c: c[0])
def test_scatter_with_an_index_array_that_views_the_destination(device, case):
    _, start, key, value = case
    ref = start.copy()
    # The rule (NumPy 2.3 and later): index arrays and values are read before anything
    # is written. Copies make the oracle follow it on older NumPy too (2.2, CI's floor,
    # wrote through an index array that views the destination).
    k, v = key(ref), value(ref)
    k = tuple(np.copy(a) for a in k) if isinstance(k, tuple) else np.copy(k)
    ref[k] = np.copy(v)
    x = gpuarr.asarray(start.copy(), device=device)  # the CPU wraps, not copies
    gkey = key(x)
    x[gkey] = value(x)
    np.testing.assert_array_equal(x.numpy(), ref)


def test_scatter_with_an_index_array_wrapping_the_destinations_numpy_memory():
    mem = np.array([1, 2, 0, 3, 4, 5, 6, 7, 8, 9], dtype=np.int64)
    ref = mem.copy()
    ref[ref[:3].copy()] = 9  # indices read before the write (see above)
    x, idx = gpuarr.asarray(mem), gpuarr.asarray(mem[:3])  # separate storages
    x[idx] = 9
    np.testing.assert_array_equal(mem, ref)
