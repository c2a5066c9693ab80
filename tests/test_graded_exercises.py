"""The graded exercises in notebooks/exercises: the reference solutions pass, the
transfer-heavy one fails with a readable report, the untouched student files fail."""
import os
import pathlib
import subprocess
import sys

import gpuarr

EXERCISES = pathlib.Path(__file__).parent.parent / "notebooks" / "exercises"


def grade(which, *args, simulate=None):
    env = dict(os.environ, GPUARR_EXERCISES=which)
    # the graders import the same gpuarr as this test (installed, or a source tree)
    here = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    if simulate is not None:
        env.pop("GPUARR_CUDA_EMULATE", None)
        env["GPUARR_SIMULATE_GPUS"] = str(simulate)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], capture_output=True, text=True, env=env,
                          cwd=EXERCISES, timeout=300)


def test_reference_solutions_pass():
    r = grade("solutions")
    assert r.returncode == 0, r.stdout + r.stderr


def test_reference_solutions_pass_on_two_simulated_gpus():
    r = grade("solutions", simulate=2)
    assert r.returncode == 0, r.stdout + r.stderr


def test_transfer_heavy_solution_fails_with_a_report():
    # On the CPU nothing crosses, so grade it where the copies are real: on GPUs.
    r = grade("solutions/transfer_heavy", "test_ex3_norm_log.py", simulate=2)
    assert r.returncode != 0
    out = r.stdout
    assert "test_norm_log_values_and_one_transfer" in out
    assert "device-to-host" in out or "d2h" in out, out


def test_untouched_student_files_fail():
    r = grade(".")
    assert r.returncode != 0 and "NotImplementedError" in r.stdout
