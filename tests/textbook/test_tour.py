"""python -m gpuarr: the guided tour runs, re-runs itself on simulated GPUs when there is
no GPU, and prints the chapter's key lines."""
import os
import subprocess
import sys

import pytest

# Subprocesses import the same gpuarr as these tests: installed, or a source tree.
import gpuarr

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))


def _run(*args, **env):
    e = dict(os.environ, PYTHONPATH=PYDIR)
    for k in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE"):
        e.pop(k, None)
    e.update(env)
    return subprocess.run([sys.executable, "-m", "gpuarr", *args], env=e,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def tour():
    return _run("--quick", GPUARR_SIMULATE_GPUS="2")


def test_the_tour_finishes_without_failed_steps(tour):
    assert tour.returncode == 0, tour.stdout[-3000:] + tour.stderr
    assert "Tour finished in" in tour.stdout and "failed step" not in tour.stdout


@pytest.mark.parametrize("line", [
    "(cpu(0), gpu(0), gpu(1))",
    "(gpu(0), cpu(0), [gpu(0), gpu(1)])",
    "These GPUs are SIMULATED",
    "DeviceMismatchError:",
    "[ 20.085537 109.1963   445.2395  ] @gpu(0)",
    ".item() each step: 100 reads to the host",
    "one read at the end: 1,",
    "gpu(0)",
    "their times below are CPU times",
    "by the performance model of an NVIDIA T4",
    "(modeled from its datasheet, not measured",
    "n=256  cpu(0) measured",
    "| modeled T4     0.019 ms -> GPU faster",  # 2 * 256**3 / 8.1e12 s + 15 us
])
def test_the_tour_prints_the_key_lines(tour, line):
    assert line in tour.stdout, tour.stdout


def test_the_tour_shows_to_versus_copyto_identity(tour):
    out = tour.stdout
    i = out.index("Z.to(gpuarr.try_gpu(1)) is Z")
    j = out.index("Z.copyto(Z.device) is Z")
    assert out[i:j].split("\n")[1].strip() == "True"
    assert out[j:].split("\n")[1].strip() == "False"


def test_without_a_gpu_the_tour_reruns_itself_with_simulated_gpus():
    r = _run("--quick", CUDA_VISIBLE_DEVICES="")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert r.stdout.startswith("No GPU found; re-running the tour with "
                               "GPUARR_SIMULATE_GPUS=2")
    assert "(cpu(0), gpu(0), gpu(1))" in r.stdout


def test_an_explicit_zero_is_respected_and_the_tour_falls_back_to_the_cpu():
    r = _run("--quick", GPUARR_SIMULATE_GPUS="0")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    assert "No GPU here" in r.stdout and "(cpu(0), cpu(0), [cpu(0)])" in r.stdout


def test_info_subcommand_and_usage():
    r = _run("info", GPUARR_SIMULATE_GPUS="2")
    assert r.returncode == 0 and "gpu(1)" in r.stdout and "simulated" in r.stdout
    r = _run("bogus")
    assert r.returncode == 2 and "usage: python -m gpuarr" in r.stderr
    assert _run("--help").returncode == 0


def test_the_tours_code_defines_what_it_uses_and_the_time_is_real(tour):
    out = tour.stdout
    step6 = out.split("6. Every crossing is counted")[1].split("7. ")[0]
    assert ">>> A = gpuarr.rand(" in step6 and ">>> log = []" in step6
    assert step6.index(">>> A = ") < step6.index("A @ A")
    assert "Tour finished in 0.0 s" not in out
