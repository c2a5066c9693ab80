"""Helpers shared by the tests/textbook/test_textbook_*.py files (not a test module)."""
import os
import subprocess
import sys

import numpy as np

import gpuarr

# Subprocesses import the same gpuarr as these tests: installed, or a source tree.
PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))


def on_gpu(x):
    return x.device != gpuarr.cpu()


def check_printed(x, values):
    """print(x) shows the values, and ' @gpu(i)' after them for a device array."""
    text = str(x)
    if on_gpu(x):
        assert text == f"{values} @{x.device!r}", text
    else:
        assert text == values, text


def check_repr(x, fragment):
    """repr(x) is NumPy-like and names the device for a device array."""
    text = repr(x)
    assert text.startswith("array("), text
    assert fragment in text, text
    assert (f"device={x.device!r}" in text) == on_gpu(x), text


def run_python(code, **env):
    e = dict(os.environ, PYTHONPATH=PYDIR)
    for k in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE"):
        e.pop(k, None)
    e.update({k: str(v) for k, v in env.items()})
    r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def bits(a):
    """The raw bytes of an array's values, for bit-for-bit comparisons."""
    a = a.numpy() if isinstance(a, gpuarr.Array) else np.asarray(a)
    return np.ascontiguousarray(a).tobytes()
