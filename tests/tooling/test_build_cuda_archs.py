"""The CUDA architecture plan of the build (cmake/GpuarrCudaArchs.cmake), run with
fake nvcc and nvidia-smi scripts: what a CUDA 12.0, 12.8 or 13 toolkit, a machine with
a GPU, and CUDAARCHS give. Needs only cmake (skipped without it)."""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULE = ROOT / "cmake" / "GpuarrCudaArchs.cmake"

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or not MODULE.exists(),
                                reason="needs cmake and a source checkout")

# compute_XX lists as `nvcc --list-gpu-arch` prints them
CUDA_12_0 = [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90]
CUDA_12_8 = CUDA_12_0 + [100, 101, 120]
CUDA_13_0 = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121]
# a wheel for other machines (a class's): the portable list even without a GPU
PORTABLE = "set(GPUARR_CUDA_PORTABLE ON)"


def plan(tmp_path, archs, gpus=None, env=None, defines=""):
    nvcc = tmp_path / "nvcc"
    nvcc.write_text("#!/bin/sh\n" + "".join(f"echo compute_{a}\n" for a in archs))
    nvcc.chmod(0o755)
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    if gpus is not None:
        smi = bindir / "nvidia-smi"
        smi.write_text("#!/bin/sh\n" + "".join(f"echo {g}\n" for g in gpus))
        smi.chmod(0o755)
    script = tmp_path / "plan.cmake"
    script.write_text(f'cmake_minimum_required(VERSION 3.24)\n{defines}\ninclude("{MODULE}")\n'
                      f'gpuarr_cuda_architectures("{nvcc}" archs from)\n'
                      'message(STATUS "PLAN=${archs}|${from}")\n'
                      'gpuarr_cuda_gencode("${archs}" flag words)\n'
                      'message(STATUS "GENCODE=${flag}|${words}")\n')
    e = {k: v for k, v in os.environ.items() if k != "CUDAARCHS"}
    e["PATH"] = f"{bindir}:/usr/bin:/bin"
    e.update(env or {})
    out = subprocess.run([shutil.which("cmake"), "-P", str(script)], env=e,
                         capture_output=True, text=True, check=True)
    line = [x for x in (out.stdout + out.stderr).splitlines() if "PLAN=" in x][0]
    archs, _, source = line.split("PLAN=", 1)[1].partition("|")
    return archs, source


def gencode(tmp_path, archs):
    """(nvcc option, words) for a CMAKE_CUDA_ARCHITECTURES value."""
    script = tmp_path / "gencode.cmake"
    script.write_text(f'cmake_minimum_required(VERSION 3.24)\ninclude("{MODULE}")\n'
                      f'gpuarr_cuda_gencode("{archs}" flag words)\n'
                      'message(STATUS "GENCODE=${flag}|${words}")\n')
    out = subprocess.run([shutil.which("cmake"), "-P", str(script)], capture_output=True,
                         text=True, check=True)
    line = [x for x in (out.stdout + out.stderr).splitlines() if "GENCODE=" in x][0]
    flag, _, words = line.split("GENCODE=", 1)[1].partition("|")
    return flag, words


def test_no_gpu_visible_builds_ptx_only(tmp_path):
    # a laptop's install: the front end once, no ptxas (issue 43: under 90 s)
    archs, source = plan(tmp_path, CUDA_13_0)
    assert archs == "75-virtual" and "no GPU visible" in source
    assert gencode(tmp_path, archs)[0] == "--generate-code=arch=compute_75,code=[compute_75]"
    assert plan(tmp_path, CUDA_12_0)[0] == "75-virtual"


def test_cuda13_portable_has_sm75_sass_and_ptx_for_the_newest(tmp_path):
    archs, source = plan(tmp_path, CUDA_13_0, defines=PORTABLE)
    assert archs == "75-real;80-real;90-real;100-real;120" and "PORTABLE" in source


def test_cuda12_0_portable_drops_what_it_does_not_know(tmp_path):
    # 12.0 knows no sm_100/sm_120: naming them failed the whole pip install
    assert plan(tmp_path, CUDA_12_0, defines=PORTABLE)[0] == "75-real;80-real;90"


def test_cuda12_8_portable(tmp_path):
    assert (plan(tmp_path, CUDA_12_8, defines=PORTABLE)[0]
            == "75-real;80-real;90-real;100-real;120")


def test_portable_wins_over_no_gpu_but_not_over_a_gpu(tmp_path):
    assert plan(tmp_path, CUDA_13_0, gpus=["9.0"],
                defines=PORTABLE)[0] == "90-real"


def test_gpus_present_are_built_for(tmp_path):
    archs, source = plan(tmp_path, CUDA_13_0, gpus=["8.6", "8.6", "9.0"])
    assert archs == "86-real;90-real" and "nvidia-smi" in source


def test_gpu_unknown_to_nvcc_falls_back_to_the_default(tmp_path):
    assert plan(tmp_path, CUDA_13_0, gpus=["7.0"])[0] == "75-virtual"
    assert plan(tmp_path, CUDA_13_0, gpus=["7.0"], defines=PORTABLE)[0].startswith("75-real;")


def test_cudaarchs_wins(tmp_path):
    archs, source = plan(tmp_path, CUDA_13_0, gpus=["9.0"],
                         env={"CUDAARCHS": "80-real"})
    assert (archs, source) == ("80-real", "CUDAARCHS")


def test_cmake_cuda_architectures_wins(tmp_path):
    archs, source = plan(tmp_path, CUDA_13_0,
                         defines='set(CMAKE_CUDA_ARCHITECTURES "89-real")')
    assert archs == "89-real"


def test_one_front_end_pass_for_every_architecture(tmp_path):
    # cicc runs once, for the lowest architecture; ptxas once per SASS target; the PTX
    # is the lowest architecture's (install time: cmake/GpuarrCudaArchs.cmake)
    flag, words = gencode(tmp_path, "75-real;80-real;90-real;100-real;120")
    assert flag == ("--generate-code=arch=compute_75,"
                    "code=[sm_75,sm_80,sm_90,sm_100,sm_120,compute_75]")
    assert words == "sm_75, sm_80, sm_90, sm_100, sm_120, PTX 75"


def test_gencode_of_ptx_only_and_single_gpu_lists(tmp_path):
    assert gencode(tmp_path, "75-virtual;90-real")[0] == \
        "--generate-code=arch=compute_75,code=[sm_90,compute_75]"
    assert gencode(tmp_path, "86-real")[0] == "--generate-code=arch=compute_86,code=[sm_86]"


def test_names_nvcc_expands_itself_are_left_to_cmake(tmp_path):
    flag, words = gencode(tmp_path, "all-major")
    assert flag == "" and words == "all-major"
