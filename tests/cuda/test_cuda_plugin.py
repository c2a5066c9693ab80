"""The CUDA plugin as a separate library: what _core links, what import loads, and how
a machine without a driver is reported. Each check that depends on the environment at
device resolution runs in a fresh interpreter."""
import os
import shutil
import subprocess
import sys

import pytest

import gpuarr

PKG_DIR = os.path.dirname(os.path.abspath(gpuarr._core.__file__))
PLUGIN = os.path.join(PKG_DIR, "libgpuarr_cuda.so")
CUDA_LIBS = ("libcuda.so", "libcudart", "libcublas", "libcublasLt", "libnvrtc",
             "libcusolver", "libcufft")


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True)
    return [line.split("[", 1)[1].rstrip("]") for line in out.stdout.splitlines()
            if "(NEEDED)" in line]


def run_python(code, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUARR_")}
    e["PYTHONPATH"] = os.path.dirname(PKG_DIR) + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


needs_readelf = pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf")
needs_plugin = pytest.mark.skipif(not os.path.exists(PLUGIN),
                                  reason="the CUDA plugin was not built (nvcc not found at "
                                         "install time, or GPUARR_CUDA=OFF)")


@needs_readelf
def test_core_module_has_no_cuda_library_among_its_needed_entries():
    deps = needed(gpuarr._core.__file__)
    assert deps, "readelf found no NEEDED entry at all"
    assert not [d for d in deps if d.startswith(CUDA_LIBS)], deps


@needs_readelf
@needs_plugin
def test_plugin_links_neither_cublas_cufft_nor_a_shared_cudart():
    deps = needed(PLUGIN)
    assert not [d for d in deps if d.startswith(CUDA_LIBS)], deps


@needs_plugin
def test_plugin_exports_only_its_entry_points():
    out = subprocess.run(["nm", "-D", "--defined-only", PLUGIN], capture_output=True,
                         text=True, check=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if line.strip()}
    # the backend table, and the self-test entry points tests/cuda/test_cuda_emulation.py
    # calls (gpuarr_cuda_selftest* in csrc/cuda/CMakeLists.txt's export map)
    assert names == {"gpuarr_cuda_backend", "gpuarr_cuda_selftest",
                     "gpuarr_cuda_selftest_case", "gpuarr_cuda_selftest_long_kernel",
                     "gpuarr_cuda_selftest_pinned", "gpuarr_cuda_selftest_dl_stream",
                     "gpuarr_cuda_selftest_dl_own_stream", "gpuarr_cuda_selftest_dl_sleep",
                     "gpuarr_cuda_selftest_dl_alloc", "gpuarr_cuda_selftest_dl_free",
                     "gpuarr_cuda_selftest_dl_memset", "gpuarr_cuda_selftest_dl_copy",
                     "gpuarr_cuda_selftest_dl_sync", "gpuarr_cuda_selftest_dl_wait",
                     "gpuarr_cuda_selftest_schedule", "gpuarr_cuda_selftest_memcheck",
                     "gpuarr_cuda_selftest_long_one_block",
                     "gpuarr_cuda_selftest_graph"}, names


@needs_plugin
def test_plugin_finds_cublas_beside_gpuarr_through_its_runpath():
    out = subprocess.run(["readelf", "-d", PLUGIN], capture_output=True, text=True).stdout
    runpath = [line for line in out.splitlines() if "RUNPATH" in line or "RPATH" in line]
    assert runpath and "[$ORIGIN/../nvidia/cu13/lib]" in runpath[0], runpath


def test_import_loads_no_cuda_library():
    out = run_python(
        "import gpuarr\n"
        "print(open('/proc/self/maps').read())")
    for lib in ("libgpuarr_cuda", "libcudart", "libcublas", "libcuda.so", "libcusolver",
                "libcufft"):
        assert lib not in out


@needs_plugin
def test_without_a_gpu_num_gpus_is_zero_and_the_reason_is_kept():
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("this machine has an NVIDIA device")
    out = run_python(
        "import gpuarr\n"
        "print(gpuarr.num_gpus())\n"
        "print(gpuarr._core._gpu_mode()[1])\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('plugin loaded' if 'libgpuarr_cuda.so' in maps else 'plugin missing')\n"
        "print('cublas loaded' if 'libcublas' in maps else 'no cublas')\n"
        "print('cusolver loaded' if 'libcusolver' in maps else 'no cusolver')\n"
        "print('cufft loaded' if 'libcufft' in maps else 'no cufft')\n")
    count, reason, plugin, cublas, cusolver, cufft = out.strip().splitlines()
    assert count == "0"
    assert any(w in reason for w in ("no NVIDIA driver", "driver too old", "no CUDA device"))
    assert plugin == "plugin loaded"  # it was asked, and answered without exiting
    assert cublas == "no cublas"  # cuBLAS waits for the first GEMM
    assert cusolver == "no cusolver"  # cuSOLVER for the first factorisation
    assert cufft == "no cufft"  # cuFFT for the first FFT


@needs_plugin
def test_placing_data_on_a_missing_gpu_names_the_reason():
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("this machine has an NVIDIA device")
    out = run_python(
        "import gpuarr, numpy as np\n"
        "try:\n"
        "    gpuarr.asarray(np.ones(3), device=gpuarr.gpu(0))\n"
        "except RuntimeError as e:\n"
        "    print(e)\n")
    assert "gpu(0) does not exist" in out and "NVIDIA driver" in out
