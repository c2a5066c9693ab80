"""Where the CUDA plugin looks for cuBLAS and cuFFT (csrc/cuda/ga_cublas_paths.h), in order: the
header is plain C, compiled here with a small driver (skipped without a C compiler
or a source checkout)."""
import pathlib
import shutil
import subprocess
import sys

import pytest

# each test starts its own interpreters (tests/conftest.py: CI runs the file in one stage)
pytestmark = pytest.mark.own_processes

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADER = ROOT / "csrc" / "cuda" / "ga_cublas_paths.h"
CC = shutil.which("cc") or shutil.which("gcc")


DRIVER = r"""
#include <stdlib.h>
#include "ga_cublas_paths.h"
static const char *arg(const char *s) { return s[0] == '-' ? NULL : s; }
int main(int argc, char **argv) {
    ga_cublas_candidate c[GA_CUBLAS_MAX_CANDIDATES];
    /* argv[6] "cufft": cuFFT's folders; else cuBLAS's */
    int n = argc > 6 ? ga_cuda_lib_candidates(ga_cufft_wheel_dir(atoi(argv[1])), arg(argv[2]),
                                              arg(argv[3]), arg(argv[4]), arg(argv[5]), c)
                     : ga_cublas_candidates(atoi(argv[1]), arg(argv[2]), arg(argv[3]),
                                            arg(argv[4]), arg(argv[5]), c);
    for (int i = 0; i < n; i++) printf("[%s]\n", c[i].dir);
    return 0;
}
"""


@pytest.fixture(scope="module")
def candidates(tmp_path_factory):
    if CC is None or not HEADER.exists():
        pytest.skip("needs a C compiler and a source checkout")
    d = tmp_path_factory.mktemp("cublas_paths")
    (d / "main.c").write_text(DRIVER)
    exe = d / "main"
    subprocess.run([CC, "-std=c11", "-Wall", "-Werror", f"-I{HEADER.parent}",
                    str(d / "main.c"), "-o", str(exe)], check=True)

    def run(major, plugin="-", home="-", path="-", toolkit="-", lib=None):
        args = [str(exe), str(major), plugin, home, path, toolkit] + ([lib] if lib else [])
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        return [line[1:-1] for line in out.splitlines()]
    return run


PLUGIN = "/venv/lib/python3.11/site-packages/gpuarr/libgpuarr_cuda.so"


def test_cuda13_order(candidates):
    assert candidates(13, PLUGIN, "/opt/cuda", "/opt/cudapath", "/tk/lib64") == [
        "/venv/lib/python3.11/site-packages/gpuarr/../nvidia/cu13/lib",  # nvidia-cublas
        "/opt/cuda/lib64", "/opt/cudapath/lib64",
        "",  # LD_LIBRARY_PATH, ldconfig
        "/tk/lib64", "/usr/local/cuda/lib64"]


def test_cuda12_looks_in_the_cu12_wheel(candidates):
    # nvidia-cublas-cu12 installs nvidia/cublas/lib/libcublas.so.12
    assert candidates(12, PLUGIN)[0] == (
        "/venv/lib/python3.11/site-packages/gpuarr/../nvidia/cublas/lib")


def test_cufft_is_looked_for_in_its_own_cu12_wheel_and_in_cu13(candidates):
    # nvidia-cufft-cu12 installs nvidia/cufft/lib/libcufft.so.11; nvidia-cufft (for
    # CUDA 13) nvidia/cu13/lib/libcufft.so.12, beside cuBLAS
    assert candidates(12, PLUGIN, lib="cufft")[0] == (
        "/venv/lib/python3.11/site-packages/gpuarr/../nvidia/cufft/lib")
    assert candidates(13, PLUGIN, "/opt/cuda", "-", "/tk/lib64", lib="cufft") == [
        "/venv/lib/python3.11/site-packages/gpuarr/../nvidia/cu13/lib", "/opt/cuda/lib64",
        "", "/tk/lib64", "/usr/local/cuda/lib64"]


def test_unset_environment_is_skipped(candidates):
    assert candidates(13, PLUGIN, "", "-", "/tk/lib64") == [
        "/venv/lib/python3.11/site-packages/gpuarr/../nvidia/cu13/lib", "", "/tk/lib64",
        "/usr/local/cuda/lib64"]


def test_unknown_plugin_path(candidates):
    assert candidates(12) == ["", "/usr/local/cuda/lib64"]


def test_info_names_the_cublas_that_was_loaded(tmp_path):
    # any shared library will do as a stand-in: info() reads /proc/self/maps
    import _json
    if not getattr(_json, "__file__", None):
        pytest.skip("this Python has no _json shared library to stand in")
    fake = tmp_path / "libcublas.so.13"
    shutil.copy(_json.__file__, fake)
    out = subprocess.run([sys.executable, "-c", f"""if True:
        import ctypes, gpuarr._info as i
        print(i._cublas_text())
        ctypes.CDLL({str(fake)!r})
        print(i._cublas_text())
        """], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].startswith("not loaded"), out
    assert out[1] == f"loaded {fake}", out
