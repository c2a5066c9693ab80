"""The leak report that names its test (csrc/runtime/ga_live.c, GPUARR_LEAK_REPORT_DIR): an
array kept alive past interpreter shutdown (here by a daemon thread, the way a
thread pool's frame can hold one) is listed after exit with the tag of the test that
made it; a process that frees everything writes no report. CI sets the folder for
every test stage and fails a stage that leaves a report (.ci/lsan_filter.py)."""
import os
import subprocess
import sys

import gpuarr

SCRIPT = r"""
import os, sys, threading, time
import gpuarr
gpuarr._core._live_storages_tag("test A")
a = gpuarr.ones(3, device=sys.argv[1])
gpuarr._core._live_storages_tag("test B")
b = gpuarr.zeros(5, device=sys.argv[1])
print(len(gpuarr._core._live_storages()))
del a  # freed before exit: never listed
if sys.argv[2] == "keep":
    started = threading.Event()
    def hold(x):
        started.set()
        time.sleep(60)
    threading.Thread(target=hold, args=(b,), daemon=True).start()
    started.wait()
"""


def _run(tmp_path, device, mode):
    env = dict(os.environ, GPUARR_LEAK_REPORT_DIR=str(tmp_path),
               GPUARR_LEAK_TAG="import in the subprocess")
    spec = "cpu" if device == gpuarr.cpu() else f"gpu:{device.index}"
    r = subprocess.run([sys.executable, "-c", SCRIPT, spec, mode], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def test_an_array_alive_at_exit_is_reported_with_its_test(tmp_path, device):
    r = _run(tmp_path, device, "keep")
    reports = list(tmp_path.glob("live.*"))
    assert len(reports) == 1, r.stderr
    text = reports[0].read_text()
    assert f"20 bytes on {device!r}, made during test B" in text, text
    assert "test A" not in text  # `a` was freed before exit
    assert "still alive at exit" in r.stderr


def test_a_process_that_frees_everything_writes_no_report(tmp_path, device):
    r = _run(tmp_path, device, "free")
    assert r.stdout.split()[-1] == "2"  # both recorded while alive
    assert list(tmp_path.glob("live.*")) == []
