"""The caching allocator: freed blocks are reused, memory_stats says what is held, and
empty_cache gives the cache back. Holds for the host cache (cpu, simulated GPUs) and
the CUDA caching allocator alike."""
import gc

import numpy as np
import pytest

import gpuarr


def _skip_without_a_cache(device):
    """Host-backed devices (cpu, simulated GPUs) have no cache in a build under
    AddressSanitizer, which must see every free; the CUDA allocator always caches."""
    host_backed = device == gpuarr.cpu() or gpuarr._core._gpu_mode()[0] == "simulated"
    if host_backed and gpuarr._core._host_cache_limit() == 0:
        pytest.skip("the host block cache is compiled out (AddressSanitizer build)")


@pytest.mark.parametrize("n", [3, 1000, 1_000_000])
def test_a_freed_block_is_reused_without_a_new_system_allocation(device, n):
    _skip_without_a_cache(device)
    x = gpuarr.ones(n, device=device)
    del x
    before = gpuarr.memory_stats(device)["alloc_calls"]
    for _ in range(5):
        y = gpuarr.ones(n, device=device)
        del y
    assert gpuarr.memory_stats(device)["alloc_calls"] == before


def test_empty_cache_gives_back_what_was_cached(device):
    _skip_without_a_cache(device)
    keep = gpuarr.ones(10, device=device)
    x = gpuarr.ones(300_000, device=device)
    nbytes = x.nbytes
    del x
    cached = gpuarr.memory_stats(device)
    assert cached["reserved_bytes"] >= cached["allocated_bytes"] + nbytes
    gpuarr.empty_cache(device)
    after = gpuarr.memory_stats(device)
    assert after["reserved_bytes"] <= cached["reserved_bytes"] - nbytes
    assert after["reserved_bytes"] >= after["allocated_bytes"] >= keep.nbytes


def test_a_reused_block_holds_the_new_values_not_the_old(device):
    x = gpuarr.full(50_000, 7.0, device=device)
    del x
    np.testing.assert_array_equal(gpuarr.zeros(50_000, device=device).numpy(),
                                  np.zeros(50_000, np.float32))
    y = gpuarr.arange(50_000, device=device)
    np.testing.assert_array_equal(y.numpy(), np.arange(50_000))


def test_many_sizes_keep_allocated_and_reserved_consistent(device):
    # What earlier tests left is settled first, so that none of it is freed while the
    # bytes are counted (344 bytes had gone between `start` and `end` on an emulated
    # GPU): arrays held in a reference cycle (freed by whichever garbage collection
    # comes next: collected now, and none during the count) and blocks whose free
    # waited for queued work (synchronize)
    gc.collect()
    gc.disable()
    try:
        gpuarr.synchronize(device)
        gpuarr.empty_cache(device)
        start = gpuarr.memory_stats(device)
        arrays = [gpuarr.ones(n, device=device)
                  for n in (0, 1, 17, 129, 513, 4097, 70_001)]
        mid = gpuarr.memory_stats(device)
        assert (mid["allocated_bytes"] - start["allocated_bytes"]
                == sum(a.nbytes for a in arrays))
        assert mid["reserved_bytes"] >= mid["allocated_bytes"]
        del arrays
        end = gpuarr.memory_stats(device)
    finally:
        gc.enable()
    assert end["allocated_bytes"] == start["allocated_bytes"]
    gpuarr.empty_cache(device)
    assert gpuarr.memory_stats(device)["reserved_bytes"] <= start["reserved_bytes"]
