"""CUDA_VISIBLE_DEVICES on the GPUs gpuarr makes itself (simulated and emulated), by
CUDA's rules: the listed GPUs in the list's order, renumbered from 0; an empty value
hides all; the first invalid entry hides itself and the rest; read at import. Each case
runs in a fresh process (the variable is read once), whatever this process's mode."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

import gpuarr

# each test starts its own interpreters (tests/conftest.py: CI runs the file in one stage)
pytestmark = pytest.mark.own_processes

PKG = pathlib.Path(gpuarr.__file__).resolve().parent

_PROBE = """
import json, gpuarr

n = gpuarr.num_gpus()
print(json.dumps({"n": n, "names": [gpuarr._core._device_info(gpuarr.gpu(i))["name"]
                                    for i in range(n)],
                  "reason": gpuarr._core._gpu_mode()[1], "info": gpuarr._info.report()}))
"""


def _kind_env(kind, physical):
    if kind == "emulated":
        if not (PKG / "libgpuarr_cuda_emu.so").exists():
            pytest.skip("the emulated CUDA plugin was not built (-DGPUARR_CUDA_EMU=ON)")
        return {"GPUARR_CUDA_EMULATE": str(physical)}
    return {"GPUARR_SIMULATE_GPUS": str(physical)}


def _probe(kind, visible, physical=3, code=_PROBE, extra=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE",
                        "CUDA_VISIBLE_DEVICES")}
    env.update(_kind_env(kind, physical))
    env.update(extra or {})
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def _numbers(names):
    """The physical number in each device's name ('simulated GPU 2 (...)')."""
    return [int(n.split(" device " if "device" in n else " GPU ")[1].split()[0])
            for n in names]


KINDS = ["simulated", "emulated"]

CASES = [
    (None, [0, 1, 2]),       # unset: all, in order
    ("2,0", [2, 0]),         # the list's order, renumbered from 0
    ("1", [1]),
    ("", []),                # empty: none
    ("0,7,1", [0]),          # 7 does not exist: it and the rest are hidden
    ("1,x,0", [1]),          # not a number
    ("-1", []),              # the usual way to hide every GPU
    ("0,0,1", [0]),          # a number listed twice is invalid
    ("GPU-0123", []),        # a UUID: these GPUs have none
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("visible,shown", CASES, ids=[repr(c[0]) for c in CASES])
def test_visible_devices_follow_cuda_rules(kind, visible, shown):
    r = _probe(kind, visible)
    assert r["n"] == len(shown)
    assert _numbers(r["names"]) == shown


@pytest.mark.parametrize("kind", KINDS)
def test_info_says_which_gpus_the_variable_hid(kind):
    r = _probe(kind, "2,0")
    assert "CUDA_VISIBLE_DEVICES='2,0'" in r["info"]
    assert "hides 1" in r["info"]
    # the old line that said CUDA does it, under GPUs that CUDA does not serve
    assert "CUDA shows only these GPUs" not in r["info"]
    none = _probe(kind, "")
    assert "hides simulated GPUs 0, 1, 2: no GPU" in none["info"].replace("emulated", "simulated")


@pytest.mark.parametrize("kind", KINDS)
def test_variable_is_read_at_import(kind):
    # set after the import but before the first device query: too late, as documented
    code = ("import os, gpuarr; os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n" + _PROBE)
    assert _probe(kind, None, code=code)["n"] == 3
    code = ("import os; os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n" + _PROBE)
    assert _probe(kind, None, code=code)["n"] == 1


def test_simulate_gpus_if_none_follows_the_variable_too():
    code = ("import gpuarr; print(gpuarr.simulate_gpus_if_none(3))\n" + _PROBE)
    env = {k: v for k, v in os.environ.items()
           if k not in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE")}
    env["CUDA_VISIBLE_DEVICES"] = "2,1"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    switched, probe = r.stdout.splitlines()[-2:]
    if switched != "True":
        pytest.skip("this machine has a real GPU: simulate_gpus_if_none changes nothing")
    out = json.loads(probe)
    assert out["n"] == 2 and _numbers(out["names"]) == [2, 1]
