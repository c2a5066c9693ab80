"""The CUDA caching allocator (ga_cuda_backend.cu, "caching allocator"): a large request
is cut from the smallest cached large block that fits, freed pieces merge again, and
only wholly free cudaMalloc blocks go back to the driver. memory_stats says what
happened: alloc_calls counts cudaMalloc calls, reserved_bytes what they hold."""
import gc

import numpy as np
import pytest

import gpuarr
from conftest import needs_cuda_devices

pytestmark = needs_cuda_devices

MiB = 1 << 20


@pytest.fixture
def g():
    """gpu(0) with an empty cache: what earlier tests freed is given back, so the
    blocks below come from this test's own allocations."""
    gc.collect()
    dev = gpuarr.gpu(0)
    gpuarr.empty_cache(dev)
    return dev


def stats(g):
    s = gpuarr.memory_stats(g)
    return s["alloc_calls"], s["reserved_bytes"], s["allocated_bytes"]


def cached_block(g, nbytes):
    """Allocate and free `nbytes` on g: one cached block of that size, and the stats
    after (one cudaMalloc more than before)."""
    calls = stats(g)[0]
    x = gpuarr.empty(nbytes, dtype="uint8", device=g)
    del x
    after = stats(g)
    assert after[0] == calls + 1
    return after


def test_smaller_large_request_is_cut_from_a_cached_block(g):
    calls, reserved, allocated = cached_block(g, 64 * MiB)
    x = gpuarr.empty(10 * MiB + 5, dtype="uint8", device=g)
    assert stats(g) == (calls, reserved, allocated + 10 * MiB + 5)
    del x
    assert stats(g) == (calls, reserved, allocated)


def test_freed_pieces_merge_so_the_whole_block_serves_again(g):
    calls, reserved, allocated = cached_block(g, 64 * MiB)
    x = gpuarr.empty(10 * MiB, dtype="uint8", device=g)
    y = gpuarr.empty(20 * MiB, dtype="uint8", device=g)
    del x  # a free piece between the start of the block and y
    z = gpuarr.empty(64 * MiB - 10 * MiB - 20 * MiB, dtype="uint8", device=g)
    del z, y  # y merges with both neighbours
    big = gpuarr.empty(64 * MiB, dtype="uint8", device=g)
    assert stats(g) == (calls, reserved, allocated + 64 * MiB)
    del big


def test_pieces_of_one_block_hold_their_own_data(g):
    calls, reserved, _ = cached_block(g, 64 * MiB)
    a = np.arange(10 * MiB // 4, dtype=np.int32)
    b = -np.arange(20 * MiB // 8, dtype=np.float64)
    c = np.full(3 * MiB, 7, np.uint8)  # a piece of the 34 MiB left
    xs = [gpuarr.asarray(v, device=g) for v in (a, b, c)]
    assert stats(g)[:2] == (calls, reserved)  # all three are pieces of the block
    for x, v in zip(xs, (a, b, c)):
        np.testing.assert_array_equal(x.numpy(), v)
    # writing each piece leaves the others as they were
    xs[1] += 1.0
    xs[0] *= 3
    np.testing.assert_array_equal(xs[0].numpy(), a * 3)
    np.testing.assert_array_equal(xs[1].numpy(), b + 1.0)
    np.testing.assert_array_equal(xs[2].numpy(), c)


def test_empty_cache_keeps_a_block_that_a_piece_still_uses(g):
    calls, reserved, allocated = cached_block(g, 64 * MiB)
    v = np.arange(10 * MiB // 8, dtype=np.float64)
    x = gpuarr.asarray(v, device=g)
    gpuarr.empty_cache(g)
    assert stats(g) == (calls, reserved, allocated + v.nbytes)
    np.testing.assert_array_equal(x.numpy(), v)
    del x
    gpuarr.empty_cache(g)
    assert stats(g) == (calls, reserved - 64 * MiB, allocated)


def test_allocated_and_peak_count_requests_and_reserved_counts_cudamalloc(g):
    calls, reserved, allocated = cached_block(g, 64 * MiB)
    peak = gpuarr.memory_stats(g)["peak_allocated_bytes"]
    sizes = [3 * MiB + 1, 5 * MiB, 1 * MiB + 1, 17 * MiB - 3]
    xs = [gpuarr.empty(n, dtype="uint8", device=g) for n in sizes]
    s = gpuarr.memory_stats(g)
    assert (s["alloc_calls"], s["reserved_bytes"]) == (calls, reserved)
    assert s["allocated_bytes"] == allocated + sum(sizes)
    assert s["peak_allocated_bytes"] == max(peak, allocated + sum(sizes))
    del xs
    assert stats(g) == (calls, reserved, allocated)
