"""The graded exercises of notebooks/exercises, graded as a student and as a teacher
grade them: the reference solutions and the unusual but correct answers pass, every
wrong answer and cheat in tests/teaching/exercise_answers/wrong_answers fails with the
message a student must see, on every kind of machine (no GPU: the graders simulate
two; one GPU: a second pass on two simulated GPUs; emulated CUDA), and the teacher's
grading run (python -m gpuarr.grade) refuses the cheats before importing them.

One pytest process grades every answer folder at once (--gpuarr-exercises with several
folders), per kind of machine; the checks below read its junit report."""
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import gpuarr
from gpuarr import _grade_check

ROOT = pathlib.Path(__file__).parents[2]  # tests/teaching/ -> the repository
EXERCISES = ROOT / "notebooks" / "exercises"
ANSWERS = pathlib.Path(__file__).parent / "exercise_answers"
CORRECT = ["solutions"] + [f"unusual/{p.name}" for p in sorted((ANSWERS / "unusual").iterdir())]

# folder in wrong_answers -> lines its failures must show (in any of its tests)
WRONG = {
    "wrong_device": ["too little work on gpu(0): 0 elementwise operations (at least 1 expected)",
                     "work done on other devices than gpu(0): 1 operation (at most 0 allowed)"],
    "forgotten_device": ["2 host->device copies (at most 0 allowed)",
                         "ex1_placement.py:6: 2 host->device copies",
                         "return ga.ones((2, 3)).to(device), ga.rand(2, 3).to(device)"],
    "add_on_host": ["too little work on gpu(0): 0 elementwise operations (at least 1 expected)",
                    "(it ran on cpu(0) instead: compute where the data of the exercise lives)"],
    "add_on_numpy": ["too little work on gpu(0): 0 elementwise operations (at least 1 expected)",
                     "(no device did it: was it computed with NumPy on the host"],
    "squared_uniform": ["away from the uniform distribution (Kolmogorov-Smirnov",
                        "ones_and_random should run exactly 2 operations on gpu(0) (a fill "
                        "of ones and one random draw); it ran 2 elementwise operations, 1 "
                        "random fill"],
    "no_file": ["save_params wrote no file at the path it was given",
                "the loaded parameters should be a dict with the names ['bias', 'step', "
                "'weight']; got []"],
    "load_ignores_device": ["the loaded 'weight' should be a gpuarr array on gpu(0); got a "
                            "gpuarr array (float32, shape (4, 3)) on cpu(0)"],
    "host_round_trip": ["50 device->host copies (at most 1 allowed)",
                        "ex3_norm_log.py:10: 50 device->host copies",
                        "log.append(float(ga.linalg.norm(A @ A)))"],
    "host_numpy": ["too little work on gpu(0): 0 matrix products (at least 50 expected)"],
    "transfer_heavy": ["50 device->host copies (at most 1 allowed)",
                       "ex3_norm_log.py:9: 50 device->host copies"],
    "norm_once": ["too little work on gpu(0): 1 matrix product (at least 50 expected)"],
    "log_left_on_device": ["the log should be a NumPy array (numpy.ndarray); got a gpuarr "
                           "array (float32, shape (50,)) on gpu(0)"],
    "private_host": ["too little work on gpu(0): 0 matrix products"],
    "private_uncounted": ["too little work on gpu(0): 0 matrix products"],
    "data_ptr_ctypes": ["too little work on gpu(0): 0 matrix products"],
    "patch_testing": ["the graded code changed what grades it: gpuarr.testing.count_transfers"],
    "patch_numpy": ["the graded code changed what grades it: numpy.testing.assert_allclose"],
    "inspect_stack": ["the graded code changed what grades it: test_ex3_norm_log.assert_transfers, "
                      "test_ex3_norm_log.assert_work"],
    "precomputed": ["Not equal to tolerance", "inputs drawn with seed"],
    "copyto_for_to": ["prepare_batch copied a batch that already lives on gpu(0): B.to(device) "
                      "returns B itself there, copyto(device) always copies"],
    "loss_read_each_step": ["20 device->host copies (at most 1 allowed)",
                            "ex4_trainer.py:23: 20 device->host copies",
                            "losses.append(float((r * r).mean()))"],
    "numpy_on_host": ["too little work on gpu(0): 0 matrix products (at least 40 expected)"],
    "decoy_numpy_training": ["20 device->host copies (at most 1 allowed)",
                             "ex4_trainer.py:23: 20 device->host copies",
                             "B = batch if isinstance(batch, np.ndarray) else batch.numpy()"],
    "model_copied_each_step": ["fit copied the parameters within gpu(0) 20 times: move the "
                               "model once, before the loop (prepare_model)"],
    "params_float64": ["the trained w should have dtype float32; got a gpuarr array (float64"],
    "model_left_on_host": ["matmul: the operands live on different devices",
                           "In this exercise the work belongs on gpu(0), the device it gives: "
                           "move each array that lives elsewhere there, with x.to(gpu(0))"],
    "wait_each_device": ["the host waited for a device before all the work was queued: 4 "
                         "operations were queued after the first wait, at ex5_two_gpus.py:10"],
    "wait_each_product": ["waits for a device (at most"],
    "warmup_products": ["powers_on_two_devices should run exactly 4 matrix products on "
                        "gpu(0) (4 steps: P = P @ A, 4 times); it ran 5"],
    "no_final_wait": ["powers_on_two_devices returned without waiting for the devices (0 waits"],
    # exercise 6 (autograd and an optimizer)
    "optimizer_before_to": ["moved to gpu(0) after the optimizer was made",
                            "Make the optimizer after moving the model: net.to(device), then "
                            "optim.SGD(net.parameters(), ...)"],
    "no_zero_grad": ["the first 2 losses match, then they drift: each step must use the "
                     "gradient of its own batch alone (clear the gradients before backward(): "
                     "optimizer.zero_grad()"],
    "loss_item_each_step": ["12 device->host copies (at most 1 allowed)",
                            "ex6_train.py:19: 12 device->host copies",
                            "losses.append(loss.item())"],
    # exercise 7 (allreduce)
    "allreduce_on_host": ["4 device->host copies (at most 0 allowed)",
                          "ex7_allreduce.py:6: 4 device->host copies, 4 waits for a device",
                          "total = sum(g.numpy() for g in grads)"],
    "allreduce_new_arrays": ["should hold the sum of all, in place: change the arrays "
                             "themselves (g[...] = ..., g += ..., copyto), not the list"],
    # exercise 8 (a training step split over two devices)
    "step_on_one_device": ["too little work on gpu(1): 0 matrix products (at least 1 expected)"],
    "dummy_product_on_second": ["gpu(0) should multiply its half of the batch, 6 of the 11 "
                                "rows (the first 6 on the first device, the rest on the "
                                "second); its matrix products had row counts [11]"],
    "uneven_split": ["should multiply its half of the batch, 6 of the 11 rows"],
    "gradients_through_host": ["4 device->host copies (at most 0 allowed)",
                               "ex8_split_step.py:11: 2 device->host copies"],
    # exercise 9 (a copy to the host that overlaps the next step)
    "log_copied_each_step": ["20 waits for a device (at most 0 allowed)",
                             "ex9_overlap_copy.py:10: 20 waits for a device",
                             "logs.append(value.to(ga.cpu()))"],
    "log_printed_each_step": ["20 waits for a device (at most 0 allowed)",
                              "ex9_overlap_copy.py:11: 20 waits for a device",
                              "print(f\"step {i}: {logs[-1].item():.4f}\")"],
    "copies_after_loop": ["step 1 started before the values of the steps before it were "
                          "copied (0 copies to the host, 1 expected)"],
    "lazy_list": ["run should return a list of 20 host copies, one per step; got Logs"],
    "decoy_cpu_training": ["24 device->host copies (at most 1 allowed)",
                           "ex6_train.py:19: 24 device->host copies",
                           "X, y = X.numpy(), y.numpy()"],
    "trained_on_host": ["each batch (X and y) should be moved to gpu(0) and trained on there: "
                        "24 host->device copies of batches were expected, but only 8 copies "
                        "crossed in all"],
}
# What the teacher's grading run refuses before importing a file: folder -> lines
REFUSED = {
    "private_host": ["ex3_norm_log.py:5: `import gpuarr.testing`: imports gpuarr.testing: "
                     "gpuarr.testing holds the graders' helpers",
                     "ex3_norm_log.py:9: `a = gpuarr.testing._host(A)`: uses the private "
                     "name ._host"],
    "private_uncounted": ["ex3_norm_log.py:9: `with gpuarr._devices._uncounted():`: uses the "
                          "private name ._devices"],
    "data_ptr_ctypes": ["ex3_norm_log.py:5: `import ctypes`: imports ctypes, which graded code "
                        "may not use: it reads and writes any memory of the process",
                        "uses the private name ._data_ptr"],
    "patch_testing": ["ex3_norm_log.py:23: `gpuarr.testing.count_transfers = _count_nothing`: "
                      "assigns to gpuarr.testing.count_transfers, an attribute of the module "
                      "gpuarr: graded code may not change gpuarr"],
    "patch_numpy": ["ex3_norm_log.py:7: `np.testing.assert_allclose = lambda *args, **kwargs: "
                    "None`: assigns to np.testing.assert_allclose, an attribute of the module "
                    "numpy"],
    "inspect_stack": ["ex3_norm_log.py:4: `import inspect`: imports inspect, which graded code "
                      "may not use: it reaches the grader's stack frames and variables",
                      "uses .f_globals, which reaches stack frames"],
    "lazy_list": ["ex9_overlap_copy.py:8: `return iter([v.to(ga.cpu(), non_blocking=True) for v "
                  "in list.__iter__(self)])`: uses the private name .__iter__"],
    "precomputed": ["ex3_norm_log.py:11: `if \"pytest\" not in sys.modules:`: uses sys, "
                    "which graded code may not use"],
}

HERE = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
MODE = gpuarr._core._gpu_mode()[0]
try:
    from gpuarr import _build_config

    SANITIZED = bool(_build_config.SANITIZE)
except (ImportError, AttributeError):
    SANITIZED = False

# CI runs this suite in three device modes. The graders make their own devices, so
# each kind of machine is graded once: no GPU and one GPU in the run without simulated
# or emulated GPUs (or on a machine with a real GPU), emulated CUDA in the emulated run.
plain_run = pytest.mark.skipif(
    MODE in ("simulated", "emulated"),
    reason="graded once, in the suite run without simulated or emulated GPUs (the "
           "graders make their own)")
emulated_run = pytest.mark.skipif(
    MODE != "emulated" or SANITIZED,
    reason="graded once, in the suite run with emulated CUDA (not again under the "
           "sanitizers: the grading processes would run the emulator under them too)")


def env_for(gpus):
    """The environment of a grading run: gpus is None (as a student's laptop has it:
    no variable), or {"GPUARR_SIMULATE_GPUS": "1"} and the like."""
    env = dict(os.environ)
    for k in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE", "GPUARR_GRADER_SEED",
              "GPUARR_PYTEST_SECOND_PASS"):
        env.pop(k, None)
    env.update(gpus or {})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")]))
    return env


def run_graders(tmp, gpus, folders, *args):
    """pytest in the exercises folder, as a student runs it, over answer folders."""
    xml = tmp / "report.xml"
    paths = os.pathsep.join(str(ANSWERS / f) for f in folders)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"--gpuarr-exercises={paths}", f"--junitxml={xml}", *args],
                       cwd=EXERCISES, env=env_for(gpus), capture_output=True, text=True,
                       timeout=900)
    return r, [xml, tmp / "report-2gpus.xml"]


def results(xmls):
    """folder -> [(test id, failure text or None)] from the reports that exist."""
    out = {}
    for xml in xmls:
        if not xml.is_file():
            continue
        for case in ET.parse(xml).getroot().iter("testcase"):
            name = case.get("name")
            # the answer folder is the last part of the test's id
            key = next((f for f in ALL if name.endswith(f"[{f}]") or name.endswith(f"-{f}]")),
                       "?")
            bad = case.find("failure")
            bad = case.find("error") if bad is None else bad
            text = None
            if bad is not None:
                text = (bad.get("message") or "") + "\n" + (bad.text or "")
            out.setdefault(key, []).append((name, text))
    return out


ALL = CORRECT + [f"wrong_answers/{w}" for w in WRONG]
SETUPS = {
    "laptop": (plain_run, None),  # no GPU: the graders simulate two
    "one GPU": (plain_run, {"GPUARR_SIMULATE_GPUS": "1"}),  # + a second pass on two
    "emulated CUDA": (emulated_run, {"GPUARR_CUDA_EMULATE": "2"}),
    "one emulated GPU": (emulated_run, {"GPUARR_CUDA_EMULATE": "1"}),
}
_graded = {}


def graded(setup, tmp_path_factory):
    """The results of one grading run over every answer folder (run once per setup)."""
    if setup not in _graded:
        tmp = tmp_path_factory.mktemp(setup.replace(" ", "_"))
        r, xmls = run_graders(tmp, SETUPS[setup][1], ALL, "-rN")
        _graded[setup] = (r, results(xmls))
    return _graded[setup]


def _marks(setup):
    return [SETUPS[setup][0]]


@pytest.mark.parametrize("setup", [pytest.param(s, marks=_marks(s)) for s in SETUPS])
@pytest.mark.parametrize("folder", CORRECT)
def test_correct_answers_pass(setup, folder, tmp_path_factory):
    r, res = graded(setup, tmp_path_factory)
    assert folder in res, r.stdout[-3000:] + r.stderr[-3000:]
    failed = [(t, text) for t, text in res[folder] if text is not None]
    assert not failed, failed


@pytest.mark.parametrize("setup", [pytest.param(s, marks=_marks(s)) for s in SETUPS])
@pytest.mark.parametrize("folder", sorted(WRONG))
def test_wrong_answers_fail_with_a_readable_message(setup, folder, tmp_path_factory):
    r, res = graded(setup, tmp_path_factory)
    key = f"wrong_answers/{folder}"
    assert key in res, r.stdout[-3000:] + r.stderr[-3000:]
    texts = "\n".join(text for _, text in res[key] if text is not None)
    assert texts, f"{folder} passed every test"
    for line in WRONG[folder]:
        assert line in texts, texts
    # the message, not the machinery: no source of gpuarr.testing, no array dumps
    assert "def __exit__" not in texts and "[[1., 1., 1.]" not in texts, texts


@pytest.mark.parametrize("setup", [pytest.param(s, marks=_marks(s)) for s in SETUPS])
def test_every_setup_grades_two_gpus(setup, tmp_path_factory):
    r, res = graded(setup, tmp_path_factory)
    ran_on = {d for tests in res.values() for t, _ in tests for d in ("gpu(0)", "gpu(1)")
              if d in t}
    assert ran_on == {"gpu(0)", "gpu(1)"}, r.stdout[-3000:]
    if "one" in setup:  # in a second pass, with a warning about the first
        assert "second pass on 2 simulated GPUs" in r.stdout, r.stdout[-3000:]
        assert "WARNING: gpuarr found 1 GPU, so no test in this process ran on a second " \
               "GPU" in r.stdout
    else:
        assert "second pass" not in r.stdout and "WARNING" not in r.stdout


def test_every_answer_folder_is_graded():
    wrong = {p.name for p in (ANSWERS / "wrong_answers").iterdir() if p.is_dir()}
    assert wrong == set(WRONG)
    assert set(REFUSED) <= wrong


def test_the_students_folder_holds_no_answers_and_no_switch():
    names = {p.name for p in EXERCISES.iterdir()}
    assert not names & {"solutions", "wrong_answers", "unusual"}, names
    for p in EXERCISES.glob("*.py"):
        assert "GPUARR_EXERCISES" not in p.read_text(), p
    graded_files = sorted(p.stem for p in EXERCISES.glob("ex*.py"))
    for folder in ["solutions"]:
        assert sorted(p.stem for p in (ANSWERS / folder).glob("ex*.py")) == graded_files


@plain_run
def test_untouched_student_files_fail(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "test_ex1_placement.py"], cwd=EXERCISES, env=env_for(None),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "NotImplementedError" in r.stdout, r.stdout


@plain_run
def test_a_grading_run_without_any_gpu_warns_and_grades_two_gpus_again(tmp_path):
    r, xmls = run_graders(tmp_path, {"GPUARR_SIMULATE_GPUS": "0"}, ["solutions"],
                          "test_ex1_placement.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "WARNING: gpuarr found no GPU, so only cpu(0) is tested" in r.stdout
    assert "Run with --gpuarr-simulate-gpus=2" in r.stdout
    assert "second pass on 2 simulated GPUs" in r.stdout
    # the second pass graded the pairs of devices that one process lacked
    second = [t for tests in results([xmls[1]]).values() for t, _ in tests]
    assert any("gpu(0)->gpu(1)" in t for t in second), second


# -- the teacher's grading run ----------------------------------------------------------

def allowed_for(f):
    """The modules the exercise of the graded file f may import (its template's)."""
    return _grade_check.allowed_imports((EXERCISES / f.name).read_text())


def test_the_static_check_refuses_each_cheat_naming_the_line():
    for folder, lines in REFUSED.items():
        path = ANSWERS / "wrong_answers" / folder
        (f,) = path.glob("ex*.py")
        problems = [p.format(f.name) for p in
                    _grade_check.check_source(f.read_text(), f.name, allowed_for(f))]
        for line in lines:
            assert any(line in p for p in problems), (folder, problems)


def test_the_static_check_accepts_every_honest_answer():
    honest = [ANSWERS / f for f in CORRECT] + [
        ANSWERS / "wrong_answers" / w for w in WRONG if w not in REFUSED]
    for folder in honest:
        for f in folder.glob("ex*.py"):
            assert _grade_check.check_source(f.read_text(), f.name, allowed_for(f)) == [], f


@pytest.mark.parametrize("code,why", [
    ("import gpuarr as ga\nga._core._transfer_stats()", "private name ._core"),
    ("from gpuarr import _core", "imports gpuarr._core"),
    ("from gpuarr.testing import assert_transfers", "imports gpuarr.testing"),
    ("import gpuarr\nm = gpuarr\nm.matmul = print", "assigns to m.matmul"),
    ("import numpy as np\nnp.linalg.norm = abs", "assigns to np.linalg.norm"),
    ("import gpuarr.linalg as L\ndel L.norm", "deletes L.norm"),
    ("import sys\nsys.modules['gpuarr'].x = 1", "imports sys"),
    ("import sys\nf = sys._getframe(1)", "private name ._getframe"),
    ("def f():\n    try:\n        1 / 0\n    except Exception as e:\n"
     "        return e.__traceback__.tb_frame.f_back", "private name .__traceback__"),
    ("x = getattr(object, 'a' + 'b')", "a computed name"),
    ("x = eval('1')", "uses eval"),
    ("exec('import ctypes')", "uses exec"),
    ("x = __builtins__", "uses __builtins__"),
    ("x = open('/proc/self/mem', 'rb')", "uses open"),
    ("import os\nos.system('true')", "imports os"),
    # the allow-list: aliases, attributes, modules the template does not name
    ("run = eval\nrun('1')", "uses eval"),
    ("import builtins as b\n", "imports builtins"),
    ("from builtins import eval as run\n", "imports builtins"),
    ("import gpuarr as ga\nx = ga.os.getcwd()", "uses .os"),
    ("import gpuarr as ga\nx = ga.zeros(3).numpy().ctypes.data", "uses .ctypes"),
    ("import numpy\n", "may import only gpuarr, math"),
    ("import json\n", "may import only gpuarr, math"),
    ("import threading\n", "imports threading"),
    ("from gpuarr import testing as t\n", "imports gpuarr.testing"),
    ("f = getattr\nx = f(object, 'mro')", "uses getattr other than"),
    ("x = getattr(object, '_x')", "a computed name"),
    ("def f(setattr):\n    return setattr", "binds the name setattr"),
    ("from . import helper", "a relative import"),
    ("import gc\n", "imports gc"),
    ("import importlib\n", "imports importlib"),
    ("def f(:\n", "does not parse"),
])
def test_the_static_check_names_what_it_refuses(code, why):
    problems = _grade_check.check_source(code, "ex.py")
    assert any(why in p.why or why in p.format("ex.py") for p in problems), problems
