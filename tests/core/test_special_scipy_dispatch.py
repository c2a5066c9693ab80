"""SciPy's own scipy.special functions on gpuarr arrays (SCIPY_ARRAY_API=1): every one
of the 92 in SciPy's array-API table finds gpuarr.special through the array's namespace
and computes on the array's device, with no copy in the transfer ledger, on every
device (scipy_special_dispatch_cases.py runs them in a child process)."""
import json
import os
import subprocess
import sys

import pytest

import gpuarr

pytest.importorskip("scipy", reason="an array API client is not installed "
                                    "(pip install -e '.[test]')")


@pytest.fixture(scope="module")
def outcomes():
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(gpuarr.__file__))] +
        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    r = subprocess.run([sys.executable, os.path.join(here, "scipy_special_dispatch_cases.py")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


def test_every_scipy_array_api_special_function_runs_on_the_device(device, outcomes):
    # SciPy 1.17's table has 92; a later SciPy's new name fails here until
    # gpuarr.special has it
    assert len(outcomes) >= 92, sorted(outcomes)
    wrong = {name: o[repr(device)] for name, o in outcomes.items()
             if o[repr(device)] != "ok"}
    assert not wrong, "\n".join(f"{k}: {v}" for k, v in sorted(wrong.items()))
