"""One exercise of one student, graded in a sealed process (``python -m gpuarr.grade``).

What the sealing promises, and how:

- **The teacher's graders cannot be changed by the class.** They are read once, at
  the start (``Graders.read``), and each exercise of each student is graded in a
  private copy written from that snapshot into a fresh temporary folder: read-only
  files in read-only folders, removed afterwards. What a student's code writes there
  (a hook appended to ``conftest.py``) is seen when the copy is compared again after
  the run, and fails that exercise; it never reaches the next student. The teacher's own
  folder is compared with the snapshot after each student (``grade._Watch``), and a change
  is an error that names the student.
- **One exercise per process, with its own time limit.** The process is a fresh
  Python running pytest on that exercise's grader alone; a crash, a hang, a flood of
  output or a thread that never ends costs that exercise only, and its reason says
  which ("timed out after 60 s", "the process crashed (signal 11)"). The process runs
  in a session of its own so that a timeout kills everything it started; its output
  goes to a file capped by ``RLIMIT_FSIZE``.
- **Results through a channel the graded code cannot reach.** A pipe opened by this
  parent, handed to the child's plugin (``_grade_child``), which sends each test's
  outcome as it happens and ends the process with ``os._exit`` after the last message;
  no results file exists to rewrite. A stream that reports a test twice, names a test
  that was not collected, or does not end, is not believed.

What it does not promise: code that runs native code of its own (a C extension the
student built and imported) acts outside Python and outside these checks; the static
check (``_grade_check``) refuses every import not on the exercise's allow-list, which
is how a teacher sees such an attempt (``--check-only`` lists the refusals).
"""
import dataclasses
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

from ._grade_child import FD_ENV

OUTPUT_LIMIT = 16 << 20  # bytes of output a graded process may write (a flood: SIGXFSZ)
_PIPE_LIMIT = 4 << 20  # bytes of result messages read from one process
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints"}


@dataclasses.dataclass
class Graders:
    """The teacher's graders, read once: relative path -> bytes."""

    folder: pathlib.Path
    files: dict

    @classmethod
    def read(cls, folder):
        return cls(folder, _read_tree(folder))

    def templates(self):
        """The graded files' stems: the ``*.py`` beside the graders, not graders."""
        return sorted(pathlib.PurePath(p).stem for p in self.files
                      if "/" not in p and p.endswith(".py")
                      and not p.startswith("test_") and p != "conftest.py")

    def private_copy(self, stem, dest):
        """Write what grading ``stem`` needs into ``dest``: its grader, the folder's
        conftest.py, pytest.ini and other helpers (no other grader, no template)."""
        others = set(self.templates())
        for rel, data in self.files.items():
            name = pathlib.PurePath(rel).name
            top = "/" not in rel
            if top and name.startswith("test_") and name != f"test_{stem}.py":
                continue
            if top and name.endswith(".py") and name[:-3] in others:
                continue
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def _read_tree(folder):
    out = {}
    for path in sorted(pathlib.Path(folder).rglob("*")):
        rel = path.relative_to(folder)
        if any(part in _SKIP_DIRS for part in rel.parts) or not path.is_file():
            continue
        out[rel.as_posix()] = path.read_bytes()
    return out


def _diff(before, after):
    return sorted(rel for rel in set(before) | set(after) if before.get(rel) != after.get(rel))


def _seal(folder, writable):
    """Make every file and folder under ``folder`` read-only (or writable again)."""
    for root, dirs, files in os.walk(folder):
        for f in files:
            os.chmod(os.path.join(root, f), 0o644 if writable else 0o444)
        os.chmod(root, 0o755 if writable else 0o555)


@dataclasses.dataclass
class Outcome:
    """The result of one exercise's process: tests as [(id, passed, message)], and the
    reason the process itself gave (a timeout, a crash, a changed copy), or ""."""

    tests: list
    trouble: str = ""


def _limits():  # runs in the child, before exec
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT_LIMIT, OUTPUT_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash leaves no core file


def _read_pipe(fd, sink):
    with os.fdopen(fd, "rb") as f:
        total = 0
        while True:
            chunk = f.read(65536)
            if not chunk:
                return
            total += len(chunk)
            if total <= _PIPE_LIMIT:
                sink.append(chunk)


def _parse(stream):
    """(collected ids or None, {id: (passed, message)}, ended, problem) from the
    pipe's bytes; problem is "" unless the stream is not to be believed."""
    collected, results, ended = None, {}, False
    for line in b"".join(stream).decode("utf-8", "replace").splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            return collected, {}, False, "the results channel held a line the plugin " \
                                         "did not write"
        if ended:
            return collected, {}, False, "the results channel was written after its end"
        if "collected" in msg and collected is None:
            collected = list(msg["collected"])
        elif "test" in msg and collected is not None:
            tid = msg["test"]
            if tid not in collected or tid in results:
                return collected, {}, False, (f"the results channel reported {tid} "
                                              "twice or uncollected")
            if msg.get("outcome") != "skipped":
                results[tid] = (msg.get("outcome") == "passed", str(msg.get("message", "")))
        elif "end" in msg:
            ended = True
        else:
            return collected, {}, False, "the results channel held a message out of order"
    return collected, results, ended, ""


def _tail(path, n=400):
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - n))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return " | ".join(ln.strip() for ln in text.strip().splitlines()[-3:])


def grade_exercise(graders, stem, source, env, timeout, python=sys.executable,
                   collect_only=False):
    """Grade the student's ``source`` (bytes) of exercise ``stem`` in a sealed process
    with environment ``env``; an Outcome. With ``collect_only``, the tests are
    collected and not run (Outcome.tests lists them, none passed)."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="gpuarr-grade-"))
    try:
        return _grade_in(tmp, graders, stem, source, env, timeout, python, collect_only)
    finally:
        _seal(tmp, writable=True)
        shutil.rmtree(tmp, ignore_errors=True)


def _grade_in(tmp, graders, stem, source, env, timeout, python, collect_only):
    copy, files = tmp / "graders", tmp / "files"
    graders.private_copy(stem, copy)
    files.mkdir()
    (files / f"{stem}.py").write_bytes(source)
    before = _read_tree(tmp)
    _seal(copy, writable=False)
    _seal(files, writable=False)
    log = tmp / "output.txt"  # tmp itself stays writable for this one file
    # -s: the output goes straight to the capped log (pytest's capture would keep it
    # in a temporary file of its own, where a flood fails a print but not the run)
    cmd = [python, "-m", "pytest", f"test_{stem}.py", "-q", "-s", "-p", "no:cacheprovider",
           "-p", "gpuarr._grade_child", f"--rootdir={copy}", f"--gpuarr-exercises={files}",
           # the parent makes the passes over devices; the child grades one
           "-o", "gpuarr_min_gpus=0", "-o", "gpuarr_simulate_gpus_if_none=0"]
    if collect_only:
        cmd.append("--collect-only")
    r, w = os.pipe()
    env = {**env, FD_ENV: str(w), "PYTHONDONTWRITEBYTECODE": "1"}
    stream = []
    with open(log, "wb") as out:
        try:
            p = subprocess.Popen(cmd, cwd=copy, env=env, stdin=subprocess.DEVNULL,
                                 stdout=out, stderr=subprocess.STDOUT, pass_fds=(w,),
                                 start_new_session=True, preexec_fn=_limits)
        finally:
            os.close(w)
        reader = threading.Thread(target=_read_pipe, args=(r, stream), daemon=True)
        reader.start()
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        # whatever it started (a process of its own that holds the pipe) ends with it
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        p.wait()
        reader.join(timeout=10)
    collected, results, ended, problem = _parse(stream)
    trouble = ""
    if timed_out:
        trouble = f"timed out after {timeout:g} s (a loop that never ends?)"
    elif p.returncode == -signal.SIGXFSZ or (log.is_file()
                                             and log.stat().st_size >= OUTPUT_LIMIT):
        trouble = f"wrote more than {OUTPUT_LIMIT >> 20} MiB of output"
    elif p.returncode < 0:
        sig = -p.returncode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "?"
        trouble = f"the process crashed (signal {sig}, {name})"
    elif problem:
        trouble = problem
    elif collected is None:
        trouble = "the graders did not run: " + _tail(log)
    elif not ended:
        trouble = f"the process ended before its tests did (exit status {p.returncode})"
    changed = _diff(before, {k: v for k, v in _read_tree(tmp).items()
                             if k != "output.txt"})
    if changed:
        trouble = ("the graded code changed the graders' files: " + ", ".join(changed)
                   + (f"; {trouble}" if trouble else ""))
        results = {}  # nothing of a run whose graders were rewritten is believed
    tests = []
    for tid in collected or []:
        if tid in results:
            ok, msg = results[tid]
            tests.append((tid, ok and not changed, msg))
        elif problem or changed or tid not in results:
            tests.append((tid, False, ""))
    # a skipped test (its devices absent here) is neither passed nor failed
    skipped = {tid for tid in (collected or []) if tid not in results} if (
        ended and not trouble and not collect_only) else set()
    tests = [t for t in tests if t[0] not in skipped]
    return Outcome(tests, trouble)
