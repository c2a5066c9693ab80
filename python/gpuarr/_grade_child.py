"""The pytest plugin of one sealed grading process (``python -m gpuarr.grade`` loads it
with ``-p gpuarr._grade_child`` in each process it starts; ``_grade_seal`` is the other
end).

The results go to the grading parent through a pipe that the parent opened and handed
down as a file descriptor (``GPUARR_GRADE_RESULT_FD``), not through a file: the
student's code has no path to rewrite, and the parent reads what this plugin wrote as
it happened. The plugin takes the descriptor in ``pytest_configure``, before any
graded code is imported (graded modules load inside the tests, through the
``gpuarr_student`` fixture), removes its number from the environment, and makes it
non-inheritable. Graded code could reach the descriptor only through ``os``, which the
static check refuses; the parent also refuses a stream that reports a test twice or
names one that was not collected.

One message per line, JSON: ``{"collected": [test ids]}`` once collection is done
(before any student code has run), ``{"test": id, "outcome": ..., "message": ...}``
after each test's teardown, and ``{"end": exit status}`` last. Right after the last
message the process ends with ``os._exit``: no thread the student started, no atexit
hook and no finaliser runs after the result is sent.
"""
import json
import os
import sys

import pytest

FD_ENV = "GPUARR_GRADE_RESULT_FD"
_MESSAGE_LIMIT = 500  # characters of a failure's message sent to the parent
_state: dict = {"fd": None, "outcomes": {}, "messages": {}}


def _send(obj):
    fd = _state["fd"]
    if fd is None:
        return
    data = (json.dumps(obj) + "\n").encode("utf-8", "replace")
    while data:
        data = data[os.write(fd, data):]


def pytest_configure(config):
    fd = os.environ.pop(FD_ENV, None)
    if fd is None:
        raise pytest.UsageError(f"gpuarr._grade_child runs only inside python -m "
                                f"gpuarr.grade (no {FD_ENV})")
    _state["fd"] = int(fd)
    os.set_inheritable(_state["fd"], False)  # no process the tests start gets it


def pytest_collection_finish(session):
    _send({"collected": [item.nodeid for item in session.items]})


def _message(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    # the first line that says something ("AssertionError:" alone, as NumPy's
    # messages begin, does not): the table shows one line per failing exercise
    lines = [ln.strip().removeprefix("AssertionError:").strip() for ln in text.splitlines()]
    text = next((ln for ln in lines if ln), "")
    if report.when != "call":
        text = f"(in the test's {report.when}) {text}"
    return text[:_MESSAGE_LIMIT]


def pytest_runtest_logreport(report):
    outcomes = _state["outcomes"]
    if report.failed and outcomes.get(report.nodeid) != "failed":
        outcomes[report.nodeid] = "failed"
        _state["messages"][report.nodeid] = _message(report)
    elif report.skipped and report.nodeid not in outcomes:
        outcomes[report.nodeid] = "skipped"
    elif report.when == "call" and report.passed and report.nodeid not in outcomes:
        outcomes[report.nodeid] = "passed"
    if report.when == "teardown":
        outcome = outcomes.get(report.nodeid, "failed")
        _send({"test": report.nodeid, "outcome": outcome,
               "message": _state["messages"].get(report.nodeid, "")})


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _send({"end": int(exitstatus)})
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a stream the graded code closed or replaced
            pass
    # Nothing of the graded code may run after its result is sent (a thread that
    # never ends, an atexit hook): end here, without the interpreter's shutdown.
    os._exit(0)
