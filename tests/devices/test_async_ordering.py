"""The ordering model (docs/DESIGN.md, "Ordering: one model for simulated and CUDA
devices"): work on a device is queued in order and returns at once; host reads,
synchronize() and copies to other devices wait; an error of queued work belongs to its
result (tests/devices/test_failed_results.py has the rules). The rules hold on every
device (the CPU is simply synchronous); the structural checks of the queue itself run
on simulated GPUs, whose worker can be held still (_core._hold_queue) so nothing
depends on timing."""
import random

import numpy as np
import pytest

import gpuarr
from gpuarr import _core

from conftest import held_queue as _held, simulated_gpus, to_numpy


needs_simulated = pytest.mark.skipif(
    not simulated_gpus(), reason="needs simulated GPUs (GPUARR_SIMULATE_GPUS=2)")


def test_device_kind_names_every_device(device):
    kind = gpuarr.device_kind(device)
    if device == gpuarr.cpu():
        assert kind == "cpu"
    else:
        assert kind in ("cuda", "simulated", "emulated")


def test_device_kind_of_a_missing_gpu_raises():
    with pytest.raises(Exception, match="does not exist"):
        gpuarr.device_kind(gpuarr.gpu(gpuarr.num_gpus() + 3))


def test_the_cpu_has_no_queue():
    x = gpuarr.ones(1 << 20)
    (x * 2).exp()
    assert _core._pending_work(gpuarr.cpu()) == 0


@needs_simulated
def test_work_is_queued_and_synchronize_waits_for_it():
    d = gpuarr.gpu(0)
    x = gpuarr.ones(1 << 20, device=d)
    with _held(d):
        y = ((x * 2 + 1).exp() * x).sqrt()
        assert _core._pending_work(d) >= 4  # every operation returned before running
    gpuarr.synchronize(d)
    assert _core._pending_work(d) == 0
    np.testing.assert_allclose(y.numpy(), np.full(1 << 20, np.sqrt(np.exp(3.0))),
                               rtol=1e-6)


@needs_simulated
def test_a_host_read_waits_for_the_work_before_it():
    d = gpuarr.gpu(0)
    x = gpuarr.zeros(1000, device=d)
    with _held(d):
        for _ in range(10):
            x += 1
        assert _core._pending_work(d) >= 10
    assert x.numpy().tolist() == [10.0] * 1000
    assert _core._pending_work(d) == 0


@needs_simulated
def test_two_devices_queue_independently(two_gpus):
    d0, d1 = two_gpus
    a0, a1 = gpuarr.ones(1000, device=d0), gpuarr.ones(1000, device=d1)
    with _held(d0):
        b1 = a1 + 1
        assert float(b1.sum()) == 2000.0  # d1 runs while d0 is held
        b0 = a0 + 2
        assert _core._pending_work(d0) >= 1
    assert float(b0.sum()) == 3000.0


@needs_simulated
def test_a_copy_to_another_device_waits_for_the_source_queue(two_gpus):
    d0, d1 = two_gpus
    x = gpuarr.zeros(1000, device=d0)
    with _held(d0):
        x += 5
    y = x.to(d1)  # ordered after x += 5 on d0
    assert y.numpy().tolist() == [5.0] * 1000


@needs_simulated
def test_a_copy_between_devices_is_queued_on_both_without_a_host_wait(two_gpus):
    # a task on each queue; the copy is made when both workers reach theirs: after the
    # work before it on both devices, before the work after it on either
    d0, d1 = two_gpus
    x = gpuarr.arange(1000, dtype="float32", device=d0)
    w = gpuarr.zeros(1000, device=d1)
    gpuarr.synchronize()
    waits = gpuarr.transfer_stats().syncs
    with _held(d1):
        w += 7                 # queued on d1 before the copy
        y = x.to(d1)           # returns although d1 is held: no host wait
        x += 1                 # d0's later work: must not reach the copy's source first
        z = y * 2              # d1's later work: reads the copy
        assert _core._pending_work(d1) == 4  # the gate, w += 7, the copy's half, z
        assert _core._pending_work(d0) >= 1  # d0's half waits for d1's
    assert gpuarr.transfer_stats().syncs == waits  # the host waited for nothing
    want = np.arange(1000, dtype=np.float32)
    np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(z.numpy(), want * 2)
    np.testing.assert_array_equal(x.numpy(), want + 1)
    assert (w.numpy() == 7).all()


@needs_simulated
def test_copies_between_devices_from_two_threads_in_both_directions_finish(two_gpus):
    # the halves of each pair enter both queues in one global order, so no two workers
    # wait for each other in a cycle however two host threads interleave their copies
    import threading
    d0, d1 = two_gpus
    a = gpuarr.arange(4096, dtype="float64", device=d0)
    b = gpuarr.arange(4096, dtype="float64", device=d1) * -1
    out, errors = {}, []

    def worker(name, src, dst):
        try:
            got = [src.to(dst) for _ in range(200)]
            out[name] = [g.numpy() for g in got[::50]]
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=("ab", a, d1)),
          threading.Thread(target=worker, args=("ba", b, d0))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in ts), errors
    for g in out["ab"]:
        np.testing.assert_array_equal(g, np.arange(4096.0))
    for g in out["ba"]:
        np.testing.assert_array_equal(g, -np.arange(4096.0))


@needs_simulated
def test_memory_of_a_freed_array_is_not_reused_before_queued_readers():
    d = gpuarr.gpu(0)
    x = gpuarr.arange(1 << 16, dtype="float64", device=d)
    with _held(d):
        y = x * 2
        del x  # the block is cached; only later work on d's queue can get it
        z = gpuarr.full(1 << 16, -1.0, device=d)  # may reuse x's block, after y
    np.testing.assert_array_equal(y.numpy(), np.arange(1 << 16) * 2.0)
    assert (z.numpy() == -1.0).all()


@needs_simulated
def test_a_copy_from_the_host_is_queued_behind_the_readers_of_a_reused_block():
    """A copy from the host does not wait for the queue: its source is staged and the
    copy queued, so it writes a block freed by queued work only after that work read
    it. (A copy made at once would hand y the host data; one that waited for the held
    queue would never return.)"""
    d = gpuarr.gpu(0)
    data = np.random.default_rng(0).standard_normal(1 << 16)
    x = gpuarr.arange(1 << 16, dtype="float64", device=d)
    gpuarr.synchronize(d)
    with gpuarr.count_transfers() as t, _held(d):
        y = x * 2
        del x  # the block is cached; the upload below may be handed it
        z = gpuarr.asarray(data, device=d)
        data[:] = 0  # the host's data was only borrowed for the call
        assert _core._pending_work(d) >= 3
    assert (t.h2d_count, t.syncs) == (1, 0)
    np.testing.assert_array_equal(y.numpy(), np.arange(1 << 16) * 2.0)
    np.testing.assert_array_equal(z.numpy(), np.random.default_rng(0).standard_normal(1 << 16))


def test_an_error_in_queued_work_surfaces_at_the_next_synchronizing_call(device):
    x = gpuarr.arange(10, device=device)
    idx = gpuarr.asarray(np.array([1, 99]), device=device)
    with pytest.raises(IndexError, match="out of bounds"):
        y = x[idx]  # the CPU raises here; a queue at the next wait
        gpuarr.synchronize()
        y.numpy()
    # reported once, then the device works again
    gpuarr.synchronize()
    assert (x + 1).numpy().tolist() == list(range(1, 11))


@needs_simulated
def test_an_error_in_queued_work_is_raised_by_its_result_not_by_an_unrelated_read():
    d = gpuarr.gpu(0)
    x = gpuarr.arange(10, device=d)
    idx = gpuarr.asarray(np.array([99]), device=d)
    with _held(d):
        y = x[idx]  # queued: cannot fail yet
    assert x.sum().item() == 45  # waits for the failed gather, and is not its result
    with pytest.raises(IndexError, match=r"index 99 is out of bounds.*x\[index\] queued "
                                         r"at .*test_async_ordering.py"):
        y.numpy()


_OPS = [
    lambda a, b: a + b,
    lambda a, b: a * b / 10,
    lambda a, b: a - b,
    lambda a, b: a + b * 0.5,
]


def _random_program(rng, steps):
    prog = []
    for _ in range(steps):
        kind = rng.choice(["binary", "scalar", "reduce", "inplace", "setitem", "move",
                           "matmul", "view", "free", "to_host", "copy_into"])
        prog.append((kind, rng.randrange(4), rng.randrange(4), rng.random()))
    return prog


def _run(prog, xp, devices):
    """Run the program with `xp` arrays on `devices` (NumPy: devices ignored)."""
    base = np.arange(64.0).reshape(8, 8) / 10
    regs = []
    for i in range(4):
        v = base + i
        regs.append(gpuarr.asarray(v, device=devices[i % len(devices)]) if xp else v)
    outs = []
    for kind, i, j, r in prog:
        a, b = regs[i], regs[j]
        if xp and a.device != b.device:
            b = b.to(a.device)  # a copy between devices, ordered on both queues
        if kind == "binary":
            regs[i] = _OPS[j](a, b)
        elif kind == "scalar":
            regs[i] = (a * a * 0.25 + r) ** 0.5
        elif kind == "reduce":
            s = a.sum(axis=0)
            outs.append(to_numpy(s) if xp else s)
        elif kind == "inplace":
            a += 1.0
            regs[i] = a
        elif kind == "setitem":
            a[j, :] = b[i, :]
            regs[i] = a
        elif kind == "move":
            regs[i] = a.to(devices[j % len(devices)]) if xp else a
        elif kind == "matmul":
            regs[i] = (a @ b) / 10
        elif kind == "view":
            regs[i] = a.T[::-1] * 1.0
        elif kind == "free":
            regs[i] = b - 1.0
            del a  # the last reference to the old register, maybe still read by queued work
        elif kind == "to_host" and xp:  # queued; later reads, writes and moves wait for it
            regs[i] = a.to(gpuarr.cpu(), non_blocking=True)
        elif kind == "copy_into" and xp:  # into a pinned buffer, queued as well
            regs[i] = gpuarr.empty(a.shape, dtype=a.dtype, pin_memory=True)
            a.copyto(regs[i], non_blocking=True)
    return [to_numpy(x) if xp else x for x in regs], outs


@pytest.mark.parametrize("seed", range(20))
def test_random_programs_on_two_devices_match_numpy(seed):
    """Random sequences of queued operations, moves, non-blocking copies to pinned host
    memory and reads spread over every GPU (or the CPU alone), compared with NumPy step
    by step. CI runs them on emulated CUDA under a random schedule of the emulator's
    streams (GPUARR_CUDA_EMULATE_SCHEDULE) too."""
    devices = [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())] or [gpuarr.cpu()]
    rng = random.Random(seed)
    prog = _random_program(rng, 40)
    want_regs, want_outs = _run(prog, False, devices)
    got_regs, got_outs = _run(prog, True, devices)
    for g, w in zip(got_regs + got_outs, want_regs + want_outs):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9)
