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

# The free thread's rate while another thread computes, as a fraction of its rate
# while the other thread sleeps. With the GIL held through the kernels this was 0.08-0.14
# (matmul) and 0.34-0.43 (elementwise) on CI's 2-core machine; released, 0.7-0.9.
RATE_SCRIPT = r"""
import threading, time
import gpuarr as ga

def count(stop, out):
    n = 0
    while not stop.is_set():
        n += 1
    out.append(n)

def rate(work):
    stop = threading.Event(); out = []
    t = threading.Thread(target=count, args=(stop, out)); t.start()
    t0 = time.perf_counter(); work(); dt = time.perf_counter() - t0
    stop.set(); t.join()
    return out[0] / dt

a = ga.rand(1500, 1500); x = ga.rand(1 << 23)
def idle(): time.sleep(0.5)
def matmul():
    for _ in range(4): a @ a
def chain():
    for _ in range(6): ((x * 2 + 1).exp() * x).sum()
base = rate(idle)
print(rate(matmul) / base, rate(chain) / base)
"""


def _rates():
    env = dict(os.environ, GPUARR_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("GPUARR_SIMULATE_GPUS", None)
    env.pop("GPUARR_CUDA_EMULATE", None)
    out = subprocess.run([sys.executable, "-c", RATE_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return [float(v) for v in out.stdout.split()]


@pytest.mark.serial  # measures a thread's rate: needs both cores to itself
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs a second core for the free thread")
def test_a_python_thread_keeps_over_half_its_rate_beside_large_cpu_work():
    # a shared CI machine can steal a core for a moment: the best of three runs counts
    best = [0.0, 0.0]
    for _ in range(3):
        best = [max(b, r) for b, r in zip(best, _rates())]
        if min(best) > 0.5:
            break
    assert best[0] > 0.5, f"matmul: the free thread kept {best[0]:.0%} of its rate"
    assert best[1] > 0.5, f"elementwise chain: the free thread kept {best[1]:.0%} of its rate"


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
