"""The graded exercises in notebooks/exercises: the reference solutions pass, the
transfer-heavy one fails with a readable report, the untouched student files fail."""
import os
import pathlib
import subprocess
import sys

import pytest

EXERCISES = pathlib.Path(__file__).parent.parent / "notebooks" / "exercises"


def grade(which):
    env = dict(os.environ, GPUARR_EXERCISES=which)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(EXERCISES)], capture_output=True, text=True, env=env,
                          cwd=EXERCISES, timeout=300)


def test_reference_solutions_pass():
    r = grade("solutions")
    assert r.returncode == 0, r.stdout + r.stderr


def test_transfer_heavy_solution_fails_with_a_report():
    r = grade("solutions/transfer_heavy")
    assert r.returncode != 0
    out = r.stdout
    assert "test_norm_log_values_and_one_transfer" in out
    assert "device-to-host" in out or "d2h" in out, out


def test_untouched_student_files_fail():
    r = grade(".")
    assert r.returncode != 0 and "NotImplementedError" in r.stdout
