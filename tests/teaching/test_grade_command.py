"""The teacher's grading run, ``python -m gpuarr.grade`` (issue 42): the table and the
CSV (a score and a reason per exercise), and the sealing: each exercise of each
student in a process of its own, with its own time limit, in a private copy of the
graders, its results through a pipe. The attacks live in
tests/teaching/exercise_answers/sealing/ (its README says what each must give).

The classes are small (CI is near its time budget): the teacher's folder holds only
the exercises a test needs. bench/grade_class.py times a class of 20."""
import csv
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import pytest

from test_graded_exercises import (ANSWERS, EXERCISES, REFUSED, emulated_run, env_for,
                                   plain_run)

SEALING = ANSWERS / "sealing"
HANG_TIMEOUT = 15  # seconds: --timeout of the class with an endless loop


def teacher_folder(tmp, stems):
    """A teacher's copy of the exercises folder with the exercises `stems` only."""
    dest = tmp / "teacher"
    dest.mkdir()
    for name in ("conftest.py", "pytest.ini"):
        shutil.copyfile(EXERCISES / name, dest / name)
    for stem in stems:
        for name in (f"{stem}.py", f"test_{stem}.py"):
            shutil.copyfile(EXERCISES / name, dest / name)
    return dest


def make_class(tmp, students):
    """students: name -> {stem: answer folder (relative to exercise_answers)}."""
    subs = tmp / "class"
    for name, files in students.items():
        (subs / name).mkdir(parents=True)
        for stem, src in files.items():
            shutil.copyfile(ANSWERS / src / f"{stem}.py", subs / name / f"{stem}.py")
    return subs


def grade(subs, teacher, gpus, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "gpuarr.grade", str(subs), "--graders",
                           str(teacher), *args], env=env_for(gpus), capture_output=True,
                          text=True, timeout=timeout)


def rows(path):
    return {row["student"]: row for row in csv.DictReader(path.open())}


def full(cell):
    """'5/5' -> True; '0/5', '2/5' -> False."""
    passed, total = cell.split("/")
    return passed == total and int(total) > 0


# -- the table and the CSV ------------------------------------------------------------

@plain_run
def test_the_table_and_csv_give_a_score_and_a_reason_per_exercise(tmp_path):
    stems = ["ex1_placement", "ex2_roundtrip", "ex3_norm_log"]
    teacher = teacher_folder(tmp_path, stems)
    subs = make_class(tmp_path, {
        "alice": {s: "solutions" for s in stems},
        "bob": {"ex1_placement": "wrong_answers/wrong_device",
                "ex2_roundtrip": "solutions",
                "ex3_norm_log": "wrong_answers/patch_testing"},
        "carol": {"ex2_roundtrip": "solutions"},
    })
    # what a student adds to a submission is never used
    (subs / "bob" / "conftest.py").write_text("raise SystemExit('the student conftest ran')\n")
    out_csv = tmp_path / "grades.csv"
    r = grade(subs, teacher, None, "--csv", str(out_csv), "--jobs", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "on: 2 simulated GPUs (one process per exercise, 60 s each)" in out, out
    assert ("refused: bob/ex3_norm_log.py:23: `gpuarr.testing.count_transfers = "
            "_count_nothing`") in out, out
    g = rows(out_csv)
    assert set(g) == {"alice", "bob", "carol"}
    header = next(csv.reader(out_csv.open()))
    assert header[:7] == ["student", "ex1_placement", "ex1_placement_reason",
                          "ex2_roundtrip", "ex2_roundtrip_reason", "ex3_norm_log",
                          "ex3_norm_log_reason"], header
    # one column per test and device: the devices are not folded together
    assert "ex1_placement::test_arrays_are_made_on_the_device[gpu(1)]" in header, header
    assert all(full(g["alice"][s]) and g["alice"][f"{s}_reason"] == "" for s in stems)
    assert g["alice"]["passed"] == g["alice"]["total"]
    # bob: one wrong exercise, one refused, one right; each scored on its own
    assert full(g["bob"]["ex2_roundtrip"]) and g["bob"]["ex2_roundtrip_reason"] == ""
    assert g["bob"]["ex1_placement"].startswith(tuple(f"{k}/" for k in range(1, 9)))
    assert not full(g["bob"]["ex1_placement"])
    assert g["bob"]["ex1_placement_reason"].startswith(
        "exercise 1: test_sum_runs_on_the_second_operands_device["), g["bob"]
    assert "too little work on" in g["bob"]["ex1_placement_reason"]
    # a refused or missing file scores 0 of every test it would have run
    assert g["bob"]["ex3_norm_log"] == "0/" + g["alice"]["ex3_norm_log"].split("/")[1]
    assert g["bob"]["ex3_norm_log_reason"].startswith(
        "exercise 3: refused before grading: ex3_norm_log.py:"), g["bob"]
    # carol: what is missing is missing, and only that
    assert g["carol"]["ex1_placement_reason"] == "exercise 1: not handed in"
    assert g["carol"]["ex3_norm_log_reason"] == "exercise 3: not handed in"
    assert full(g["carol"]["ex2_roundtrip"]), g["carol"]
    assert g["carol"]["total"] == g["alice"]["total"], g["carol"]
    # the table: one line per student, a score per exercise, the total, the reasons
    assert re.search(r"^student\s+ex1\s+ex2\s+ex3\s+total\s+first failure", out, re.M), out
    n = g["alice"]["total"]
    assert re.search(rf"^alice\s+(\d+)/\1\s+(\d+)/\2\s+(\d+)/\3\s+{n}/{n}\s*$", out, re.M), out
    assert re.search(r"^carol\s+0/\d+\s+\d+/\d+\s+0/\d+\s+.*exercise 1: not handed in; "
                     r"exercise 3: not handed in$", out, re.M), out
    assert "the student conftest ran" not in out


@emulated_run
def test_a_machine_with_one_gpu_grades_each_exercise_on_it_and_on_two_simulated(tmp_path):
    teacher = teacher_folder(tmp_path, ["ex1_placement"])
    subs = make_class(tmp_path, {"bob": {"ex1_placement": "wrong_answers/wrong_device"}})
    r = grade(subs, teacher, {"GPUARR_CUDA_EMULATE": "1"}, "--csv", str(tmp_path / "g.csv"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "on: 1 emulated GPU, 2 simulated GPUs" in r.stdout, r.stdout
    row = rows(tmp_path / "g.csv")["bob"]
    assert row["ex1_placement_reason"].startswith("exercise 1: test_"), row
    assert "[1 emulated GPU]" in row["ex1_placement_reason"], row
    assert row["ex1_placement::test_arrays_are_made_on_the_device[gpu(0)] "
               "[2 simulated GPUs]"] == "1", row


# -- the static check -------------------------------------------------------------------

def test_check_only_lists_every_refusal_and_the_attacks(tmp_path):
    subs = tmp_path / "subs"
    for folder in REFUSED:
        shutil.copytree(ANSWERS / "wrong_answers" / folder, subs / folder)
    for folder in ("aliased_eval", "results_thread", "graders_writer", "crash",
                   "teacher_writer", "stray_thread"):
        shutil.copytree(SEALING / folder, subs / folder)
    shutil.copytree(ANSWERS / "solutions", subs / "honest")
    r = grade(subs, EXERCISES, None, "--check-only")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for folder in [*REFUSED, "results_thread", "graders_writer", "crash", "teacher_writer",
                   "stray_thread"]:
        assert any(line.startswith(f"{folder}/") for line in lines), (folder, r.stdout)
    assert ("aliased_eval/ex3_norm_log.py:4: `run = eval`: uses eval, which graded code "
            "may not use") in r.stdout, r.stdout
    assert "results_thread/ex1_placement.py:3: `import pathlib`: imports pathlib: this " \
           "exercise's file may import only gpuarr, math" in r.stdout, r.stdout
    assert "honest/" not in r.stdout


# -- the sealing ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sealed_class(tmp_path_factory):
    """One grading run of a class of attacks, the static check off: the sealing must
    hold on its own. Returns (the run, its CSV rows, the teacher's folder, seconds)."""
    tmp = tmp_path_factory.mktemp("sealed")
    teacher = teacher_folder(tmp, ["ex1_placement", "ex3_norm_log", "ex5_two_gpus"])
    subs = make_class(tmp, {
        "a_writer": {"ex1_placement": "sealing/graders_writer", "ex3_norm_log": "solutions"},
        "b_wrong": {"ex1_placement": "wrong_answers/wrong_device"},
        "c_thread": {"ex1_placement": "sealing/results_thread",
                     "ex3_norm_log": "sealing/stray_thread", "ex5_two_gpus": "solutions"},
        "d_crash": {"ex1_placement": "sealing/crash", "ex3_norm_log": "solutions",
                    "ex5_two_gpus": "sealing/hang"},
        "e_flood": {"ex1_placement": "sealing/flood"},
        "f_teacher": {"ex1_placement": "sealing/teacher_writer"},
    })
    f = subs / "f_teacher" / "ex1_placement.py"
    f.write_text(f.read_text().replace("@TEACHER@", str(teacher)))
    t0 = time.monotonic()
    r = grade(subs, teacher, None, "--csv", str(tmp / "g.csv"), "--jobs", "2",
              "--timeout", str(HANG_TIMEOUT), "--no-static-check")
    return r, rows(tmp / "g.csv"), teacher, time.monotonic() - t0


@plain_run
def test_a_student_who_rewrites_the_graders_loses_that_exercise_and_no_one_else_gains(
        sealed_class):
    r, g, teacher, _ = sealed_class
    assert g["a_writer"]["ex1_placement"].startswith("0/"), g["a_writer"]
    assert full(g["a_writer"]["ex3_norm_log"]), g["a_writer"]
    if os.geteuid() == 0:  # root writes through read-only files: the copy's hash sees it
        assert "changed the graders' files: graders/conftest.py" in \
            g["a_writer"]["ex1_placement_reason"], g["a_writer"]
    # the wrong answer graded after it still fails
    assert g["b_wrong"]["ex1_placement"].startswith(tuple(f"{k}/" for k in range(9)))
    assert not full(g["b_wrong"]["ex1_placement"])
    assert "too little work on" in g["b_wrong"]["ex1_placement_reason"], g["b_wrong"]
    assert "the student was here" not in (EXERCISES / "conftest.py").read_text()


@plain_run
def test_a_thread_started_at_import_cannot_write_the_results(sealed_class):
    r, g, _, _ = sealed_class
    c = g["c_thread"]
    assert c["ex1_placement"].startswith("0/"), c
    # a correct answer with a thread that never ends, and the exercise beside it
    assert full(c["ex3_norm_log"]) and c["ex3_norm_log_reason"] == "", c
    assert full(c["ex5_two_gpus"]), c


@plain_run
def test_a_crash_and_a_hang_cost_their_exercise_only(sealed_class):
    r, g, _, seconds = sealed_class
    d = g["d_crash"]
    assert d["ex1_placement_reason"] == ("exercise 1: the process crashed (signal 11, "
                                         "SIGSEGV)"), d
    assert d["ex5_two_gpus_reason"] == (f"exercise 5: timed out after {HANG_TIMEOUT} s "
                                        "(a loop that never ends?)"), d
    assert d["ex1_placement"].startswith("0/") and d["ex5_two_gpus"].startswith("0/")
    assert full(d["ex3_norm_log"]) and d["ex3_norm_log_reason"] == "", d
    # the hang cost its own time limit once, not the whole run's
    assert seconds < 10 * HANG_TIMEOUT, seconds


@plain_run
def test_a_flood_of_output_costs_its_exercise_only(sealed_class):
    r, g, _, _ = sealed_class
    e = g["e_flood"]
    assert e["ex1_placement_reason"] == "exercise 1: wrote more than 16 MiB of output", e
    assert e["ex3_norm_log_reason"] == "exercise 3: not handed in", e


@plain_run
def test_a_change_to_the_teachers_folder_is_an_error_that_names_the_student(sealed_class):
    r, g, teacher, _ = sealed_class
    assert r.returncode == 2, r.stdout + r.stderr
    assert re.search(rf"ERROR: the teacher's graders folder {re.escape(str(teacher))} "
                     r"changed while (\S+, )*f_teacher(, \S+)* (was|were) graded: "
                     r"conftest\.py", r.stderr), r.stderr
    # graded with the folder as it was: the correct answer passes, no one else gains
    assert full(g["f_teacher"]["ex1_placement"]), g["f_teacher"]
    assert "the student was here" in (teacher / "conftest.py").read_text()
