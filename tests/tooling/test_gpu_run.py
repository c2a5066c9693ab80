"""The prepared GPU run (tools/gpu_run.py): its test report survives a kill, its
deadline skips steps with a note instead of running over, it always leaves a summary,
and --check / --collect read that summary. CI's rehearsal (.ci/gpu_rehearsal.sh) runs
the whole script on emulated CUDA; these are the pieces, in seconds, with no device."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import gpuarr

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools")
sys.path.insert(0, TOOLS)

import gpu_run  # noqa: E402
import gpu_run_report  # noqa: E402

pytestmark = pytest.mark.skipif(
    gpuarr._core._gpu_mode()[0] != "none",
    reason="checked once, in the suite run without GPUs (no device is used)")

CONFTEST = os.path.join(ROOT, "tests", "conftest.py")


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE", "OUT")}
    env["PYTHONPATH"] = os.pathsep.join([TOOLS, env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def test_report_plugin_writes_each_outcome_as_it_happens(tmp_path):
    (tmp_path / "test_some.py").write_text(textwrap.dedent("""
        import pytest
        def test_ok(): pass
        def test_bad(): assert 1 + 1 == 3, "arithmetic"
        def test_skip(): pytest.skip("needs a GPU (here: none)")
        def test_odd_skip(): pytest.skip("not built yet")
        @pytest.mark.xfail(strict=False, reason="known")
        def test_xf(): assert False
    """))
    report = tmp_path / "r.jsonl"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "gpu_run_report", str(tmp_path / "test_some.py")],
                       cwd=tmp_path, env=_env(GPU_RUN_REPORT=str(report),
                                           PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    rep = gpu_run_report.read(str(report), CONFTEST)
    assert rep["counts"] == {"passed": 1, "failed": 1, "skipped": 2, "xfailed": 1}, rep
    assert rep["running"] == [] and rep["ended"] == 1
    (fail,) = rep["failures"]
    assert fail["test"].endswith("test_bad")
    assert "arithmetic" in gpu_run_report.last_line(fail["message"])
    # the allow-list of tests/conftest.py, read without importing it
    assert list(rep["unlisted_skips"]) == ["not built yet"]

    # a run killed in the middle of a test: the file says which test was running
    lines = report.read_text().splitlines()
    cut = 1 + next(i for i, ln in enumerate(lines) if '"start"' in ln and "test_bad" in ln)
    report.write_text("\n".join(lines[:cut]) + '\n{"test": "half a li')
    rep = gpu_run_report.read(str(report))
    assert rep["running"] == [fail["test"]] and rep["ended"] is None, rep


def _run(tmp_path, *args):
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, os.path.join(TOOLS, "gpu_run.py"), "--out", str(out),
                        *args], cwd=ROOT, env=_env(), capture_output=True, text=True,
                       timeout=120)
    return r, out


def test_a_spent_deadline_skips_the_steps_with_a_note_and_exits_0(tmp_path):
    r, out = _run(tmp_path, "--rehearse", "--prebuilt", "--deadline", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    text = (out / "summary.md").read_text()
    for step in ("build", "smoke", "tests", "bench", "sanitizer"):
        assert f"| {step} | skipped | 0 | " in text, text
    assert "s left before the deadline; the step needs at least" in text
    assert len(os.listdir(out)) <= 8
    # --check (CI) fails such a rehearsal and says why
    c = subprocess.run([sys.executable, os.path.join(TOOLS, "gpu_run.py"), "--check",
                        str(out)], capture_output=True, text=True, timeout=60)
    assert c.returncode == 1 and "step tests: skipped" in c.stdout, c.stdout


def _fake_out(tmp_path, steps, tests, files=()):
    out = tmp_path / "fake"
    out.mkdir()
    state = {"rehearse": True, "gpu": "NVIDIA H100 80GB HBM3", "date": "2026-12-01",
             "steps": steps, "tests": tests, "seconds": 99.0}
    (out / "summary.md").write_text(f"# run\n<!-- gpu_run: {json.dumps(state)} -->\n")
    for name in ("tests.jsonl", "bench.json", "bench.md", "sanitizer.txt", "build.log",
                 "run.log", *files):
        (out / name).write_text("")
    return out


def test_check_passes_a_good_rehearsal_and_fails_a_failed_test(tmp_path):
    steps = {s: "ok" for s in gpu_run.STEPS}
    steps["sanitizer"] = "absent"
    good = _fake_out(tmp_path, steps, {"passed": 30})
    assert gpu_run.check(str(good)) == 0
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.md").write_text((good / "summary.md").read_text().replace(
        '"passed": 30', '"passed": 29, "failed": 1'))
    assert gpu_run.check(str(bad)) == 1


def test_check_fails_more_than_eight_files(tmp_path):
    steps = {s: "ok" for s in gpu_run.STEPS}
    steps["sanitizer"] = "absent"
    out = _fake_out(tmp_path, steps, {"passed": 3}, files=("cuda_report.txt", "extra.txt"))
    assert gpu_run.check(str(out)) == 1


def test_collect_copies_the_results_under_the_date_and_the_gpu(tmp_path):
    out = _fake_out(tmp_path, {}, {})
    (out / "tests.jsonl").write_text(
        '{"start": "t::a"}\n{"test": "t::a", "outcome": "passed"}\n'
        '{"test": "t::b", "outcome": "failed", "message": "E   boom"}\n')
    dest = tmp_path / "results"
    assert gpu_run.collect(str(out), str(dest)) == 0
    got = dest / "2026-12-01-h100-80gb-hbm3"
    assert sorted(os.listdir(got)) == ["bench.json", "bench.md", "sanitizer.txt",
                                       "summary.md", "tests-not-passed.jsonl"]
    assert [json.loads(ln)["test"] for ln in
            (got / "tests-not-passed.jsonl").read_text().splitlines()] == ["t::b"]


@pytest.mark.parametrize("rc, out, timed_out, want", [
    (0, "1 passed\n========= ERROR SUMMARY: 0 errors\n", False, "clean"),
    (86, "========= Invalid __global__ read of size 4\n========= ERROR SUMMARY: 1 error\n",
     False, "ERRORS FOUND"),
    (1, "========= Device not supported\n========= Error 999\n", False,
     "could not attach on this machine"),
    (-15, "========= Invalid __global__ write\n", True, "stopped at its time limit"),
    (1, "1 failed\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n",
     False, "tests failed under the tool (exit 1)"),
])
def test_sanitizer_outcomes_are_told_apart(rc, out, timed_out, want):
    state, summary = gpu_run.sanitizer_state(rc, out, timed_out)
    assert state.startswith(want), (state, summary)


def test_a_carried_plugin_is_used_only_for_these_sources_and_this_gpu(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_run, "CARRY", str(tmp_path))
    assert gpu_run.carried_plugin("90-real")[0] is False  # nothing carried
    (tmp_path / "libgpuarr_cuda.so").write_bytes(b"\x7fELF")
    stamp = {"sources": gpu_run.source_hash(), "CUDAARCHS": "90-real", "nvcc": "13.0.88"}
    (tmp_path / "stamp.json").write_text(json.dumps(stamp))
    use, why = gpu_run.carried_plugin("90-real")
    assert use and "sources match" in why
    use, why = gpu_run.carried_plugin("100-real")
    assert not use and "this GPU needs 100-real" in why
    (tmp_path / "stamp.json").write_text(json.dumps(dict(stamp, sources="0" * 64)))
    use, why = gpu_run.carried_plugin("90-real")
    assert not use and "sources differ" in why


def test_a_step_over_its_limit_is_ended_with_its_children(tmp_path):
    import argparse
    import time

    args = argparse.Namespace(rehearse=True, prebuilt=True, deadline=60,
                              out=str(tmp_path / "o"), steps=None)
    r = gpu_run.Run(args)
    pidfile = tmp_path / "child.pid"
    t = time.monotonic()
    rc, out, timed_out = r.run(
        ["bash", "-c", f"sleep 60 & echo $! > {pidfile}; echo started; wait"], 1.5,
        log_name="t.log")
    assert timed_out and time.monotonic() - t < 15 and "started" in out
    child = int(pidfile.read_text())
    for _ in range(50):  # the grandchild went with the group (or is a zombie)
        try:
            state = open(f"/proc/{child}/status").read()
        except OSError:
            break
        if "\nState:\tZ" in state:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"sleep {child} outlived its step")
    r.runlog.close()
