"""Timing events (gpuarr.Event, docs/DESIGN.md "Events"): recorded in a device's queue,
stamped by the device's side when it gets there (the CPU at once), ordered as they
were recorded; elapsed_time in milliseconds between two completed events of one
device; gpuarr.synchronize(event) waits for one event. Runs on every device kind the
process has (cpu, simulated, emulated CUDA)."""
import time

import numpy as np
import pytest

import gpuarr
from gpuarr import _core

from conftest import held_queue as _held, simulated_gpus, to_numpy


needs_simulated = pytest.mark.skipif(
    not simulated_gpus(), reason="needs simulated GPUs (GPUARR_SIMULATE_GPUS=2)")


def test_events_are_ordered_as_recorded(device):
    x = gpuarr.ones((128, 128), dtype="float32", device=device)
    evs = [gpuarr.Event() for _ in range(4)]
    evs[0].record(device)
    y = x
    for e in evs[1:]:
        y = y @ x / 128
        e.record(device)
    evs[-1].synchronize()
    assert all(e.query() for e in evs)
    times = [evs[0].elapsed_time(e) for e in evs]
    assert times[0] == 0.0
    assert all(isinstance(t, float) for t in times)
    assert times == sorted(times), times
    assert all(t >= 0.0 for t in times)
    # the reverse pair is the same interval, negative
    assert evs[-1].elapsed_time(evs[0]) == pytest.approx(-times[-1], abs=1e-3)
    np.testing.assert_allclose(to_numpy(y), np.ones((128, 128), np.float32))


def test_elapsed_time_covers_the_work_between(device):
    """A product that takes measurable time lies between its two events."""
    x = gpuarr.ones((384, 384), dtype="float64", device=device)
    start, end = gpuarr.Event(), gpuarr.Event()
    start.record(device)
    t0 = time.perf_counter()
    for _ in range(3):
        x = x @ x / 384
    end.record(device)
    gpuarr.synchronize(end)  # an event is a valid argument
    wall_ms = (time.perf_counter() - t0) * 1e3
    assert end.query()
    ms = start.elapsed_time(end)
    assert 0.0 < ms <= wall_ms * 1.05 + 1.0, (ms, wall_ms)


def test_default_device_and_repr(device):
    e = gpuarr.Event()
    assert e.device is None and "not recorded" in repr(e)
    assert e.query()  # never recorded: nothing to wait for, as in CUDA
    e.synchronize()
    with device:
        e.record()
    assert e.device == device and str(device) in repr(e)
    e.synchronize()


def test_synchronize_on_an_event_counts_one_host_wait(gpu_device):
    x = gpuarr.ones(1000, device=gpu_device)
    e = gpuarr.Event()
    y = x + 1
    e.record(gpu_device)
    gpuarr.reset_transfer_stats()
    gpuarr.synchronize(e)
    assert gpuarr.transfer_stats().syncs == 1
    assert gpuarr.transfer_stats().d2h_count == 0
    assert float(y[0]) == 2.0


def test_cpu_events_take_the_hosts_clock_at_once():
    start, end = gpuarr.Event(), gpuarr.Event()
    start.record("cpu")
    time.sleep(0.03)
    end.record("cpu")
    assert start.elapsed_time(end) >= 29.0


@needs_simulated
def test_simulated_gpu_stamps_events_when_its_worker_reaches_them():
    d = gpuarr.gpu(0)
    start, end = gpuarr.Event(), gpuarr.Event()
    with _held(d):
        start.record(d)
        end.record(d)
        assert not start.query() and not end.query()
        with pytest.raises(ValueError, match="has not completed"):
            start.elapsed_time(end)
        t0 = time.perf_counter()
        time.sleep(0.3)  # host time that the device never sees
        recorded_apart_ms = (time.perf_counter() - t0) * 1e3
    end.synchronize()
    assert start.query() and end.query()
    # both stamped after the gate opened, one task after the other: less than the
    # host's 300 ms between the records (stamped by the host, it would be more; a
    # fixed 25 ms failed on a busy machine)
    assert 0.0 <= start.elapsed_time(end) < recorded_apart_ms


@needs_simulated
def test_an_event_freed_while_pending_is_safe():
    d = gpuarr.gpu(0)
    with _held(d):
        e = gpuarr.Event()
        e.record(d)
        e.record(d)  # the first one's handle is dropped while still queued
        del e
    gpuarr.synchronize(d)


def test_event_errors(device):
    a, b = gpuarr.Event(), gpuarr.Event()
    with pytest.raises(ValueError, match="never recorded"):
        a.elapsed_time(b)
    a.record(device)
    b.record(device)
    b.synchronize()
    with pytest.raises(TypeError, match="gpuarr.Event"):
        a.elapsed_time(1.0)
    with pytest.raises(ValueError, match="'measured' or 'modeled'"):
        a.elapsed_time(b, clock="wall")
    with pytest.raises(ValueError, match="no performance model"):
        a.elapsed_time(b, clock="modeled")
    c = gpuarr.Event(enable_timing=False)
    c.record(device)
    with pytest.raises(ValueError, match="enable_timing=True"):
        a.elapsed_time(c)


def test_events_of_two_devices_cannot_be_compared(gpu_device):
    a, b = gpuarr.Event(), gpuarr.Event()
    a.record("cpu")
    b.record(gpu_device)
    b.synchronize()
    with pytest.raises(ValueError, match="different devices"):
        a.elapsed_time(b)


def test_record_on_a_missing_device_raises():
    e = gpuarr.Event()
    with pytest.raises(Exception, match="gpu\\(7\\)"):
        e.record(gpuarr.gpu(7))
    assert e.device is None
