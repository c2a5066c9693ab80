"""The teacher's grading run on a class of 20 (issue 42): wall time per
student-exercise of ``python -m gpuarr.grade`` with ``--jobs 2`` (this machine has two
cores), each exercise of each student in its own sealed process.

    PYTHONPATH=python python3 bench/grade_class.py            # 20 students, --jobs 2

The class is made from tests/teaching/exercise_answers: every fourth student hands in
the reference solutions, the others a mix of unusual answers, wrong answers and a
missing file, so that passing and failing exercises are both timed. Without a GPU the
run grades on two simulated GPUs; with one GPU it makes a second pass on two simulated
GPUs (the time per student-exercise then counts both). The load average is printed:
the machine may be shared."""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "tests" / "teaching" / "exercise_answers"
EXERCISES = ROOT / "notebooks" / "exercises"


def make_class(dest, n):
    stems = sorted(p.stem for p in EXERCISES.glob("ex*.py"))
    wrong = sorted(p for p in (ANSWERS / "wrong_answers").glob("*/ex*.py"))
    unusual = sorted((ANSWERS / "unusual").glob("*/ex*.py"))
    for i in range(n):
        me = dest / f"student{i:02d}"
        me.mkdir(parents=True)
        for stem in stems:
            shutil.copyfile(ANSWERS / "solutions" / f"{stem}.py", me / f"{stem}.py")
        if i % 4 == 0:
            continue
        # one wrong answer and one unusual answer each, a missing file every third
        for pool in (wrong, unusual):
            pick = pool[(i * 7) % len(pool)]
            shutil.copyfile(pick, me / pick.name)
        if i % 3 == 0:
            (me / f"{stems[i % len(stems)]}.py").unlink()
    return len(stems)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=20)
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subs = pathlib.Path(tmp) / "class"
        n_ex = make_class(subs, a.students)
        # the teacher's own copy: an edit of the repository's folder during the run
        # would be (rightly) reported as a change to the teacher's folder
        teacher = pathlib.Path(tmp) / "teacher"
        shutil.copytree(EXERCISES, teacher)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            filter(None, [str(ROOT / "python"), os.environ.get("PYTHONPATH")])))
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "gpuarr.grade", str(subs), "--graders",
                            str(teacher), "--jobs", str(a.jobs),
                            "--csv", str(pathlib.Path(tmp) / "grades.csv")],
                           env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(r.stdout + r.stderr)
    print(r.stdout.splitlines()[0])
    cells = a.students * n_ex
    print(f"{a.students} students x {n_ex} exercises, --jobs {a.jobs}, {os.cpu_count()} "
          f"CPUs, load average {load:.2f} before and {os.getloadavg()[0]:.2f} after")
    print(f"| grading a class of {a.students} | {wall:.1f} s | "
          f"{wall / cells * 1000:.0f} ms per student-exercise |")


if __name__ == "__main__":
    main()
