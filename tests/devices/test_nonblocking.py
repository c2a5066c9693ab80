"""Non-blocking copies and pinned host memory (PyTorch's spelling): x.to(d,
non_blocking=True), x.copyto(t, non_blocking=True), gpuarr.empty(..., pin_memory=True),
x.pin_memory(), x.is_pinned() (docs/DESIGN.md, "Non-blocking copies and pinned
memory"). A copy keeps the ordering of every other copy (values read after queued
work); one to the host with non_blocking=True returns before the device has run it
(no wait in the ledger), and every host access to its result waits for it: checked
with a device made slow on purpose (a simulated GPU's held queue, the emulator's slow
DMA engine), where an access that did not wait would read memory the copy has not
written yet."""
import contextlib
import os
import threading
import time

import numpy as np
import pytest

import gpuarr
from gpuarr.testing import assert_array_equal

from conftest import DEVICES


def test_pinned_host_arrays():
    x = gpuarr.empty((4, 3), dtype="float32", pin_memory=True)
    assert x.is_pinned() and x.device == gpuarr.cpu() and x.dtype == gpuarr.float32
    assert x[1:, ::2].is_pinned()  # views share the memory
    y = gpuarr.asarray(np.arange(6.0))
    assert not y.is_pinned() and not gpuarr.empty(3).is_pinned()
    p = y.pin_memory()
    assert p.is_pinned() and p is not y and not y.is_pinned()
    assert p.pin_memory() is p
    assert_array_equal(p, np.arange(6.0), strict=True)


def test_only_host_memory_is_pinned(gpu_device):
    device = gpu_device
    x = gpuarr.ones(3, device=device)
    assert not x.is_pinned()
    with pytest.raises(ValueError, match="arrays on the CPU"):
        x.pin_memory()
    with pytest.raises(ValueError, match="pin_memory=True is for host memory"):
        gpuarr.empty(3, device=device, pin_memory=True)
    with pytest.raises(AttributeError, match="not writable"):
        x._pinned = True  # only the allocator makes pinned memory


@pytest.mark.parametrize("src", DEVICES, ids=repr)
@pytest.mark.parametrize("dst", DEVICES, ids=repr)
def test_a_non_blocking_copy_sees_the_queued_writes_before_it(src, dst):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = gpuarr.asarray(a, device=src)
    if src.type == "cpu":
        x = x.pin_memory()
    for _ in range(5):  # queued writes on the source
        x *= 2
    with gpuarr.count_transfers() as t:
        y = x.to(dst, non_blocking=True)
        z = gpuarr.zeros((3, 4), device=dst)
        x.copyto(z, non_blocking=True)
    x += 1  # a later write on the source does not reach the copies
    assert (y is x) == (src == dst)  # to() its own device: the array itself
    del x
    moved = 2 if src != dst else 0
    assert (t.h2d_count, t.d2h_count, t.d2d_count) == (
        moved * (src.type == "cpu"), moved * (dst.type == "cpu"),
        moved * (src.type != "cpu" != dst.type))
    assert t.syncs == 0  # to the host too: both copies return before they ran
    assert y.is_pinned() == (dst.type == "cpu")  # a pinned source, or a pinned copy
    assert_array_equal(y, a * 32 + (src == dst), strict=True, device=dst)
    assert_array_equal(z, a * 32, strict=True, device=dst)
    assert_array_equal(z.copyto(dst, non_blocking=True), a * 32, device=dst)


def test_non_blocking_is_keyword_only_and_checked():
    x = gpuarr.ones(2)
    with pytest.raises(TypeError):
        x.to(gpuarr.cpu(), True)
    with pytest.raises(TypeError):
        x.copyto(gpuarr.cpu(), True)
    with pytest.raises(TypeError, match="copyto needs a target"):
        x.copyto(None, non_blocking=True)


@contextlib.contextmanager
def _slow(device, seconds=0.3, queue="compute"):
    """The next copy on `device` runs `seconds` later than the host queues it: a
    simulated GPU's queue held and opened by a timer (its compute queue, or with
    queue="copies" the copy queue that runs its non-blocking copies to the host), or
    the emulator's DMA engine slowed (GPUARR_CUDA_EMULATE_DMA_MS, read at each copy).
    A real GPU: skipped."""
    kind = gpuarr.device_kind(device)
    if kind == "simulated":
        # opened by the timer whatever the block does (a copy of over 64 MiB from the
        # host waits for the queue: it would wait for ever for a queue opened after)
        copies = queue == "copies"
        gpuarr._core._hold_queue(device, True, copies)
        timer = threading.Timer(seconds, gpuarr._core._hold_queue, (device, False, copies))
        timer.start()
        yield
    elif kind == "emulated":
        os.environ["GPUARR_CUDA_EMULATE_DMA_MS"] = str(int(seconds * 1000))
        try:
            yield
        finally:
            del os.environ["GPUARR_CUDA_EMULATE_DMA_MS"]
    else:
        pytest.skip("a real GPU's copies cannot be slowed on purpose")


HELD_S = 0.6  # how long _queued_copy holds its copy


def _queued_copy(device, seed):
    """(y, expected): y = x.to(cpu(), non_blocking=True) with the copy still queued."""
    a = np.random.default_rng(seed).standard_normal(1 << 16).astype(np.float32)
    x = gpuarr.asarray(a, device=device)
    gpuarr.synchronize(device)
    with gpuarr.count_transfers() as t:
        with _slow(device, seconds=HELD_S, queue="copies"):
            t0 = time.perf_counter()
            y = x.to(gpuarr.cpu(), non_blocking=True)
            queued_in = time.perf_counter() - t0
    assert (t.d2h_count, t.syncs) == (1, 0), t  # a transfer, and no wait
    # returned before the held copy could run (compared with the hold, not with a
    # budget: a call that waited takes at least HELD_S however idle the machine)
    assert queued_in < HELD_S, f"to(non_blocking=True) took {queued_in:.3f} s"
    assert y.is_pinned() and y.device == gpuarr.cpu()
    return y, a


_ACCESSES = {
    "numpy()": lambda y: y.numpy(),
    "np.asarray (buffer protocol)": lambda y: np.asarray(y).copy(),
    "np.from_dlpack": lambda y: np.from_dlpack(y).copy(),
    "a CPU operation": lambda y: (y + 0).numpy(),
    "a reduction": lambda y: np.float32((y * 1).sum().item()),
    "a copy to a GPU": lambda y: y.to(gpuarr.gpu(0)).numpy(),
    "item()": lambda y: np.float32(y[3].item()),
}


@pytest.mark.parametrize("access", list(_ACCESSES))
def test_every_host_access_waits_for_a_non_blocking_copy(gpu_device, access):
    y, a = _queued_copy(gpu_device, seed=len(access))
    t0 = time.perf_counter()
    with gpuarr.count_transfers() as t:
        got = _ACCESSES[access](y)
    waited = time.perf_counter() - t0
    want = a[3] if access == "item()" else a.sum(dtype=np.float32) \
        if access == "a reduction" else a
    if access == "a reduction":
        np.testing.assert_allclose(got, want, rtol=1e-4)
    else:
        np.testing.assert_array_equal(got, want)
    assert waited > 0.1, f"{access} returned after {waited:.3f} s: it did not wait"
    assert t.syncs >= 1, t  # the wait is a host wait in the ledger


def test_copyto_a_host_array_is_queued_too(gpu_device):
    """copyto(pinned_host_array, non_blocking=True), PyTorch's pinned.copy_(x,
    non_blocking=True): queued into the target when dtype and shape match; a cast
    waits."""
    a = np.random.default_rng(3).standard_normal(1 << 16).astype(np.float32)
    x = gpuarr.asarray(a, device=gpu_device)
    buf = gpuarr.empty(1 << 16, dtype="float32", pin_memory=True)
    gpuarr.synchronize(gpu_device)
    with gpuarr.count_transfers() as t:
        with _slow(gpu_device, queue="copies"):
            assert x.copyto(buf, non_blocking=True) is buf
    assert (t.d2h_count, t.syncs) == (1, 0), t
    t0 = time.perf_counter()
    np.testing.assert_array_equal(buf.numpy(), a)
    assert time.perf_counter() - t0 > 0.1
    f64 = gpuarr.empty(1 << 16, dtype="float64", pin_memory=True)
    with gpuarr.count_transfers() as t:
        x.copyto(f64, non_blocking=True)  # a cast on the host: the copy waits
    assert t.syncs == 1
    np.testing.assert_array_equal(f64.numpy(), a.astype(np.float64))


def test_a_write_into_the_result_waits_for_the_copy(gpu_device):
    y, a = _queued_copy(gpu_device, seed=7)
    y[:4] = gpuarr.asarray(np.full(4, -1, np.float32))  # after the copy, not before
    want = a.copy()
    want[:4] = -1
    np.testing.assert_array_equal(y.numpy(), want)


def test_freeing_either_side_of_a_queued_copy_is_safe(gpu_device):
    a = np.arange(1 << 16, dtype=np.float32)
    x = gpuarr.asarray(a, device=gpu_device)
    with _slow(gpu_device, queue="copies"):
        y = x.to(gpuarr.cpu(), non_blocking=True)
        del x  # the source's block goes back to the device's cache, after the copy
        z = gpuarr.zeros(1 << 16, device=gpu_device)  # may be handed that block
        z += 5
    np.testing.assert_array_equal(y.numpy(), a)
    np.testing.assert_array_equal(z.numpy(), np.full(1 << 16, 5, np.float32))
    with _slow(gpu_device, queue="copies"):
        y = gpuarr.ones(1 << 16, device=gpu_device).to(gpuarr.cpu(), non_blocking=True)
    t0 = time.perf_counter()
    del y  # the host block is freed once the copy has written it, not before
    assert time.perf_counter() - t0 > 0.1


# The copy queue: a non-blocking copy to the host runs on the device's copy queue (a
# simulated GPU's copy worker, a CUDA device's second stream), beside the compute
# queue's later work, which waits for it only where it writes or reuses the source.

def test_the_compute_queue_does_not_wait_for_a_copy_to_the_host(gpu_device):
    """Work queued after x.to(cpu(), non_blocking=True) runs while the copy is still
    queued (with one in-order queue it would wait behind the copy): an event recorded
    after it completes while the copy is held back for a second."""
    a = np.random.default_rng(11).standard_normal(1 << 16).astype(np.float32)
    x = gpuarr.asarray(a, device=gpu_device)
    gpuarr.synchronize(gpu_device)
    with _slow(gpu_device, seconds=1.5, queue="copies"):
        t0 = time.perf_counter()
        y = x.to(gpuarr.cpu(), non_blocking=True)
        z = x * 2 + 1  # the compute queue, after the copy
        done = gpuarr.Event()
        done.record(gpu_device)
        done.synchronize()
        computed_in = time.perf_counter() - t0
    # the copy is held 1.5 s: work that waited for it takes longer than that
    # however idle the machine (a budget of half of it failed on a busy one)
    assert computed_in < 1.5, (
        f"work queued after a copy to the host took {computed_in:.2f} s: it waited for "
        "the copy")
    np.testing.assert_array_equal(y.numpy(), a)  # waits for the held copy
    assert time.perf_counter() - t0 > 1.0
    np.testing.assert_array_equal(z.numpy(), a * 2 + 1)


@pytest.mark.parametrize("write", ["x += 1", "x[:4] = -1", "x.copyto(x2)", "del x"])
def test_the_source_is_not_written_under_a_queued_copy(gpu_device, write):
    """The compute queue writes the copy's source, or hands its block to a new array,
    only after the copy read it: ordered on the device (no host wait)."""
    a = np.arange(1 << 16, dtype=np.float32)
    x = gpuarr.asarray(a, device=gpu_device)
    gpuarr.synchronize(gpu_device)
    with gpuarr.count_transfers() as t:
        with _slow(gpu_device, queue="copies"):
            y = x.to(gpuarr.cpu(), non_blocking=True)
            if write == "x += 1":
                x += 1
            elif write == "x[:4] = -1":
                x[:4] = -1
            elif write == "x.copyto(x2)":
                gpuarr.full(1 << 16, 7.0, dtype="float32", device=gpu_device).copyto(x)
            else:
                del x
                x = gpuarr.full(1 << 16, 7.0, dtype="float32", device=gpu_device)
    assert t.syncs == 0, t  # the write waits on the device, not the host
    np.testing.assert_array_equal(y.numpy(), a)
    want = a + 1 if write == "x += 1" else np.full_like(a, 7) if "x2" in write or \
        write == "del x" else np.where(np.arange(a.size) < 4, -1, a)
    np.testing.assert_array_equal(x.numpy(), want.astype(np.float32))


def test_a_loop_that_copies_each_result_out_does_not_wait(gpu_device):
    """The overlap loop of the book's section: each step's result goes to the host
    without a host wait while the next step computes; the results are read at the
    end, one wait each."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    w = gpuarr.asarray(a, device=gpu_device)
    h = gpuarr.asarray(np.eye(64, dtype=np.float32), device=gpu_device)
    outs, want, hw = [], [], np.eye(64, dtype=np.float32)
    with gpuarr.count_transfers() as t:
        for _ in range(6):
            h = (h @ w) * 0.125  # the previous h is freed: its copy goes first
            outs.append(h.to(gpuarr.cpu(), non_blocking=True))
    assert (t.d2h_count, t.syncs) == (6, 0), t
    for o in outs:
        hw = (hw @ a) * np.float32(0.125)
        np.testing.assert_allclose(o.numpy(), hw, rtol=1e-4, atol=1e-6)


def test_a_pinned_source_is_not_overwritten_under_a_queued_copy(gpu_device):
    """From page-locked memory a GPU copies after the call returned (CUDA, the
    emulator): a host write into the source right after to() must wait for it."""
    src = gpuarr.empty(1 << 16, dtype="float32", pin_memory=True)
    src[...] = gpuarr.arange(1 << 16, dtype="float32")
    with _slow(gpu_device):
        y = src.to(gpu_device, non_blocking=True)
        src[...] = gpuarr.zeros(1 << 16, dtype="float32")  # after the copy read it
    np.testing.assert_array_equal(y.numpy(), np.arange(1 << 16, dtype=np.float32))


def test_non_blocking_copies_from_two_threads(gpu_device):
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(50):
                a = rng.standard_normal(257).astype(np.float32)
                x = gpuarr.asarray(a, device=gpu_device) * 2
                y = x.to(gpuarr.cpu(), non_blocking=True)
                np.testing.assert_array_equal((y + 1).numpy(), a * 2 + 1)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors


def test_the_cpu_alone_makes_a_pinned_copy():
    x = gpuarr.asarray(np.arange(5.0))
    assert x.to(gpuarr.cpu(), non_blocking=True) is x  # its own device: itself
    y = x.copyto(gpuarr.cpu(), non_blocking=True)
    assert y is not x and y.is_pinned()
    assert_array_equal(y, np.arange(5.0), strict=True)
