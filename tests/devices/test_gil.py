"""Long CPU work releases the GIL, and the core holds up without it: another Python
thread keeps running beside a large matmul or elementwise chain, and eight threads
running every kind of operation at once get NumPy's answers and an exact ledger."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import gpuarr
from conftest import DEVICES

# Whether a second Python thread runs while gpuarr computes, measured in CPU time so
# that a busy machine cannot fail it: the free thread's CPU seconds during the work, as
# a share of the process's CPU seconds then. Both threads want a whole core, and the
# scheduler shares the cores between them alike however busy the machine is, so a
# released GIL gives about 0.5 (one kernel thread, one free thread). A GIL held through
# the kernels lets the free thread run only between two calls, a switch interval (5 ms)
# at a time: 0.03 beside four 0.3 s calls that hold it, 0.24 beside sixty 20 ms ones
# (sum(range(n)) in place of the kernels, on this 2-core machine at a load of 27,
# where the released GIL measured 0.50 and 0.53). The wall-clock rate this test
# measured before (0.08-0.14 and 0.34-0.43 held, 0.7-0.9 released, on an idle
# machine) failed on a busy one.
SHARE_SCRIPT = r"""
import threading, time
import gpuarr as ga

def spin(go, stop, out):
    go.wait()
    c0 = time.thread_time()
    while not stop.is_set():
        pass
    out.append(time.thread_time() - c0)

def share(work):
    go, stop, out = threading.Event(), threading.Event(), []
    t = threading.Thread(target=spin, args=(go, stop, out)); t.start()
    p0 = time.process_time(); go.set(); work(); stop.set(); t.join()
    return out[0] / (time.process_time() - p0)

a = ga.rand(1000, 1000); x = ga.rand(1 << 22)
def matmul():
    for _ in range(4): a @ a
def chain():
    for _ in range(6): ((x * 2 + 1).exp() * x).sum()
print(share(matmul), share(chain))
"""


def _shares():
    env = dict(os.environ, GPUARR_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("GPUARR_SIMULATE_GPUS", None)
    env.pop("GPUARR_CUDA_EMULATE", None)
    out = subprocess.run([sys.executable, "-c", SHARE_SCRIPT], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return [float(v) for v in out.stdout.split()]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs a second core for the free thread")
def test_a_python_thread_gets_its_share_of_the_cpu_beside_large_cpu_work():
    best = [0.0, 0.0]
    for _ in range(3):  # a moment's unfairness of the scheduler: the best of three
        best = [max(b, r) for b, r in zip(best, _shares())]
        if min(best) > 0.4:
            break
    assert best[0] > 0.4, f"matmul: the free thread had {best[0]:.0%} of the CPU time"
    assert best[1] > 0.4, f"elementwise chain: the free thread had {best[1]:.0%} of the CPU time"


def _worker(device, seed, errors, counts):
    rng = np.random.default_rng(seed)
    try:
        for _ in range(6):
            a = rng.standard_normal((64, 300)).astype(np.float32)
            b = rng.standard_normal((300, 40)).astype(np.float32)
            big = rng.standard_normal(1 << 16).astype(np.float64)
            x = gpuarr.asarray(a, device=device)
            y = gpuarr.asarray(b, device=device)
            z = gpuarr.asarray(big, device=device)
            idx = rng.integers(0, big.size, size=5000)
            results = {
                "matmul": ((x @ y).numpy(), a @ b, 1e-4),
                "chain": (((z * 2 + 1).exp() * z).numpy(), (np.exp(big * 2 + 1) * big), 1e-12),
                "sum": (z.sum(axis=0).numpy(), big.sum(), 1e-9),
                "cumsum": (gpuarr.cumulative_sum(z).numpy(), np.cumsum(big), 1e-9),
                "gather": (z[gpuarr.asarray(idx, device=device)].numpy(), big[idx], 0),
                "sort": (gpuarr.sort(z).numpy(), np.sort(big), 0)
                if gpuarr.device_kind(device) in ("cpu", "simulated") else None,
            }
            for name, r in results.items():
                if r is None:
                    continue
                got, want, rtol = r
                np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=name)
            if gpuarr.device_kind(device) != "cpu":
                # uploads: a, b, big, idx; reads: one .numpy() per result
                counts.append((4, sum(r is not None for r in results.values())))
    except Exception as e:  # noqa: BLE001 - reported by the test
        errors.append(e)


def test_eight_threads_every_kind_of_operation_on_every_device():
    threads, errors, counts = [], [], []
    gpuarr.synchronize()
    gpuarr.reset_transfer_stats()
    for i in range(8):
        dev = DEVICES[i % len(DEVICES)]
        threads.append(threading.Thread(target=_worker, args=(dev, i, errors, counts)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    s = gpuarr.transfer_stats()
    assert s.h2d_count == sum(c[0] for c in counts)
    assert s.d2h_count == sum(c[1] for c in counts)
