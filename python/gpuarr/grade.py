"""The teacher's grading run: ``python -m gpuarr.grade SUBMISSIONS/ --graders DIR``.

SUBMISSIONS holds one folder per student with the student's copies of the graded files
(``alice/ex1_placement.py``, ...). DIR is the teacher's copy of the graders (the
exercises folder: its ``test_*.py``, ``conftest.py`` and ``pytest.ini``; the graded
files are the ``*.py`` templates beside them). Nothing else of a submission is read:
a student's conftest.py, pytest.ini or graders are ignored.

Each graded file first passes a static check (``_grade_check``): an allow-list of the
modules its exercise's template names, and no name that reaches around Python (eval,
getattr with a computed name, open, os, sys, threading, ctypes, private names...),
called, aliased or reached as an attribute. A refused file scores zero on its
exercise with the line and the reason. Then each exercise of each student is graded
in a sealed process of its own (``_grade_seal``): a private, read-only copy of the
graders read once from the teacher's folder, its own time limit (``--timeout``,
60 s), results through a pipe the graded code cannot reach. A crash, hang or flood of
output costs that exercise only. Every exercise runs once on this machine's devices
and, when it has fewer than two GPUs, once more on two simulated GPUs (a machine with
no GPU grades on two simulated GPUs only): placement on a second GPU is graded on
every machine. Inputs are drawn afresh for every run.

The result: a table with one line per student (a score per exercise, the total, the
first failure of each failing exercise in words) and, with ``--csv FILE``, a CSV for a
gradebook: a ``passed/total`` column per exercise and its reason, then one column per
test and set of devices. ``--check-only`` runs the static check alone and lists every
refusal. The teacher's folder is hashed before and after each student: a change is an
error that names the student (exit status 2).
"""
import argparse
import concurrent.futures
import dataclasses
import os
import pathlib
import re
import sys
import threading

import gpuarr

from ._grade_check import allowed_imports, check_source
from ._grade_report import table, write_csv
from ._grade_seal import Graders, _diff, _read_tree, grade_exercise

DEFAULT_TIMEOUT = 60.0  # seconds per exercise and set of devices: the slowest takes ~5


@dataclasses.dataclass
class Exercise:
    """One exercise of one student: its tests [(column, passed, message)] over every
    set of devices, and the first failure in words ("" when it passed)."""

    stem: str
    tests: list
    reason: str = ""
    expected: int = 0  # the tests the teacher's graders hold for it, over every pass

    @property
    def passed(self):
        return sum(ok for _, ok, _ in self.tests)

    @property
    def total(self):
        # a missing, refused or crashed file scores 0 of every test it would have run
        # (not of one: leaving out a hard exercise must not raise the percentage)
        return max(1, len(self.tests), self.expected)


@dataclasses.dataclass
class StudentResult:
    """One student's grade: an Exercise per graded file, and the static check's
    refusals, one line each."""

    name: str
    exercises: dict
    refusals: list = dataclasses.field(default_factory=list)

    @property
    def passed(self):
        return sum(e.passed for e in self.exercises.values())

    @property
    def total(self):
        return sum(e.total for e in self.exercises.values())


def exercise_label(stem):
    """"exercise 5" for ex5_two_gpus; the stem itself when it has no number."""
    m = re.match(r"ex(\d+)", stem)
    return f"exercise {int(m.group(1))}" if m else stem


def static_check(folder, graders, names=None):
    """{name: [problem lines]} for the files of `names` in `folder` (missing: none),
    each checked against its exercise's allow-list."""
    out = {}
    for name in names or graders.templates():
        path = folder / f"{name}.py"
        if path.is_file():
            template = graders.files.get(f"{name}.py", b"").decode("utf-8", "replace")
            problems = check_source(path.read_text(encoding="utf-8", errors="replace"),
                                    path.name, allowed_imports(template))
            out[name] = [p.format(path.name) for p in problems]
    return out


def _passes():
    """[(label, environment changes)] for this machine: its own devices, and two
    simulated GPUs when it has fewer than two."""
    n = gpuarr.num_gpus()
    mode = gpuarr.device_kind(gpuarr.gpu(0)) if n else "none"
    sim = {"GPUARR_SIMULATE_GPUS": "2", "GPUARR_CUDA_EMULATE": None}
    if n == 0:
        return [("2 simulated GPUs", sim)]
    here = (f"{n} {mode} GPU{'s' if n > 1 else ''}", {})
    return [here] if n >= 2 else [here, ("2 simulated GPUs", sim)]


def _environment(changes):
    env = dict(os.environ)
    env.pop("GPUARR_GRADER_SEED", None)  # inputs are drawn afresh for every student
    env.pop("GPUARR_EXERCISES", None)
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    here = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    return env



def count_tests(graders, timeout):
    """{exercise: the number of tests its grader collects over every pass}, counted
    once per class from the teacher's templates (collected, not run)."""
    out = {}
    for name in graders.templates():
        for _, changes in _passes():
            got = grade_exercise(graders, name, graders.files[f"{name}.py"],
                                 _environment(changes), timeout, collect_only=True)
            out[name] = out.get(name, 0) + len(got.tests)
    return out


def grade_student(student_dir, graders, timeout, check=True, expected=None):
    """Grade one student's folder, one sealed process per exercise and set of
    devices; a StudentResult. ``expected``: count_tests's numbers, the totals of the
    exercises that do not run."""
    expected = expected or {}
    names = graders.templates()
    checked = static_check(student_dir, graders, names) if check else {}
    result = StudentResult(student_dir.name, {})
    passes = _passes()
    for name in names:
        label = exercise_label(name)
        src = student_dir / f"{name}.py"
        if not src.is_file():
            result.exercises[name] = Exercise(name, [], f"{label}: not handed in",
                                              expected.get(name, 0))
            continue
        if checked.get(name):
            result.refusals.extend(checked[name])
            result.exercises[name] = Exercise(
                name, [], f"{label}: refused before grading: {checked[name][0]}",
                expected.get(name, 0))
            continue
        tests, reason = [], ""
        for plabel, changes in passes:
            out = grade_exercise(graders, name, src.read_bytes(), _environment(changes),
                                 timeout)
            suffix = f" [{plabel}]" if len(passes) > 1 else ""
            first = ""
            for tid, ok, msg in out.tests:
                column = tid.split("::", 1)[-1] + suffix
                tests.append((f"{name}::{column}", ok, msg))
                if not ok and not first:
                    first = f"{label}: {column}: {msg or 'failed'}"
            if reason:
                continue
            if out.trouble:  # the process's own trouble says most: a crash, a timeout
                reason = f"{label}{suffix}: {out.trouble}"
            elif first:
                reason = first
            elif not out.tests:
                reason = f"{label}{suffix}: no test ran"
        result.exercises[name] = Exercise(name, tests, reason, expected.get(name, 0))
    return result


class _Watch:
    """The teacher's folder, compared with its snapshot after each student: a change since the last look
    names the students who were being graded when it happened."""

    def __init__(self, graders, expected):
        self.graders, self.lock, self.busy, self.errors = graders, threading.Lock(), set(), []
        self.seen, self.expected = graders.files, expected

    def grade(self, student_dir, timeout, check):
        with self.lock:
            self.busy.add(student_dir.name)
        try:
            return grade_student(student_dir, self.graders, timeout, check, self.expected)
        finally:
            with self.lock:
                now = _read_tree(self.graders.folder)
                changed = _diff(self.seen, now)
                if changed:
                    self.errors.append((sorted(self.busy), changed))
                    self.seen = now
                self.busy.discard(student_dir.name)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m gpuarr.grade",
        description="Grade a folder of students' submissions (one folder per student) "
                    "with the teacher's copy of the graders.")
    p.add_argument("submissions", type=pathlib.Path,
                   help="a folder with one folder per student")
    p.add_argument("--graders", type=pathlib.Path, default=pathlib.Path("."),
                   help="the teacher's exercises folder: test_*.py, conftest.py, "
                        "pytest.ini and the graded templates (default: .)")
    p.add_argument("--csv", type=pathlib.Path, help="also write the results here")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help="seconds for one exercise on one set of devices "
                        f"({DEFAULT_TIMEOUT:g})")
    p.add_argument("--jobs", "-j", type=int, default=1,
                   help="students graded at the same time (1)")
    p.add_argument("--check-only", action="store_true",
                   help="run the static check alone and list what it refuses")
    p.add_argument("--no-static-check", action="store_true",
                   help="skip the static check (to test the sealing alone; never for a "
                        "class)")
    a = p.parse_args(argv)
    if a.timeout <= 0:
        p.error(f"--timeout must be a number of seconds above 0, not {a.timeout:g}")
    folder = a.graders.resolve()
    if not folder.is_dir():
        p.error(f"{folder} is not a folder: name the teacher's exercises folder with "
                "--graders")
    graders = Graders.read(folder)
    if not any(n.startswith("test_") for n in graders.files) or not graders.templates():
        p.error(f"{folder} holds no graders (test_*.py) and graded templates: name the "
                "teacher's exercises folder with --graders")
    if not a.submissions.is_dir():
        p.error(f"{a.submissions} is not a folder")
    students = sorted(d for d in a.submissions.iterdir()
                      if d.is_dir() and not d.name.startswith("."))
    if not students:
        p.error(f"{a.submissions} holds no student folders")

    if a.check_only:
        refused = 0
        for d in students:
            for name, problems in static_check(d, graders).items():
                for line in problems:
                    print(f"{d.name}/{line}")
                    refused += 1
        print(f"{refused} refusal{'' if refused == 1 else 's'} in {len(students)} "
              f"submission{'' if len(students) == 1 else 's'}")
        return 0

    labels = ", ".join(label for label, _ in _passes())
    print(f"grading {len(students)} submission{'' if len(students) == 1 else 's'} with "
          f"{folder} on: {labels} (one process per exercise, {a.timeout:g} s each)",
          flush=True)
    watch = _Watch(graders, count_tests(graders, a.timeout))
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        results = list(pool.map(
            lambda d: watch.grade(d, a.timeout, not a.no_static_check), students))
    for r in results:
        for line in r.refusals:
            print(f"refused: {r.name}/{line}")
    print(table(results))
    if a.csv:
        write_csv(results, a.csv)
        print(f"wrote {a.csv}")
    for who, changed in watch.errors:
        print(f"ERROR: the teacher's graders folder {folder} changed while "
              f"{', '.join(who)} {'was' if len(who) == 1 else 'were'} graded: "
              f"{', '.join(changed)}. The class was graded with the folder as it was "
              "before; restore it before the next run.", file=sys.stderr)
    return 2 if watch.errors else 0


if __name__ == "__main__":
    sys.exit(main())
