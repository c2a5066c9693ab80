"""The teacher's grading run: ``python -m gpuarr.grade SUBMISSIONS/ --graders DIR``.

SUBMISSIONS holds one folder per student with the student's copies of the graded files
(``alice/ex1_placement.py``, ...). DIR is the teacher's copy of the graders (the
exercises folder: its ``test_*.py``, ``conftest.py`` and ``pytest.ini``; the graded
files are the ``*.py`` templates beside them). Nothing else of a submission is read:
a student's conftest.py, pytest.ini or graders are ignored.

For each student, each graded file first passes a static check (``_grade_check``):
code that reaches gpuarr's private names, ctypes, inspect, frames, ``sys.modules``, or
assigns to attributes of gpuarr, NumPy or the graders is refused before it is ever
imported, and every test of that exercise fails with the line and the reason. Then
the graders run in a fresh Python process per student (pytest, with the teacher's
files), once on this machine's devices and, when it has fewer than two GPUs, once
more on two simulated GPUs (a machine with no GPU grades on two simulated GPUs
only): placement on a second GPU is graded on every machine. Inputs are drawn afresh
for every run.

The result: a table with one row per student (each test passed or failed, the first
failure's message) and, with ``--csv FILE``, the same as a CSV for a gradebook.
``--check-only`` runs the static check alone and lists every refusal.
"""
import argparse
import concurrent.futures
import csv
import dataclasses
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import gpuarr

from ._grade_check import check_source

_PASS = "ok"
_FAIL = "FAIL"


@dataclasses.dataclass
class StudentResult:
    """One student's grade: test name -> passed, and the first failure in words."""

    name: str
    tests: dict
    first_failure: str = ""
    refusals: list = dataclasses.field(default_factory=list)

    @property
    def passed(self):
        return sum(self.tests.values())


def graded_files(graders):
    """The names of the graded modules: the templates beside the graders."""
    return sorted(p.stem for p in graders.glob("*.py")
                  if not p.name.startswith("test_") and p.name != "conftest.py")


def static_check(folder, names):
    """{name: [problem lines]} for the files of `names` in `folder` (missing: none)."""
    out = {}
    for name in names:
        path = folder / f"{name}.py"
        if path.is_file():
            problems = check_source(path.read_text(encoding="utf-8", errors="replace"),
                                    path.name)
            out[name] = [p.format(path.name) for p in problems]
    return out


def _stub(message):
    # A refused or missing file: importing it fails every test of its exercise with
    # the reason, so the table and the CSV show it like any other failure.
    return f"raise AssertionError({message!r})\n"


def prepare(student_dir, names, work):
    """Copy the student's accepted files into `work`; stubs for the others.
    Returns the refusals, one line each."""
    refusals = []
    checked = static_check(student_dir, names)
    for name in names:
        src = student_dir / f"{name}.py"
        dst = work / f"{name}.py"
        if not src.is_file():
            dst.write_text(_stub(f"{name}.py is missing from the submission"))
        elif checked.get(name):
            refusals.extend(checked[name])
            dst.write_text(_stub(f"{name}.py was refused before grading: "
                                 + "; ".join(checked[name])))
        else:
            shutil.copyfile(src, dst)
    return refusals


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


def _run_pass(graders, files, label, changes, junit, timeout):
    cmd = [sys.executable, "-m", "pytest", str(graders), "-q", "-p", "no:cacheprovider",
           f"--rootdir={graders}", f"--junitxml={junit}", f"--gpuarr-exercises={files}",
           # this run makes its own passes (and draws the seed itself)
           "-o", "gpuarr_min_gpus=0", "-o", "gpuarr_simulate_gpus_if_none=0"]
    try:
        r = subprocess.run(cmd, cwd=str(graders), env=_environment(changes),
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, (f"[{label}] the grading run took longer than {timeout} s (a loop "
                      "that never ends?)")
    if not junit.is_file():
        tail = (r.stdout + r.stderr).strip().splitlines()[-5:]
        return None, f"[{label}] the graders did not run: " + " | ".join(tail)
    return _read_junit(junit, label), None


def _test_name(case):
    cls = case.get("classname", "")
    name = case.get("name", "")
    base = name.split("[", 1)[0]
    param = name[len(base):]
    return f"{cls.rsplit('.', 1)[-1]}::{base}", param


def _first_line(text):
    """The first line that says something: "AssertionError:" alone (NumPy's messages
    start on the next line) does not."""
    for ln in (text or "").splitlines():
        ln = ln.strip().removeprefix("AssertionError:").strip()
        if ln:
            return ln
    return ""


def _read_junit(path, label):
    """[(test, passed, message)] from a pytest junit file."""
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        test, param = _test_name(case)
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if case.find("skipped") is not None:
            continue
        if bad is None:
            out.append((test, True, ""))
            continue
        msg = _first_line(bad.get("message")) or _first_line(bad.text)
        out.append((test, False, f"{test}{param} [{label}]: {msg}"))
    return out


def grade_student(student_dir, graders, names, timeout):
    """Grade one student's folder in fresh processes; a StudentResult."""
    with tempfile.TemporaryDirectory(prefix="gpuarr-grade-") as tmp:
        tmp = pathlib.Path(tmp)
        files = tmp / "files"
        files.mkdir()
        refusals = prepare(student_dir, names, files)
        tests, first = {}, ""
        for i, (label, changes) in enumerate(_passes()):
            rows, trouble = _run_pass(graders, files, label, changes, tmp / f"{i}.xml",
                                      timeout)
            if trouble:
                first = first or trouble
                continue
            for test, ok, msg in rows:
                tests[test] = tests.get(test, True) and ok
                if not ok and not first:
                    first = msg
        if not tests and not first:
            first = "no test ran"
        return StudentResult(student_dir.name, tests, first, refusals)


def _all_tests(results):
    names = []
    for r in results:
        for t in r.tests:
            if t not in names:
                names.append(t)
    return names


def table(results):
    """The summary as text: a legend of the tests, then one row per student."""
    tests = _all_tests(results)
    lines = ["tests:"] + [f"  {f'T{i + 1}':<4} {t}" for i, t in enumerate(tests)]
    width = max([len("student")] + [len(r.name) for r in results])
    cols = [f"T{i + 1}" for i in range(len(tests))]
    cw = [max(len(c), len(_FAIL)) for c in cols]
    head = (f"{'student':<{width}}  " + " ".join(f"{c:<{w}}" for c, w in zip(cols, cw))
            + "  passed  first failure")
    lines += ["", head, "-" * len(head)]
    for r in results:
        cells = []
        for t, w in zip(tests, cw):
            v = r.tests.get(t)
            cells.append(f"{'-' if v is None else _PASS if v else _FAIL:<{w}}")
        score = f"{r.passed}/{len(tests)}"
        lines.append(f"{r.name:<{width}}  " + " ".join(cells) + f"  {score:<6}  "
                     + (r.first_failure or ""))
    return "\n".join(lines)


def write_csv(results, path):
    tests = _all_tests(results)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", *tests, "passed", "total", "first_failure"])
        for r in results:
            w.writerow([r.name, *[int(bool(r.tests.get(t))) for t in tests], r.passed,
                        len(tests), r.first_failure])


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
    p.add_argument("--timeout", type=float, default=600,
                   help="seconds for one student's run on one set of devices (600)")
    p.add_argument("--jobs", "-j", type=int, default=1,
                   help="students graded at the same time (1)")
    p.add_argument("--check-only", action="store_true",
                   help="run the static check alone and list what it refuses")
    a = p.parse_args(argv)
    graders = a.graders.resolve()
    names = graded_files(graders)
    if not list(graders.glob("test_*.py")) or not names:
        p.error(f"{graders} holds no graders (test_*.py) and graded templates: name the "
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
            for name, problems in static_check(d, names).items():
                for line in problems:
                    print(f"{d.name}/{line}")
                    refused += 1
        print(f"{refused} refusal{'' if refused == 1 else 's'} in {len(students)} "
              f"submission{'' if len(students) == 1 else 's'}")
        return 0

    labels = ", ".join(label for label, _ in _passes())
    print(f"grading {len(students)} submission{'' if len(students) == 1 else 's'} with "
          f"{graders} on: {labels}", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        results = list(pool.map(
            lambda d: grade_student(d, graders, names, a.timeout), students))
    for r in results:
        for line in r.refusals:
            print(f"refused: {r.name}/{line}")
    print(table(results))
    if a.csv:
        write_csv(results, a.csv)
        print(f"wrote {a.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
