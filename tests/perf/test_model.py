"""Modeled GPU time (docs/modeled_time.md): simulated GPUs that carry the performance
model of a named GPU give every operation a modeled start and end (a roofline plus
the launch latency; copies at the PCIe rate; host waits move the host's modeled clock
to the device's and add the sync latency). The model's outputs are checked against
the closed forms, the model's bookkeeping against the profiler's and the events', and
profiling against no profiling.

The modeled processes are fresh interpreters (GPUARR_SIMULATE_GPUS=2:H100): the device
list, and its model, are fixed once per process. One script computes every case and
the tests below read its answers, so the file costs about one interpreter start."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuarr
from conftest import CXX_UNDER_ASAN, cxx_throws_under_asan

PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
GIB = 2 ** 30


def run_python(code, **env):
    """Run code in a fresh interpreter with only the given GPU settings."""
    # the folder this process imported gpuarr from: the tree here, site-packages in
    # the platform checks (whose tree has no _core)
    e = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [PKG_PARENT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    for k in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE"):
        e.pop(k, None)
    e.update({k: str(v) for k, v in env.items()})
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True,
                          text=True, timeout=120)


SCRIPT = r'''
import json
import numpy as np
import gpuarr

d0, d1 = gpuarr.gpu(0), gpuarr.gpu(1)
m = gpuarr.device_model(d0)
out = {"model": m.__dict__, "cpu_model": gpuarr.device_model("cpu"),
       "d1_model": gpuarr.device_model(d1).name}

# closed forms, predicted (nothing this large runs here)
out["copy_1gib_ms"] = m.roofline_ms(0, 2 * 2**30, "float32")
out["matmul_8192_ms"] = m.matmul_ms(8192, 8192, 8192, "float32")

def work(x):
    y = x @ x
    z = y + 1
    s = float(z.sum())
    gpuarr.synchronize()
    return s, z.numpy()

x = gpuarr.asarray(np.arange(96 * 96, dtype=np.float32).reshape(96, 96) / 9216,
                   device=d0)
gpuarr.synchronize()

def counted(f):
    before = gpuarr.transfer_stats()
    r = f()
    after = gpuarr.transfer_stats()
    return r, {k: getattr(after, k) - getattr(before, k)
               for k in ("h2d_count", "d2h_count", "d2d_count", "syncs")}

# the same work with and without a profile: results, counts and modeled times
a, b = gpuarr.Event(), gpuarr.Event()
def timed():
    a.record(d0)
    r = work(x)
    b.record(d0)
    b.synchronize()
    return r, a.elapsed_time(b, clock="modeled")
(plain, plain_ms), plain_counts = counted(timed)
with gpuarr.profile() as prof:
    (profd, prof_ms), prof_counts = counted(timed)
out["same_result"] = bool(plain[0] == profd[0] and np.array_equal(plain[1], profd[1]))
out["counts"] = [plain_counts, prof_counts]
out["modeled_ms"] = [plain_ms, prof_ms]
out["measured_ms"] = a.elapsed_time(b)

# records: (kind, name, queue, device, modeled start, modeled end, dtype, shape, bytes)
def recs(p):
    return [(e.kind, e.name, e.queue, str(e.device), e.modeled_start_us,
             e.modeled_end_us, e.dtype, e.shape, e.bytes) for e in p.events]
out["records"] = recs(prof)
out["table"] = prof.table()
out["trace"] = prof.chrome_trace()
# PLOT: the parent's cxx_throws_under_asan (tests/conftest.py) allows matplotlib's C++
# extension; the test that reads xlabel skips where it does not, and without matplotlib
import importlib.util, os
if os.environ["PLOT"] == "1" and importlib.util.find_spec("matplotlib") is not None:
    import matplotlib
    matplotlib.use("Agg")
    out["xlabel"] = prof.plot(clock="modeled").axes[0].get_xlabel()

# a compute-bound matmul, a copy within the device, a copy from the host, a wait
big = gpuarr.ones((256, 256), dtype="float32", device=d0)
v = gpuarr.ones(2**20, dtype="float32", device=d0)
host = np.ones(2**18, dtype=np.float32)
gpuarr.synchronize()
with gpuarr.profile() as prof2:
    mm = big @ big
    c = v.copy()
    gpuarr.synchronize(d0)
    e0 = gpuarr.Event(); e0.record(d0)
    h = gpuarr.asarray(host, device=d0)
    e1 = gpuarr.Event(); e1.record(d0)
out["records2"] = recs(prof2)
out["h2d_ms"] = e0.elapsed_time(e1, clock="modeled")

# two devices side by side: queued without a wait in between
p0 = gpuarr.ones((128, 128), device=d0)
p1 = gpuarr.ones((128, 128), device=d1)
gpuarr.synchronize()
with gpuarr.profile() as prof3:
    q0 = p0 @ p0
    q1 = p1 @ p1
    gpuarr.synchronize()
out["records3"] = recs(prof3)
# two devices keep two modeled clocks
f0, f1 = gpuarr.Event(), gpuarr.Event()
f0.record(d0)
f1.record(d1)
try:
    f0.elapsed_time(f1, clock="modeled")
except ValueError as e:
    out["two_clocks"] = str(e)
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def modeled():
    r = run_python(SCRIPT, GPUARR_SIMULATE_GPUS="2:H100",
                   PLOT=0 if cxx_throws_under_asan() else 1)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _ops(records, name):
    return [r for r in records if r[0] == "op" and r[1] == name]


def test_device_model_names_its_figures(modeled):
    m = modeled["model"]
    assert m["name"] == "H100" and "SXM5" in m["full_name"]
    assert m["memory_bandwidth"] == 3.35e12 and m["matmul_flops_float32"] == 67e12
    assert modeled["cpu_model"] is None and modeled["d1_model"] == "H100"


def test_one_gib_device_copy_takes_bytes_over_bandwidth(modeled):
    # a copy reads and writes each byte: 2 GiB of traffic for 1 GiB copied
    closed = 2 * GIB / modeled["model"]["memory_bandwidth"] * 1e3
    assert abs(modeled["copy_1gib_ms"] - closed) / closed < 0.01


def test_8192_cubed_matmul_takes_2n3_over_peak(modeled):
    n = 8192
    closed = 2 * n ** 3 / modeled["model"]["matmul_flops_float32"] * 1e3
    assert abs(modeled["matmul_8192_ms"] - closed) / closed < 0.01


def test_recorded_operations_follow_the_roofline(modeled):
    m = modeled["model"]
    lat = m["launch_latency"] * 1e6
    recs = modeled["records2"]
    (mm,) = _ops(recs, "matmul")
    # 256^3 float32 is compute bound on the H100 model: 2n^3 / peak + launch
    want = lat + 2 * 256 ** 3 / m["matmul_flops_float32"] * 1e6
    assert mm[5] - mm[4] == pytest.approx(want, rel=1e-9)
    (cp,) = _ops(recs, "copy")
    want = lat + 2 * 4 * 2 ** 20 / m["memory_bandwidth"] * 1e6
    assert cp[5] - cp[4] == pytest.approx(want, rel=1e-9)
    # the copy starts where the product ends: one in-order queue
    assert cp[4] == pytest.approx(mm[5])
    # the host's wait ends at the device's end plus the sync latency
    (wait,) = [r for r in recs if r[0] == "wait"]
    assert wait[5] == pytest.approx(cp[5] + m["sync_latency"] * 1e6)
    # a copy from the host moves at the PCIe rate
    want = lat + 4 * 2 ** 18 / m["link_bandwidth"] * 1e6
    assert modeled["h2d_ms"] * 1e3 == pytest.approx(want, rel=1e-9)


def test_queued_is_not_done_on_the_modeled_clock(modeled):
    recs = modeled["records"]
    launch = next(r for r in recs if r[0] == "launch" and r[1] == "matmul")
    (mm,) = _ops(recs, "matmul")
    assert launch[4] == launch[5] <= mm[4] < mm[5]
    float_wait = next(r for r in recs if r[0] == "wait" and r[1] == "float()")
    last_op_end = max(r[5] for r in recs if r[0] == "op" and r[5] <= float_wait[5])
    assert float_wait[5] > last_op_end  # the host waited for the device


def test_two_devices_run_side_by_side(modeled):
    recs = modeled["records3"]
    (a,) = [r for r in _ops(recs, "matmul") if r[3] == "gpu(0)"]
    (b,) = [r for r in _ops(recs, "matmul") if r[3] == "gpu(1)"]
    assert a[4] < b[5] and b[4] < a[5]  # the intervals overlap
    assert b[4] - a[4] < 1e-3  # both start when the host queued them


def test_events_of_two_devices_have_two_modeled_clocks(modeled):
    assert "different devices (gpu(0) and gpu(1))" in modeled["two_clocks"]


def test_profiling_changes_no_result_no_count_no_modeled_time(modeled):
    assert modeled["same_result"]
    plain, profiled = modeled["counts"]
    assert plain == profiled and plain["d2h_count"] == 2
    a, b = modeled["modeled_ms"]
    assert a == pytest.approx(b, rel=1e-12) and a > 0
    assert modeled["measured_ms"] > 0


def test_every_record_is_modeled_and_labelled(modeled):
    for r in modeled["records"]:
        assert r[4] is not None and r[4] <= r[5], r
    table = modeled["table"]
    head = table.splitlines()[0]
    assert "(measured)" in head and "(modeled H100)" in head


def test_the_plot_labels_its_clock(modeled):
    if cxx_throws_under_asan():
        pytest.skip(CXX_UNDER_ASAN)  # matplotlib's extension throws
    pytest.importorskip("matplotlib",
                        reason="matplotlib is not installed (prof.plot draws with it)")
    assert modeled["xlabel"] == "time (us, modeled H100)"


def test_trace_has_a_modeled_process(modeled):
    evs = modeled["trace"]["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in evs if e["name"] == "process_name"}
    assert procs == {0: "measured", 1: "modeled H100"}
    xs = [e for e in evs if e["ph"] == "X"]
    assert [e["ts"] for e in xs] == sorted(e["ts"] for e in xs)
    tracks = {}
    for e in xs:
        assert e["args"]["clock"] == procs[e["pid"]]
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    for track in tracks.values():
        for a, b in zip(track, track[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-6, (a, b)
    assert {pid for pid, _ in tracks} == {0, 1}


@pytest.mark.parametrize("value, words", [
    ("2:T5", ["unknown GPU model 'T5'", "T4, A100, H100"]),
    ("two", ["GPUARR_SIMULATE_GPUS=two", "2:T4"]),
    ("2:", ["unknown GPU model ''"]),
])
def test_misspelt_variable_is_a_clear_error(value, words):
    code = ("import gpuarr\n"
            "for f in (gpuarr.num_gpus, lambda: gpuarr.ones(2, device='gpu')):\n"
            "    try:\n"
            "        f()\n"
            "    except ValueError as e:\n"
            "        print(e)\n"
            "    else:\n"
            "        print('no error')\n")
    r = run_python(code, GPUARR_SIMULATE_GPUS=value)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2 and "no error" not in lines
    for line in lines:
        for w in words:
            assert w in line, (w, line)


def test_unknown_model_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown GPU model 'V100'.*T4, A100, H100"):
        gpuarr.simulate_gpus_if_none(2, model="V100")
    with pytest.raises(TypeError, match="model must be"):
        gpuarr.simulate_gpus_if_none(2, model=100)


def test_models_and_their_predictions():
    names = [m.name for m in gpuarr.gpu_models()]
    assert names == ["T4", "A100", "H100"]
    t4 = gpuarr.gpu_models()[0]
    # a tiny product is all launch latency; float16 products use the tensor cores
    assert t4.matmul_ms(2, 2, 2) == pytest.approx(t4.launch_latency * 1e3, rel=1e-3)
    n = 4096
    assert t4.matmul_ms(n, n, n, "float16") == pytest.approx(
        t4.launch_latency * 1e3 + 2 * n ** 3 / t4.matmul_flops_float16 * 1e3)
    with pytest.raises(ValueError, match="unknown GPU model"):
        gpuarr.GPUModel(**dict(t4.__dict__, name="X1")).roofline_ms(1, 1)


def test_no_model_without_a_name(device):
    # this process's devices carry none: the CPU never, and the suite's GPUs are
    # simulated without a name, emulated, or real
    if device.type == "cpu" or gpuarr.device_kind(device) != "cuda":
        assert gpuarr.device_model(device) is None
    x = gpuarr.ones(4, device=device)
    with gpuarr.profile() as prof:
        float((x + 1).sum())
    if gpuarr.device_model(device) is None:
        assert all(e.modeled_start_us is None for e in prof.events)
        assert "modeled" not in prof.table()
    np.testing.assert_array_equal(x.numpy(), np.ones(4, np.float32))
