"""The emulated CUDA queue is bounded as a GPU's launch queue is (issue 44, item 5).

A GPU holds about 1,024 pending launches; past that the launching host thread waits.
The emulator's stream queues hold GPUARR_CUDA_EMULATE_QUEUE_DEPTH tasks (default 1024)
and make the host wait the same way, so a loop of small operations cannot grow the
process without bound. Each case runs in a fresh interpreter on two emulated devices
(the depth is read once per process) and reads the emulator's own counters through
its test-only export gpuarr_cuda_emu_queue_stats (depth, high-water mark).
"""
import os
import subprocess
import sys
import textwrap

import pytest

import gpuarr
from conftest import needs_emulated_plugin

PKG_DIR = os.path.dirname(os.path.abspath(gpuarr._core.__file__))

# each test starts its own interpreters (tests/conftest.py: CI runs the file in one stage)
pytestmark = [pytest.mark.own_processes, needs_emulated_plugin]

PRELUDE = textwrap.dedent("""
    import ctypes, os, resource
    import numpy as np
    import gpuarr
    assert gpuarr._core._gpu_mode()[0] == "emulated", gpuarr._core._gpu_mode()
    lib = ctypes.CDLL(os.path.join(os.path.dirname(gpuarr._core.__file__),
                                   "libgpuarr_cuda_emu.so"))

    def queue_stats():
        depth, high = ctypes.c_size_t(), ctypes.c_size_t()
        lib.gpuarr_cuda_emu_queue_stats(ctypes.byref(depth), ctypes.byref(high))
        return depth.value, high.value

    def peak_rss_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
""")


def emulated(code, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUARR_")}
    e["PYTHONPATH"] = os.path.dirname(PKG_DIR) + os.pathsep + e.get("PYTHONPATH", "")
    e["GPUARR_CUDA_EMULATE"] = "2"
    e.update(env)
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                       capture_output=True, text=True, env=e, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_40000_queued_adds_stay_under_a_fixed_memory_bound_and_are_right():
    # Unbounded, each queued launch held ~1.3 KB: these 40,000 adds grew the process
    # by ~50 MB. Bounded at 1,024 the queue holds ~1.3 MB; 16 MB leaves room for the
    # allocator's own growth on a busy machine.
    r = emulated("""
        x = gpuarr.zeros(16, dtype="float32", device=gpuarr.gpu(0))
        x += 1
        gpuarr.synchronize()
        before = peak_rss_mb()
        for _ in range(40000):
            x += 1
        grown = peak_rss_mb() - before
        gpuarr.synchronize()
        print(*queue_stats(), round(grown, 1), float(x.numpy().min()),
              float(x.numpy().max()))
    """)
    depth, high, grown, lo, hi = r.stdout.split()
    assert int(depth) == 1024, r.stdout
    assert 1 <= int(high) <= 1024, r.stdout
    assert float(grown) < 16, f"peak RSS grew {grown} MB over 40,000 queued adds"
    assert float(lo) == float(hi) == 40001.0, r.stdout


def test_a_full_queue_makes_the_host_wait_at_the_set_depth():
    # Adds of 2^18 elements take the emulator far longer than the host takes to queue
    # them, so the host reaches the bound; the queue never holds more than it.
    r = emulated("""
        n = 1 << 18
        x = gpuarr.zeros(n, dtype="float32", device=gpuarr.gpu(0))
        for _ in range(64):
            x += 1
        gpuarr.synchronize()
        print(*queue_stats(), int((x.numpy() == 64).sum()) == n)
    """, GPUARR_CUDA_EMULATE_QUEUE_DEPTH="8")
    assert r.stdout.split() == ["8", "8", "True"], r.stdout + r.stderr


@pytest.mark.parametrize("value", ["abc", "0", "-3", "1.5", "2000000"])
def test_a_bad_queue_depth_is_reported_and_the_default_used(value):
    r = emulated("""
        x = gpuarr.ones(4, device=gpuarr.gpu(0)) + 1
        print(queue_stats()[0], float(x.numpy().sum()))
    """, GPUARR_CUDA_EMULATE_QUEUE_DEPTH=value)
    assert r.stdout.split() == ["1024", "8.0"], r.stdout
    assert (f"GPUARR_CUDA_EMULATE_QUEUE_DEPTH={value} is not a queue depth from 1 to "
            "1048576; using 1024") in r.stderr, r.stderr
