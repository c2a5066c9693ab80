"""An NVIDIA driver older than the plugin's CUDA runtime (the emulator plays one with
GPUARR_CUDA_EMULATE_DRIVER): info() and the first GPU use say which driver is needed
and what to do, instead of silently using no GPU."""
import os
import subprocess
import sys
import textwrap

import pytest

import gpuarr
from conftest import needs_emulated_plugin

PKG_DIR = os.path.dirname(os.path.abspath(gpuarr._core.__file__))

# each test starts its own interpreters (tests/conftest.py: CI runs the file in one stage)
pytestmark = [pytest.mark.own_processes, needs_emulated_plugin]


def run(code, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUARR_")}
    e["PYTHONPATH"] = os.path.dirname(PKG_DIR) + os.pathsep + e.get("PYTHONPATH", "")
    e["GPUARR_CUDA_EMULATE"] = "2"
    e.update(env)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                       capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_old_driver_is_named_with_what_to_do():
    out = run("""
        import gpuarr
        assert gpuarr.num_gpus() == 0
        gpuarr.info()
        try:
            gpuarr.zeros(3, device=gpuarr.gpu(0))
        except RuntimeError as e:
            print("FIRST USE:", e)
        """, GPUARR_CUDA_EMULATE_DRIVER="12040")
    why = [line for line in out.splitlines() if line.startswith("why CUDA")][0]
    first = [line for line in out.splitlines() if line.startswith("FIRST USE:")][0]
    for text in (why, first):
        assert "driver is too old" in text, out
        assert "supports CUDA 12.4" in text, out
        assert "needs driver 580 or newer" in text, out
        assert "Update the NVIDIA driver" in text and "CUDA 12 toolkit" in text, out


def test_new_enough_driver_gives_the_devices():
    out = run("import gpuarr; print(gpuarr.num_gpus())", GPUARR_CUDA_EMULATE_DRIVER="13000")
    assert out.split() == ["2"]

