"""Copies on CUDA devices (issue "CUDA kernels written for the GPU", item 5): uploads
through the pinned staging buffers, same-device copies by the copy engine,
cudaSetDevice only when the thread's device changes, and an allocation that does not
wait for another thread's download. On emulated devices (the checks that read the
emulator's counters) or a real GPU."""
import ctypes
import os
import threading
import time

import numpy as np
import pytest

import gpuarr
from conftest import needs_cuda_devices
from gpuarr.testing import count_kernels

pytestmark = needs_cuda_devices

STAGE_MIN = 1 << 20    # ga_cuda_backend.cu: uploads from this size are staged
STAGE_CHUNK = 4 << 20  # in chunks of this size through two pinned buffers


def _emu():
    if gpuarr._core._gpu_mode()[0] != "emulated":
        pytest.skip("the real CUDA plugin has no emulator counters")
    lib = ctypes.CDLL(os.path.join(os.path.dirname(gpuarr._core.__file__),
                                   "libgpuarr_cuda_emu.so"))
    lib.gpuarr_cuda_selftest_set_device_calls.restype = ctypes.c_longlong
    lib.gpuarr_cuda_selftest_occupancy_calls.restype = ctypes.c_longlong
    lib.gpuarr_cuda_selftest_dl_own_stream.argtypes = [ctypes.c_int,
                                                       ctypes.POINTER(ctypes.c_uint64)]
    lib.gpuarr_cuda_selftest_dl_sleep.argtypes = [ctypes.c_int, ctypes.c_uint64,
                                                  ctypes.c_uint]
    return lib


@pytest.fixture
def slow_dma(monkeypatch):
    # emulated devices: every pinned-to-device DMA runs 30 ms late, so an upload that
    # refilled a staging buffer before its DMA ran would deliver the wrong chunk
    monkeypatch.setenv("GPUARR_CUDA_EMULATE_DMA_MS", "30")


@pytest.mark.parametrize("nbytes", [STAGE_MIN - 4, STAGE_MIN, 2 * STAGE_CHUNK + 12344,
                                    3 * STAGE_CHUNK])
@pytest.mark.parametrize("busy", [False, True], ids=["idle", "busy"])
def test_uploads_of_every_size_arrive_whole(nbytes, busy, slow_dma):
    g = gpuarr.gpu(0)
    host = np.random.default_rng(nbytes).integers(0, 2**31, nbytes // 4).astype(np.int32)
    if busy:  # a queued computation: the upload takes the runtime's pageable path
        w = gpuarr.ones(1 << 18, device=g)
        for _ in range(3):
            w = w * 1.0001
    x = gpuarr.asarray(host, device=g)
    host_copy = host.copy()
    host[:] = -1  # the upload must not read the source after asarray returned
    np.testing.assert_array_equal(x.numpy(), host_copy)
    y = gpuarr.asarray(host_copy[::-1].copy(), device=g)  # the buffers are reused
    np.testing.assert_array_equal(y.numpy(), host_copy[::-1])
    np.testing.assert_array_equal(x.numpy(), host_copy)


@pytest.mark.parametrize("dtype", ["float32", "complex128", "int8"])
def test_same_device_contiguous_copy_uses_the_copy_engine_and_matches(dtype):
    g = gpuarr.gpu(0)
    a = np.arange(100003).astype(dtype)
    x = gpuarr.asarray(a, device=g)
    with count_kernels(g) as k:
        y = x.copyto(g)
        z = gpuarr.empty_like(x)
        z[...] = x
    assert k.launches == 0, k  # cudaMemcpyAsync, no kernel
    assert k.syncs == 0, k
    np.testing.assert_array_equal(y.numpy(), a)
    np.testing.assert_array_equal(z.numpy(), a)
    # strided, cast or broadcast copies still run the copy kernel
    w = gpuarr.empty((2, 100003), dtype=dtype, device=g)
    with count_kernels(g) as k:
        w[...] = x
        x[::2].copyto(g)
    assert k.launches == 2, k
    np.testing.assert_array_equal(w.numpy(), np.broadcast_to(a, (2, a.size)))


def test_occupancy_is_asked_once_per_kernel_and_device():
    # issue 29 item 6: the occupancy calculator costs microseconds per call, as much as
    # a small operation's whole host time; its answer depends on kernel and device only
    lib = _emu()
    g0 = gpuarr.gpu(0)
    x = gpuarr.ones(1000, device=g0)
    x = x * 3 - 1  # each kernel's first launch may ask
    before = lib.gpuarr_cuda_selftest_occupancy_calls()
    for _ in range(30):
        x = x * 3 - 1
    assert lib.gpuarr_cuda_selftest_occupancy_calls() == before
    want = np.ones(3, x.numpy().dtype)
    for _ in range(31):
        want = want * 3 - 1
    np.testing.assert_array_equal(x.numpy()[:3], want)
    if gpuarr.num_gpus() > 1:  # another device: asked again, once per kernel
        y = gpuarr.ones(1000, device=gpuarr.gpu(1))
        before = lib.gpuarr_cuda_selftest_occupancy_calls()
        for _ in range(20):
            y = y * 3 - 1
        assert lib.gpuarr_cuda_selftest_occupancy_calls() - before <= 2


def test_set_device_only_when_the_threads_device_changes():
    lib = _emu()
    g0 = gpuarr.gpu(0)
    x = gpuarr.ones(1000, device=g0)
    (x + 1).numpy()
    before = lib.gpuarr_cuda_selftest_set_device_calls()
    for _ in range(200):
        x = x + 1
    x.sum().item()
    on_one_device = lib.gpuarr_cuda_selftest_set_device_calls() - before
    assert on_one_device == 0, on_one_device
    if gpuarr.num_gpus() > 1:
        y = gpuarr.ones(1000, device=gpuarr.gpu(1))
        before = lib.gpuarr_cuda_selftest_set_device_calls()
        for _ in range(50):
            x, y = x + 1, y + 1  # alternate: a switch per operation, no more
        switches = lib.gpuarr_cuda_selftest_set_device_calls() - before
        assert 0 < switches <= 100 + 4, switches


def test_allocation_does_not_wait_for_another_threads_download():
    lib = _emu()
    g = gpuarr.gpu(0)
    big = gpuarr.ones(2 * STAGE_MIN, device=g)
    big.numpy()
    stream = ctypes.c_uint64()
    assert lib.gpuarr_cuda_selftest_dl_own_stream(0, ctypes.byref(stream)) == 0
    assert lib.gpuarr_cuda_selftest_dl_sleep(0, stream.value, 4000) == 0  # busy 4 s
    reader = threading.Thread(target=big.numpy)
    reader.start()
    time.sleep(0.3)  # the reader now waits for the device
    blocks = [gpuarr.empty(n, device=g) for n in (10, 5000, 3 * STAGE_MIN)]
    # the allocator's lock is not held across the reader's wait: the blocks came
    # while the reader still waited (not a time budget, which a busy machine failed:
    # this fails only if three allocations took the 3.7 s the device stays busy)
    still_waiting = reader.is_alive()
    reader.join()
    assert all(b.device == g for b in blocks)
    assert still_waiting, "the allocations waited for the reader's download"
