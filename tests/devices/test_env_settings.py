"""Settings read from the environment are validated (issue 44, item 6): a misspelt
GPUARR_CUDA_EMULATE raises a ValueError saying how to spell it, as a misspelt
GPUARR_SIMULATE_GPUS does, rather than silently giving no GPU; GPUARR_NUM_THREADS and
the numeric GPUARR_CUDA_EMULATE_* test settings warn on stderr and are ignored. Each
case runs in a fresh interpreter, since the settings are read once per process."""
import os
import subprocess
import sys

import pytest

import gpuarr
from conftest import needs_emulated_plugin

# each test starts its own interpreters (tests/conftest.py: CI runs the file in one stage)
pytestmark = pytest.mark.own_processes

SETTINGS = ("GPUARR_CUDA_EMULATE", "GPUARR_SIMULATE_GPUS", "GPUARR_NUM_THREADS",
            "OMP_NUM_THREADS")


def run(code, **env):
    e = {k: v for k, v in os.environ.items()
         if k not in SETTINGS and not k.startswith("GPUARR_CUDA_EMULATE_")}
    # the gpuarr this test runs on (the cross-built packages of tools/ live elsewhere)
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(gpuarr.__file__)),
                                       e.get("PYTHONPATH", "")])
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True,
                          text=True, timeout=120)


COUNT = ("import gpuarr\n"
         "try:\n    print('gpus', gpuarr.num_gpus())\n"
         "except ValueError as e:\n    print('ValueError:', e)\n")


@pytest.mark.parametrize("value", ["abc", "-3", "64", "2x", " "])
def test_a_misspelt_cuda_emulate_is_an_error_not_zero_gpus(value):
    r = run(COUNT, GPUARR_CUDA_EMULATE=value)
    assert r.returncode == 0, r.stderr
    assert f"ValueError: GPUARR_CUDA_EMULATE={value} is not a number of emulated CUDA " \
           "devices between 0 and 16" in r.stdout, r.stdout


@needs_emulated_plugin
def test_a_valid_cuda_emulate_still_works():
    assert "gpus 2" in run(COUNT, GPUARR_CUDA_EMULATE="2").stdout
    assert "gpus 0" in run(COUNT, GPUARR_CUDA_EMULATE="0").stdout


THREADS = "import gpuarr\nfrom gpuarr import _core\nprint('threads', _core._num_threads())\n"


@pytest.mark.parametrize("value", ["0", "-1", "junk", "4x"])
def test_a_bad_num_threads_warns_and_is_ignored(value):
    r = run(THREADS, GPUARR_NUM_THREADS=value)
    assert r.returncode == 0, r.stderr
    assert f"gpuarr: GPUARR_NUM_THREADS={value} is not a thread count from 1 to " \
           "99999; ignored" in r.stderr, r.stderr
    assert r.stdout == run(THREADS).stdout  # the default, as if it were unset


def test_a_good_num_threads_is_used_without_a_word():
    r = run(THREADS, GPUARR_NUM_THREADS="1")
    assert "threads 1" in r.stdout and "gpuarr:" not in r.stderr, (r.stdout, r.stderr)


EMU = ("import gpuarr\nx = gpuarr.ones(4, device=gpuarr.gpu(0))\n"
       "gpuarr.synchronize()\nprint('sum', float(x.sum()))\n")


@pytest.mark.parametrize("name,value", [
    ("GPUARR_CUDA_EMULATE_MEMORY", "lots"),
    ("GPUARR_CUDA_EMULATE_MEMORY", "0"),
    ("GPUARR_CUDA_EMULATE_SPINS", "-5"),
    ("GPUARR_CUDA_EMULATE_WATCHDOG", "soon"),
    ("GPUARR_CUDA_EMULATE_DRIVER", "new"),
    ("GPUARR_CUDA_EMULATE_WAIT_MS", "fast"),
    ("GPUARR_CUDA_EMULATE_DMA_MS", "-1"),
    ("GPUARR_CUDA_EMULATE_DLPACK", "rocm"),
])
@needs_emulated_plugin
def test_a_bad_emulator_setting_warns_and_is_ignored(name, value):
    r = run(EMU, GPUARR_CUDA_EMULATE="1", **{name: value})
    assert r.returncode == 0, r.stderr
    assert "sum 4.0" in r.stdout, (r.stdout, r.stderr)
    assert f"gpuarr: {name}={value} is not" in r.stderr, r.stderr
