"""The graded exercises in notebooks/exercises: the reference solutions pass, the
transfer-heavy one and every plausible wrong answer in wrong_answers/ fail with the
message a student must see, the untouched student files fail; without a GPU the
graders run on two simulated GPUs."""
import os
import pathlib
import subprocess
import sys

import pytest

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
    elif gpuarr._core._gpu_mode()[0] in ("none", "simulated"):
        # as a student runs it: no variable (the graders' pytest.ini picks the GPUs)
        env.pop("GPUARR_SIMULATE_GPUS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], capture_output=True, text=True, env=env,
                          cwd=EXERCISES, timeout=300)


def test_reference_solutions_pass():
    r = grade("solutions")
    assert r.returncode == 0, r.stdout + r.stderr


def test_reference_solutions_pass_on_two_simulated_gpus():
    r = grade("solutions", simulate=2)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_solution_of_exercise_4_with_autograd_passes():
    r = grade("solutions/autograd", "test_ex4_trainer.py", simulate=2)
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


# CI runs the suite in three device modes; these start their own simulated GPUs, so
# one run is enough (the CPU-only one, or a machine with a real GPU).
once = pytest.mark.skipif(gpuarr._core._gpu_mode()[0] in ("simulated", "emulated"),
                          reason="graded once, in the suite run without simulated or "
                                 "emulated GPUs (it simulates its own)")


@once
def test_graders_use_two_simulated_gpus_when_there_is_no_gpu():
    if gpuarr._core._gpu_mode()[0] != "none":
        pytest.skip("this machine has a GPU: the graders use it")
    r = grade("solutions", "-v", "test_ex1_placement.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "gpuarr: 2 GPUs (simulated)" in r.stdout
    assert "4 passed" in r.stdout  # cpu(0), gpu(0), gpu(1), and add_on


@once
def test_a_grading_run_without_any_gpu_warns():
    r = grade("solutions", "test_ex1_placement.py", simulate=0)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WARNING: gpuarr found no GPU, so only cpu(0) is tested" in r.stdout
    assert "Run with --gpuarr-simulate-gpus=2" in r.stdout


# (folder, grader file, failing tests, lines the student must see)
WRONG_ANSWERS = [
    ("wrong_device", "test_ex1_placement.py", 1,
     ["the result should live on gpu(1), but it is a float32 array of shape (2, 3) "
      "on cpu(0)"]),
    ("forgotten_device", "test_ex1_placement.py", 2,
     ["2 host->device copies (at most 0 allowed)", "ex1_placement.py:6: 2 host->device copies",
      "return ga.ones((2, 3)).to(device), ga.rand(2, 3).to(device)"]),
    ("host_round_trip", "test_ex3_norm_log.py", 2,
     ["50 device->host copies (at most 1 allowed)", "ex3_norm_log.py:10: 50 device->host copies",
      "log.append(float(ga.linalg.norm(A @ A)))"]),
    ("host_numpy", "test_ex3_norm_log.py", 2,
     ["65536 bytes device->host (at most 200 allowed)",
      "ex3_norm_log.py:6: 65536 bytes device->host", "a = A.numpy()"]),
    ("copyto_for_to", "test_ex4_trainer.py", 3,
     ["prepare_batch copied a batch that already lives on gpu(0): B.to(device) returns B "
      "itself there, copyto(device) always copies"]),
    ("loss_read_each_step", "test_ex4_trainer.py", 2,
     ["20 device->host copies (at most 1 allowed)", "ex4_trainer.py:23: 20 device->host copies",
      "losses.append(float((r * r).mean()))"]),
    # exercise 5 (autograd and an optimizer): on cpu(0) the first and the last pass (no
    # move, no copy), so 2 GPUs x 2 tests fail, or 3 devices x 1 test. Without
    # zero_grad the first two losses match (one gradient so far); trained on the host,
    # only the model's 4 parameters and their 4 gradients cross, at the end
    ("optimizer_before_to", "test_ex5_train.py", 4,
     ["moved to gpu(0) after the optimizer was made",
      "Make the optimizer after moving the model: net.to(device), then "
      "optim.SGD(net.parameters(), ...)"]),
    ("no_zero_grad", "test_ex5_train.py", 3,
     ["the first 2 losses match, then they drift: each step must use the gradient of its "
      "own batch alone (clear the gradients before backward(): optimizer.zero_grad()"]),
    ("loss_item_each_step", "test_ex5_train.py", 2,
     ["12 device->host copies (at most 1 allowed)", "ex5_train.py:19: 12 device->host copies",
      "losses.append(loss.item())"]),
    ("trained_on_host", "test_ex5_train.py", 2,
     ["each batch (X and y) should be moved to gpu(0) and trained on there: 24 "
      "host->device copies of batches were expected, but only 8 copies crossed in all"]),
]


@once
@pytest.mark.parametrize("folder,grader,failures,lines", WRONG_ANSWERS,
                         ids=[w[0] for w in WRONG_ANSWERS])
def test_wrong_answers_fail_with_a_readable_message(folder, grader, failures, lines):
    r = grade(f"wrong_answers/{folder}", grader, simulate=2)
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    assert f"{failures} failed" in out, out
    for line in lines:
        assert line in out, out
    # the message, not the machinery: no source of gpuarr.testing, no array values
    assert "def __exit__" not in out and "[[1., 1., 1.]" not in out, out


def test_every_wrong_answer_is_graded():
    folders = {p.name for p in (EXERCISES / "wrong_answers").iterdir() if p.is_dir()}
    assert folders == {w[0] for w in WRONG_ANSWERS}
