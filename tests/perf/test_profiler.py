"""gpuarr.profile() (docs/DESIGN.md, "Profiler"): every operation on each device queue
and every host wait with its cause, on every device kind the process has; the Chrome
trace is valid Trace Event format (required keys, "X" events, sorted times, no two
intervals of one queue overlapping); profiling changes no result and no count."""
import dataclasses
import json
import os
import time

import numpy as np

import pytest

import gpuarr

from conftest import CXX_UNDER_ASAN, cxx_throws_under_asan, held_queue, simulated_gpus, to_numpy

FIELDS = ["device", "queue", "kind", "name", "start_us", "end_us", "modeled_start_us",
          "modeled_end_us"]


def _work(device):
    x = gpuarr.asarray(np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096,
                       device=device)
    y = x @ x
    z = y + 1
    s = float(z.sum())
    gpuarr.synchronize()
    a = z.numpy()
    return s, a


def test_profile_records_operations_and_waits(device):
    x = gpuarr.ones((32, 32), dtype="float32", device=device)
    with gpuarr.profile() as prof:
        y = x @ x
        z = y + 1
        v = float(z[0, 0])
        gpuarr.synchronize(device)
        z.numpy()
    assert v == 33.0
    ev = prof.events
    for e in ev:
        assert [f.name for f in dataclasses.fields(e)][:len(FIELDS)] == FIELDS
        assert e.modeled_start_us is None and e.modeled_end_us is None
        assert e.start_us <= e.end_us
    ops = [e for e in ev if e.kind == "op"]
    assert all(e.queue == "compute" and e.device == device for e in ops)
    names = [e.name for e in ops]
    assert names[:2] == ["matmul", "add"], names
    mm = ops[0]
    assert mm.dtype == "float32" and mm.shape == (1, 32, 32, 32)
    assert mm.bytes == 3 * 32 * 32 * 4
    assert ops[1].shape == (1024,) and ops[1].bytes == 2 * 1024 * 4
    assert [e.start_us for e in ev] == sorted(e.start_us for e in ev)
    if device.type == "gpu":
        waits = [e for e in ev if e.kind == "wait"]
        assert all(e.queue == "host" for e in waits)
        assert [w.name for w in waits] == ["float()", "synchronize()", "numpy()"]
        launches = [e.name for e in ev if e.kind == "launch"]
        assert launches == names
        # the device ran the product after the host began queuing it (a 32 x 32
        # product may end before the host's call returns: that the host goes on
        # while the device works is test_a_simulated_gpu_stamps_the_operations_own_work
        # and the notebooks' big arrays)
        launch = next(e for e in ev if e.kind == "launch" and e.name == "matmul")
        assert launch.start_us <= mm.start_us <= mm.end_us
        # the wait for float() ends after the work before it (exactly where the
        # device stamps with the host's clock: simulated and emulated GPUs)
        assert waits[0].end_us >= ops[1].end_us
    else:
        assert not [e for e in ev if e.queue == "host"]  # the CPU never waits


@pytest.mark.skipif(not simulated_gpus(),
                    reason="needs simulated GPUs (GPUARR_SIMULATE_GPUS=2)")
def test_a_simulated_gpu_stamps_the_operations_own_work():
    # the worker stamps the operation's own tasks (no timing events queued around it:
    # two more tasks each, 3-5 us per operation): the device's interval is when the
    # worker ran it, after the gate opened, not the host's 50 ms beside it
    d = gpuarr.gpu(0)
    x = gpuarr.ones((256,), dtype="float32", device=d)
    gpuarr.synchronize(d)
    with gpuarr.profile() as prof:
        with held_queue(d):
            y = x + 1
            # the gate and the add: nothing queued for the profile
            assert gpuarr._core._pending_work(d) == 2
            time.sleep(0.05)
        gpuarr.synchronize(d)
        x.reshape(16, 16)  # a view queues nothing: no device interval of its own
    assert float(y[0]) == 2.0
    launch = next(e for e in prof.events if e.kind == "launch" and e.name == "add")
    op = next(e for e in prof.events if e.kind == "op" and e.name == "add")
    assert op.start_us >= launch.end_us + 40_000, (launch, op)
    assert op.start_us <= op.end_us < op.start_us + 40_000, op


def _validate_trace(trace):
    assert set(trace) >= {"traceEvents"}
    evs = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in evs if e["ph"] == "M"}
    xs = [e for e in evs if e["ph"] != "M"]
    assert xs, "no intervals"
    for e in xs:
        assert e["ph"] == "X"
        for k in ("name", "ph", "ts", "dur", "pid", "tid", "cat", "args"):
            assert k in e, (k, e)
        assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0
        assert e["tid"] in names
        assert e["args"]["clock"] == "measured"
    ts = [e["ts"] for e in xs]
    assert ts == sorted(ts)
    by_track = {}
    for e in xs:
        by_track.setdefault(e["tid"], []).append(e)
    for tid, track in by_track.items():
        for a, b in zip(track, track[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-6, (names[tid], a, b)
    return names


def test_chrome_trace_is_valid(device, tmp_path):
    with gpuarr.profile() as prof:
        _work(device)
        _work(device)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    names = _validate_trace(json.loads(path.read_text()))
    assert f"{device} compute" in names.values()
    if device.type == "gpu":
        assert "host" in names.values()


def test_trace_validation_catches_overlap():
    """The validator itself fails on an overlapping queue and unsorted times."""
    good = {"traceEvents": [
        {"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "q"}},
        {"name": "a", "cat": "op", "ph": "X", "pid": 0, "tid": 0, "ts": 0.0, "dur": 2.0,
         "args": {"clock": "measured"}},
        {"name": "b", "cat": "op", "ph": "X", "pid": 0, "tid": 0, "ts": 2.0, "dur": 1.0,
         "args": {"clock": "measured"}}]}
    _validate_trace(good)
    bad = json.loads(json.dumps(good))
    bad["traceEvents"][1]["dur"] = 3.0
    with pytest.raises(AssertionError):
        _validate_trace(bad)
    bad = json.loads(json.dumps(good))
    bad["traceEvents"][2]["ts"] = -1.0
    with pytest.raises(AssertionError):
        _validate_trace(bad)


def test_two_devices_have_a_track_each(two_gpus):
    g0, g1 = two_gpus
    a = gpuarr.ones((64, 64), device=g0)
    b = gpuarr.ones((64, 64), device=g1)
    with gpuarr.profile() as prof:
        a @ a
        b @ b
        gpuarr.synchronize()
    names = _validate_trace(prof.chrome_trace())
    assert {f"{g0} compute", f"{g1} compute", "host"} <= set(names.values())


def test_profiling_changes_no_result_and_no_count(device):
    gpuarr.reset_transfer_stats()
    s0, a0 = _work(device)
    plain = gpuarr.transfer_stats()
    gpuarr.reset_transfer_stats()
    with gpuarr.profile() as prof:
        s1, a1 = _work(device)
    profiled = gpuarr.transfer_stats()
    assert s0 == s1
    np.testing.assert_array_equal(a0, a1)
    assert plain == profiled
    assert prof.events


def test_reductions_are_named(device):
    x = gpuarr.ones((8, 16), dtype="float32", device=device)
    with gpuarr.profile() as prof:
        x.sum(axis=1)
    (op,) = [e for e in prof.events if e.kind == "op"]
    assert (op.name, op.dtype, op.shape, op.bytes) == ("sum", "float32", (8, 16),
                                                        8 * 16 * 4 + 8 * 4)


def test_table_and_plot(device):
    x = gpuarr.ones(1000, device=device)
    with gpuarr.profile() as prof:
        for _ in range(3):
            x = x * 2
        float(x[0])
    table = prof.table()
    assert "measured" in table
    row = next(line for line in table.splitlines() if " multiply " in line)
    assert row.split()[-3] == "3"  # count
    if cxx_throws_under_asan():
        pytest.skip(CXX_UNDER_ASAN)  # matplotlib's extension throws
    matplotlib = pytest.importorskip(
        "matplotlib", reason="matplotlib is not installed (prof.plot draws with it)")
    matplotlib.use("Agg")
    fig = prof.plot()
    assert fig.axes and fig.axes[0].get_xlabel() == "time (us, measured)"
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_profiles_do_not_nest_and_stop_on_errors(device):
    with gpuarr.profile():
        with pytest.raises(ValueError, match="already recording"):
            with gpuarr.profile():
                pass
    x = gpuarr.ones(3, device=device)
    with pytest.raises(ZeroDivisionError):
        with gpuarr.profile() as prof:
            x + 1
            1 / 0
    assert [e.name for e in prof.events if e.kind == "op"] == ["add"]
    # off again: nothing is recorded outside a block
    with gpuarr.profile() as empty:
        pass
    assert empty.events == []
    assert to_numpy(gpuarr.ones(2, device=device) + 1).tolist() == [2.0, 2.0]
