"""The test report of the prepared GPU run (tools/gpu_run.py): a pytest plugin, and the
reader that turns its file into the summary's numbers.

As a plugin (``-p gpu_run_report`` with tools/ on PYTHONPATH, ``GPU_RUN_REPORT=path``)
it appends one JSON line per event and flushes it at once, so the file says what ran
even when the run is stopped from outside (a time limit kills pytest before a JUnit
file would be written):

    {"start": nodeid}                                a test began
    {"test": nodeid, "when": "call", "outcome": "passed", "s": 0.01}
    {"test": ..., "outcome": "failed", "message": "...the traceback's end..."}
    {"test": ..., "outcome": "skipped", "reason": "needs two GPUs (..."}
    {"collect_error": nodeid, "message": ...}
    {"end": exitstatus}

Under pytest-xdist only the controller writes (it sees every worker's reports).
"""
from __future__ import annotations

import ast
import json
import os
from collections import Counter
from typing import Dict, List, Optional

MESSAGE_CHARS = 3000  # the end of a failure's traceback: the assertion and its values

_out = None


def _write(rec: Dict[str, object]) -> None:
    if _out is not None:
        _out.write(json.dumps(rec) + "\n")
        _out.flush()


def pytest_configure(config):
    global _out
    path = os.environ.get("GPU_RUN_REPORT")
    if path and not hasattr(config, "workerinput"):  # an xdist worker: the controller writes
        _out = open(path, "a", encoding="utf-8")


def pytest_runtest_logstart(nodeid, location):
    _write({"start": nodeid})


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def pytest_runtest_logreport(report):
    # one line per test (its call, or the phase that did not pass), plus one per
    # failing setup/teardown around a passed call (counted as an error, as pytest does)
    if report.when != "call" and report.passed:
        return
    rec: Dict[str, object] = {"test": report.nodeid, "when": report.when,
                              "outcome": report.outcome, "s": round(report.duration, 3)}
    if hasattr(report, "wasxfail"):
        rec["outcome"] = "xfailed" if report.skipped else "xpassed"
    elif report.skipped:
        rec["reason"] = _skip_reason(report)
    elif report.failed:
        rec["outcome"] = "failed" if report.when == "call" else "error"
        rec["message"] = str(report.longrepr)[-MESSAGE_CHARS:]
    _write(rec)


def pytest_collectreport(report):
    if report.failed:
        _write({"collect_error": report.nodeid,
                "message": str(report.longrepr)[-MESSAGE_CHARS:]})


def pytest_sessionfinish(session, exitstatus):
    global _out
    _write({"end": int(exitstatus)})
    if _out is not None:
        _out.close()
        _out = None


# --- the reader ---------------------------------------------------------------------------


def allowed_skip_reasons(conftest: str) -> List[str]:
    """ALLOWED_SKIP_REASONS of tests/conftest.py, read without importing it (importing
    would import gpuarr)."""
    try:
        tree = ast.parse(open(conftest, encoding="utf-8").read())
    except (OSError, SyntaxError):
        return []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "ALLOWED_SKIP_REASONS" for t in node.targets):
            try:
                return list(ast.literal_eval(node.value))
            except ValueError:
                return []
    return []


def read(path: str, conftest: Optional[str] = None) -> Dict[str, object]:
    """The counts, the failures, the skip reasons and the tests that were still running
    when the run stopped, from a report file (missing or partial files give what they
    hold)."""
    counts: Counter = Counter()
    failures: List[Dict[str, str]] = []
    skips: Counter = Counter()
    started, finished = [], set()
    ended = None
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut by a kill
        if "start" in rec:
            started.append(rec["start"])
        elif "test" in rec:
            finished.add(rec["test"])
            counts[rec["outcome"]] += 1
            if rec["outcome"] in ("failed", "error", "xpassed"):
                failures.append({"test": rec["test"], "outcome": rec["outcome"],
                                 "message": rec.get("message", "")})
            elif rec["outcome"] == "skipped":
                skips[rec.get("reason", "")] += 1
        elif "collect_error" in rec:
            counts["collection error"] += 1
            failures.append({"test": rec["collect_error"], "outcome": "collection error",
                             "message": rec.get("message", "")})
        elif "end" in rec:
            ended = rec["end"]
    allowed = allowed_skip_reasons(conftest) if conftest else []
    unlisted = {r: n for r, n in skips.items()
                if allowed and not any(r.startswith(a) for a in allowed)}
    return {"counts": dict(counts), "failures": failures, "skips": dict(skips),
            "unlisted_skips": unlisted, "ended": ended,
            "running": [t for t in dict.fromkeys(started) if t not in finished]}


def last_line(message: str) -> str:
    """The line of a traceback that says what went wrong (pytest's 'E   ...' lines)."""
    lines = [ln for ln in message.splitlines() if ln.strip()]
    errors = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    text = errors[0] if errors else (lines[-1].strip() if lines else "")
    return text[:300]
