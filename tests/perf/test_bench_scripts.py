"""bench/gpu.py runs end to end: on simulated GPUs with --allow-simulated (labelled as
such) it prints every row of its table, and without a real GPU it says so and exits 0.
Benchmarks are not tests, so nothing here checks a speed; sizes are tiny (--quick)."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

import gpuarr
from conftest import needs_emulated_plugin

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "gpu.py"
# the gpuarr under test (the working tree's, or an installed one)
PKG_ROOT = pathlib.Path(gpuarr.__file__).resolve().parent.parent


def _run(*args, **env):
    e = {k: v for k, v in os.environ.items()
         if k not in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE")}
    e.update(env)
    e["PYTHONPATH"] = os.pathsep.join([str(PKG_ROOT), e.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=e,
                          capture_output=True, text=True, timeout=120)


def test_gpu_bench_prints_every_row_on_a_simulated_gpu():
    r = _run("--allow-simulated", "--quick", GPUARR_SIMULATE_GPUS="1")
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "SIMULATED GPU" in out and "not GPU numbers" in out
    for row in ["device-to-device copy", "add x + y", "multiply x * 2.0", "exp(x)",
                "sum(x)", "max(x)", "argmax(x)", "sum(m, axis=0)", "sum(m, axis=1)",
                "cumulative_sum(x)", "x[idx]", "x[x > 0.5]", "gpuarr float32", "gpuarr float16",
                "sum(s, axis=1)", "cumulative_sum(m, axis=1)", "sort(x)", "argsort(x)",
                "x[seq]", "nonzero(mask)", "uniform float32", "normal float32",
                "add(a, b, out=c), 1 element", "h2d gpuarr.asarray", "d2h x.numpy()",
                "matmul on cpu(0)", "matmul on gpu(0)", "MLP step: nn + autograd + SGD",
                "MLP step: gpuarr.capture", "launches not counted here"]:
        assert row in out, f"row {row!r} missing from:\n{out}"
    for unit in ["GB/s", "TFLOP/s", "k ops/s", "GFLOP/s", "of copy", "steps/s"]:
        assert unit in out
    assert "FAILED" not in out
    # exercise 1: both sizes, CPU and the GPU each
    assert out.count("exercise 1") == 4
    assert "modeled/measured" not in out  # the GPU carries no performance model


def test_gpu_bench_runs_exercise_1_on_every_gpu_with_the_models_ratio():
    r = _run("--allow-simulated", "--quick", GPUARR_SIMULATE_GPUS="2:T4")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "matmul on gpu(1)" in r.stdout
    # with a performance model every gpuarr row on a GPU gets modeled / measured
    rows = [line for line in r.stdout.splitlines() if "matmul on gpu(" in line]
    assert len(rows) == 4 and all("modeled/measured" in line for line in rows), r.stdout
    cpu_rows = [line for line in r.stdout.splitlines() if "matmul on cpu(" in line]
    assert cpu_rows and not any("modeled" in line for line in cpu_rows)


def test_gpu_bench_without_a_real_gpu_says_so_and_exits_0():
    if gpuarr._core._gpu_mode()[0] == "cuda":
        pytest.skip("this machine has a real GPU: the script would measure it")
    r = _run(GPUARR_SIMULATE_GPUS="1")
    assert r.returncode == 0, r.stderr
    assert "No real CUDA GPU" in r.stdout
    assert "GB/s" not in r.stdout


def test_gpu_bench_rejects_a_gpu_that_does_not_exist():
    r = _run("--allow-simulated", "--quick", "--device", "3", GPUARR_SIMULATE_GPUS="1")
    assert r.returncode == 2
    assert "1 GPU" in r.stderr


def test_sim_async_bench_prints_its_seven_rows_on_two_simulated_gpus():
    e = {k: v for k, v in os.environ.items()
         if k not in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE")}
    e["GPUARR_SIMULATE_GPUS"] = "2"
    e["PYTHONPATH"] = os.pathsep.join([str(PKG_ROOT), e.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "sim_async.py"), "--quick"],
                       cwd=ROOT, env=e, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for row in ["queue vs compute", "two devices", ".item() every step", "(simulated)",
                "DataParallel training step", "copies to the host", "copy queue (",
                "profiler cost"]:
        assert row in r.stdout, r.stdout


def _load_bench():
    import importlib.util
    spec = importlib.util.spec_from_file_location("_bench_gpu", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _FakeCupy:
    """Enough of CuPy's surface, on NumPy, for the peer rows' code to run here."""

    def __init__(self):
        import numpy as np

        class _Dev:
            def __init__(self, i):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *a):
                return False

            def synchronize(self):
                pass

        self.cuda = type("cuda", (), {"Device": _Dev})
        for name in ("asarray", "add", "multiply", "exp", "cumsum", "sort", "argsort",
                     "nonzero", "nanmax", "nanmedian"):
            setattr(self, name, getattr(np, name))
        rng = np.random.default_rng(0)
        self.random = type("random", (), {
            "random_sample": staticmethod(lambda size, dtype: rng.random(size, dtype)),
            "standard_normal": staticmethod(
                lambda size, dtype: rng.standard_normal(size, dtype))})


def test_gpu_bench_times_cupy_side_by_side_when_importable(monkeypatch):
    """The peer rows cannot run without a GPU and CuPy; a CuPy stand-in on NumPy runs
    their code (conversion, every row's call, the ratio column) on a simulated GPU."""
    if gpuarr.num_gpus() == 0:
        pytest.skip("needs a GPU (run with --gpuarr-simulate-gpus=N)")
    bench = _load_bench()
    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy())
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails
    t = bench.Table("")
    bench.bench_bandwidth(t, gpuarr.gpu(0), 4096, 1, 0, real_cuda=True)
    ops = [r[1] for r in t.rows]
    for row in bench.bandwidth_rows():
        assert row[1] in ops and f"  cupy: {row[1]}" in ops, ops
    assert any("torch: not installed" in str(r) for r in t.rows)
    assert all("cupy's time" in r[5] for r in t.rows if r[1].startswith("  cupy:")), t.rows
    # the markdown puts CuPy's time beside gpuarr's, with the ratio
    md = t.to_markdown({"device_name": "fake"})
    line = next(ln for ln in md.splitlines() if "| sort(x) |" in ln)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[3] and cells[6] and float(cells[8]) > 0 and cells[7] == "", line


def test_gpu_bench_writes_json_and_markdown_and_keeps_to_its_budget(tmp_path):
    """--json/--markdown: every measured row as a record (bytes/s as a fraction of the
    copy's) and a markdown table; --budget 0 leaves the rows out with a note."""
    import json

    if gpuarr._core._gpu_mode()[0] != "none":
        pytest.skip("checked once, in the suite run without GPUs (it simulates its own)")

    js, md = tmp_path / "b.json", tmp_path / "b.md"
    r = _run("--allow-simulated", "--quick", "--json", str(js), "--markdown", str(md),
             GPUARR_SIMULATE_GPUS="1")
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(js.read_text())
    ops = {(rec["group"], rec["operation"]) for rec in data["records"] if "note" not in rec}
    for row in _load_bench().bandwidth_rows():
        assert (row[0], row[1]) in ops, (row[1], ops)
    assert data["meta"]["mode"] == "simulated" and data["meta"]["copy_GBps"] > 0
    sums = [rec for rec in data["records"] if rec["operation"] == "sum(x)"]
    assert sums[0]["unit"] == "GB/s" and 0 < sums[0]["of_copy"]
    text = md.read_text()
    assert "| gpuarr / cupy |" in text and "| reduction | sum(x) |" in text
    assert text.count("| exercise 1 |") == 4
    r = _run("--allow-simulated", "--quick", "--budget", "0", "--json", str(js),
             GPUARR_SIMULATE_GPUS="1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "skipped: the --budget of 0 s was spent" in r.stdout
    assert "add x + y" not in r.stdout


def test_gpu_bench_times_dlpack_hand_overs_to_the_peers(monkeypatch):
    """The DLPack rows run only with a real GPU and PyTorch/CuPy; stand-ins run their
    code here: a consumer that takes the array, and one that refuses it (a note)."""
    if gpuarr.num_gpus() == 0:
        pytest.skip("needs a GPU (run with --gpuarr-simulate-gpus=N)")
    bench = _load_bench()
    taken = []
    monkeypatch.setitem(sys.modules, "torch", type("torch", (), {
        "from_dlpack": staticmethod(lambda x: taken.append(x))}))
    monkeypatch.setitem(sys.modules, "cupy", type("cupy", (), {
        "from_dlpack": staticmethod(lambda x: 1 / 0)}))
    t = bench.Table("")
    a = gpuarr.ones((1,), device=gpuarr.gpu(0))
    bench._bench_dlpack(t, gpuarr.gpu(0), a, 3, 1)
    assert taken and taken[0] is a
    ops = {r[1]: r for r in t.rows}
    assert "k ops/s" in ops["torch.from_dlpack(x), 1 element"][4]
    assert "ZeroDivisionError" in ops["cupy.from_dlpack(x)"][4]


@needs_emulated_plugin
def test_gpu_bench_counts_the_training_steps_launches_on_emulated_cuda():
    """The training step's rows on emulated CUDA: the plugin's counters give the
    launches of one step (the captured step's one CUDA graph, of as many kernels as the
    uncaptured step launches), and no host wait inside it (the row's text says so)."""
    r = _run("--allow-simulated", "--quick", GPUARR_CUDA_EMULATE="1")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line for line in r.stdout.splitlines() if "MLP step:" in line]
    assert len(rows) == 2, r.stdout
    counts = []
    for line in rows:
        assert ", 0 host waits a step" in line, line
        m = re.search(r"(\d+) launches \((\d+) CUDA graph of (\d+) kernels\)", line)
        assert m, line
        counts.append(tuple(int(g) for g in m.groups()))
    (launches, graphs, _), captured = counts
    assert launches > 10 and graphs == 0, rows
    assert captured == (1, 1, launches), rows


def test_gpu_bench_training_step_peers_say_why_they_are_missing(monkeypatch):
    """On a real GPU without PyTorch or JAX the peers' rows become notes (their timing
    code needs a CUDA GPU; it runs on the first lent one)."""
    if gpuarr.num_gpus() == 0:
        pytest.skip("needs a GPU (run with --gpuarr-simulate-gpus=N)")
    bench = _load_bench()
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "jax", None)
    t = bench.Table("")
    bench.bench_mlp_step(t, gpuarr.gpu(0), 1, 0, real_cuda=True)
    text = "\n".join(str(r) for r in t.rows)
    assert "MLP step: gpuarr.capture" in text
    assert text.count("skipped: ModuleNotFoundError") == 2, text
