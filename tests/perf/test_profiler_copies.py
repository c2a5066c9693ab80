"""Copies in gpuarr.profile() (docs/DESIGN.md, "Profiler"; issue 44 item 3): every copy
between two devices is an event of kind "copy" with its direction, bytes, source and
destination device, on the queue of the GPU that ran it (the compute queue, or the
copy queue for a non-blocking copy to the host), with the host's side of it (the
launch that queued it, or the wait for a blocking read); the table, the Chrome
trace and the plot show them."""
import json

import numpy as np

import pytest

import gpuarr

from conftest import CXX_UNDER_ASAN, cxx_throws_under_asan
from test_profiler import _validate_trace


def _copies(prof):
    return [e for e in prof.events if e.kind == "copy"]


def test_a_copy_from_the_host_is_an_event_on_the_gpus_compute_queue(gpu_device):
    a = np.arange(1000, dtype=np.float32)
    with gpuarr.profile() as prof:
        x = gpuarr.asarray(a, device=gpu_device)
        gpuarr.synchronize(gpu_device)
    (c,) = _copies(prof)
    assert (c.name, c.queue, c.device) == ("host-to-device", "compute", gpu_device)
    assert (c.src, c.dst, c.bytes) == (gpuarr.cpu(), gpu_device, a.nbytes)
    assert c.start_us <= c.end_us
    (launch,) = [e for e in prof.events if e.kind == "launch"]
    assert (launch.name, launch.queue, launch.bytes) == ("host-to-device", "host",
                                                         a.nbytes)
    np.testing.assert_array_equal(x.numpy(), a)


def test_a_blocking_read_is_a_copy_on_the_device_and_a_wait_on_the_host(gpu_device):
    x = gpuarr.ones((64, 64), dtype="float32", device=gpu_device)
    with gpuarr.profile() as prof:
        y = x @ x
        out = y.numpy()
    assert out[0, 0] == 64.0
    (c,) = _copies(prof)
    assert (c.name, c.queue, c.device) == ("device-to-host", "compute", gpu_device)
    assert (c.src, c.dst, c.bytes) == (gpu_device, gpuarr.cpu(), out.nbytes)
    # the in-order queue copied after the product it reads (the device's times)
    (mm,) = [e for e in prof.events if e.kind == "op" and e.name == "matmul"]
    assert mm.end_us <= c.start_us <= c.end_us
    (wait,) = [e for e in prof.events if e.kind == "wait"]
    assert (wait.name, wait.queue, wait.bytes) == ("numpy()", "host", out.nbytes)
    assert wait.end_us >= c.end_us - 1e-3  # the host's wait ends after the copy


def test_a_non_blocking_read_runs_on_the_copy_queue(gpu_device):
    x = gpuarr.ones(4096, dtype="float32", device=gpu_device)
    with gpuarr.profile() as prof:
        y = x * 3
        h = y.to(gpuarr.cpu(), non_blocking=True)
        z = y + 1  # the compute queue goes on beside the copy
        got = h.numpy()
        gpuarr.synchronize(gpu_device)
    assert got[0] == 3.0 and float(z[0]) == 4.0
    (c,) = [e for e in _copies(prof) if e.queue == "copy"]
    assert (c.name, c.device, c.src, c.dst) == ("device-to-host", gpu_device,
                                                gpu_device, gpuarr.cpu())
    assert c.bytes == 4096 * 4
    mul = next(e for e in prof.events if e.kind == "op" and e.name == "multiply")
    assert mul.end_us <= c.start_us + 1e-3 <= c.end_us + 1e-3
    launch = next(e for e in prof.events if e.kind == "launch"
                  and e.name == "device-to-host")
    assert launch.queue == "host"


@pytest.mark.parametrize("non_blocking", [False, True])
def test_a_copy_between_gpus_is_an_event_on_the_destination(two_gpus, non_blocking):
    g0, g1 = two_gpus
    x = gpuarr.arange(2048, dtype="float64", device=g0)
    with gpuarr.profile() as prof:
        y = x.to(g1, non_blocking=non_blocking)
        s = float(y.sum())
    assert s == float(np.arange(2048).sum())
    (c,) = [e for e in _copies(prof) if e.name == "device-to-device"]
    assert (c.device, c.queue, c.src, c.dst) == (g1, "compute", g0, g1)
    assert c.bytes == 2048 * 8 and c.start_us <= c.end_us
    names = [e.name for e in prof.events if e.device == g1 and e.queue == "compute"]
    assert names.index("device-to-device") < names.index("sum")


def _three_copies(device):
    """A copy in, one out, one out without blocking (on a GPU); on the CPU device
    nothing crosses, and the profile holds no copy."""
    a = gpuarr.asarray(np.ones((32, 32), dtype=np.float32), device=device)
    b = a * 2
    b.numpy()
    h = b.to(gpuarr.cpu(), non_blocking=True)
    h.numpy()
    gpuarr.synchronize()


def test_the_trace_has_a_track_per_queue_and_names_each_copys_devices(device, tmp_path):
    with gpuarr.profile() as prof:
        _three_copies(device)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    names = _validate_trace(trace)  # no two intervals of one track overlap
    copies = [e for e in trace["traceEvents"] if e.get("cat") == "copy"]
    if device.type == "cpu":
        assert not copies and not _copies(prof)
        return
    assert {f"{device} compute", f"{device} copy", "host"} <= set(names.values())
    got = sorted((names[e["tid"]], e["name"], e["args"]["src"], e["args"]["dst"],
                  e["args"]["bytes"]) for e in copies)
    n = 32 * 32 * 4
    assert got == sorted([
        (f"{device} compute", "host-to-device", str(gpuarr.cpu()), str(device), n),
        (f"{device} compute", "device-to-host", str(device), str(gpuarr.cpu()), n),
        (f"{device} copy", "device-to-host", str(device), str(gpuarr.cpu()), n)])


def test_the_table_sums_the_copies_by_direction_and_devices(device):
    with gpuarr.profile() as prof:
        _three_copies(device)
    lines = prof.table().splitlines()
    assert lines[0].split()[3:5] == ["copied", "MB"]
    # (track, kind, name, copied MB, count) of each row: fixed columns of 20, 5 and 22
    rows = [(ln[:20].strip(), ln[21:26].strip(), ln[27:49].strip(), *ln[50:].split()[:2])
            for ln in lines[1:]]
    copies = sorted((track, name, mb, n) for track, kind, name, mb, n in rows
                    if kind == "copy")
    assert all(mb == "-" for _, kind, _, mb, _ in rows if kind != "copy"), lines
    if device.type == "cpu":
        assert not copies  # nothing crossed a device
        return
    cpu, mb = gpuarr.cpu(), f"{32 * 32 * 4 / 1e6:.3f}"
    assert copies == sorted([
        (f"{device} compute", f"h2d {cpu}->{device}"[:22], mb, "1"),
        (f"{device} compute", f"d2h {device}->{cpu}"[:22], mb, "1"),
        (f"{device} copy", f"d2h {device}->{cpu}"[:22], mb, "1")]), lines


def test_the_plot_draws_the_copy_queue_beside_the_compute_queue(device):
    with gpuarr.profile() as prof:
        _three_copies(device)
    if cxx_throws_under_asan():
        pytest.skip(CXX_UNDER_ASAN)  # matplotlib's extension throws
    matplotlib = pytest.importorskip(
        "matplotlib", reason="matplotlib is not installed (prof.plot draws with it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = prof.plot()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    green = [p for p in fig.axes[0].collections
             if tuple(np.round(p.get_facecolor()[0][:3], 3))
             == tuple(np.round(matplotlib.colors.to_rgb("tab:green"), 3))]
    plt.close(fig)
    if device.type == "cpu":
        assert not green
        return
    assert f"{device} copy" in labels and f"{device} compute" in labels
    assert len(green) == 3  # the three copies
