"""gpuarr.cuda's memory functions on every GPU kind, a simulated GPU's memory size and
its OutOfMemoryError, and `python -m gpuarr smi`."""
import gc
import os
import subprocess
import sys

import pytest

import gpuarr
from conftest import simulated_gpus


def _settle(d):
    gc.collect()
    gpuarr.synchronize(d)


def test_memory_allocated_counts_the_arrays(gpu_device):
    _settle(gpu_device)
    before = gpuarr.cuda.memory_allocated(0)
    x = gpuarr.empty(1 << 20, dtype=gpuarr.float32, device=gpu_device)
    assert gpuarr.cuda.memory_allocated(0) - before == 4 << 20
    assert gpuarr.cuda.memory_allocated() == gpuarr.cuda.memory_allocated(gpu_device)
    v = x[10:]  # a view holds no memory of its own
    assert gpuarr.cuda.memory_allocated(0) - before == 4 << 20
    assert gpuarr.cuda.memory_reserved(0) >= gpuarr.cuda.memory_allocated(0)
    del x, v
    _settle(gpu_device)
    assert gpuarr.cuda.memory_allocated(0) == before


def test_peak_and_its_reset(gpu_device):
    _settle(gpu_device)
    gpuarr.cuda.reset_peak_memory_stats(0)
    base = gpuarr.cuda.memory_allocated(0)
    assert gpuarr.cuda.max_memory_allocated(0) == base
    x = gpuarr.empty(1 << 18, dtype=gpuarr.float64, device=gpu_device)
    del x
    _settle(gpu_device)
    assert gpuarr.cuda.max_memory_allocated(0) == base + (2 << 20)
    gpuarr.cuda.reset_peak_memory_stats(0)
    assert gpuarr.cuda.max_memory_allocated(0) == gpuarr.cuda.memory_allocated(0)


def test_mem_get_info_has_a_total(gpu_device):
    free, total = gpuarr.cuda.mem_get_info(0)
    assert total > 0 and 0 <= free <= total
    assert gpuarr.memory_stats(gpu_device)["total_bytes"] == total


def test_memory_functions_refuse_the_cpu():
    with pytest.raises(ValueError, match="is not a GPU"):
        gpuarr.cuda.memory_allocated(gpuarr.cpu())


def test_simulated_gpu_has_16_gib_by_default():
    if not simulated_gpus():
        pytest.skip("needs simulated GPUs (GPUARR_SIMULATE_GPUS=2)")
    if os.environ.get("GPUARR_SIMULATE_GPU_MEMORY") or ":" in os.environ.get(
            "GPUARR_SIMULATE_GPUS", ""):
        pytest.skip("needs simulated GPUs (without a model or a memory size)")
    assert gpuarr.cuda.mem_get_info(0)[1] == 16 << 30
    assert gpuarr._core._device_info(gpuarr.gpu(0))["total_memory"] == 16 << 30


def _run(code, **env):
    e = {k: v for k, v in os.environ.items()
         if k not in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE", "CUDA_VISIBLE_DEVICES",
                      "GPUARR_SIMULATE_GPU_MEMORY")}
    e.update(env)
    r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("env,total", [
    ({"GPUARR_SIMULATE_GPUS": "1:T4"}, 16 << 30),
    ({"GPUARR_SIMULATE_GPUS": "1:A100"}, 40 << 30),
    ({"GPUARR_SIMULATE_GPUS": "1:H100"}, 80 << 30),
    ({"GPUARR_SIMULATE_GPUS": "1", "GPUARR_SIMULATE_GPU_MEMORY": "64MiB"}, 64 << 20),
    ({"GPUARR_SIMULATE_GPUS": "1", "GPUARR_SIMULATE_GPU_MEMORY": "1000000"}, 10**6),
    ({"GPUARR_SIMULATE_GPUS": "1:T4", "GPUARR_SIMULATE_GPU_MEMORY": "2GiB"}, 2 << 30),
])
def test_simulated_memory_size_from_model_or_variable(env, total):
    out = _run("import gpuarr; print(gpuarr.cuda.mem_get_info(0)[1])", **env)
    assert int(out) == total


def test_misspelt_memory_size_is_reported_and_ignored():
    out = _run("import gpuarr; print(gpuarr.cuda.mem_get_info(0)[1]); gpuarr.info()",
               GPUARR_SIMULATE_GPUS="1", GPUARR_SIMULATE_GPU_MEMORY="lots")
    assert out.splitlines()[0] == str(16 << 30)
    assert "GPUARR_SIMULATE_GPU_MEMORY=lots is not a size" in out


def test_simulated_gpu_runs_out_of_memory():
    code = """
import gpuarr
x = gpuarr.empty(6 << 20, dtype=gpuarr.uint8, device=gpuarr.gpu(0))
try:
    gpuarr.empty(6 << 20, dtype=gpuarr.uint8, device=gpuarr.gpu(0))
except gpuarr.OutOfMemoryError as e:
    print("OOM", e)
del x
y = gpuarr.empty(6 << 20, dtype=gpuarr.uint8, device=gpuarr.gpu(0))  # fits again
print("after", gpuarr.cuda.memory_allocated(0))
"""
    out = _run(code, GPUARR_SIMULATE_GPUS="1", GPUARR_SIMULATE_GPU_MEMORY="10MiB")
    assert "OOM gpu(0) is out of memory: it is a simulated GPU" in out
    assert "GPUARR_SIMULATE_GPU_MEMORY" in out
    assert f"after {6 << 20}" in out


def test_smi_prints_a_table_of_the_gpus(gpu_device):
    from gpuarr._smi import table

    x = gpuarr.ones(1000, device=gpu_device)
    text = table()
    assert "Memory used / total" in text
    name = gpuarr._core._device_info(gpu_device)["name"]
    assert name in text
    assert gpuarr.device_kind(gpu_device) in text
    assert f"{os.getpid()}" in text  # this process's arrays
    assert "memory (as nvidia-smi)" in gpuarr._info.report()
    del x


@pytest.mark.parametrize("env", [{"GPUARR_SIMULATE_GPUS": "2"}, {}])
def test_python_m_gpuarr_smi(env):
    e = {k: v for k, v in os.environ.items()
         if k not in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE")}
    e.update(env)
    r = subprocess.run([sys.executable, "-m", "gpuarr", "smi"], env=e, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    if env:
        assert "simulated GPU 1" in r.stdout and "16.0 GiB" in r.stdout
    else:
        assert "GPU" in r.stdout
