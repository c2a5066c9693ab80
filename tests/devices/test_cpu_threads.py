"""The CPU thread pool: large loops split between threads give the same answers as
one thread, also in a child forked after the pool started."""
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuarr


def test_large_loops_give_the_same_values_as_numpy(device):
    x = np.random.default_rng(0).random(1_000_003).astype(np.float32)
    g = gpuarr.asarray(x, device=device)
    np.testing.assert_array_equal((g * 3 + 1).numpy(), x * np.float32(3) + np.float32(1))
    np.testing.assert_array_equal(g[::-3].sqrt().numpy(), np.sqrt(x[::-3]))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_can_run_large_loops():
    x = gpuarr.arange(500_000, dtype="float64")
    (x + 1).numpy()  # the pool's workers exist in the parent now
    pid = os.fork()
    if pid == 0:
        try:
            ok = float((x * 2).sum()) == 2.0 * 499_999 * 500_000 / 2
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_one_thread_and_many_threads_agree():
    code = ("import numpy as np, gpuarr as ga; x = ga.asarray(np.linspace(-3, 3, 300_001,"
            " dtype=np.float32)); print(repr((x.exp() * x + 2).sum().item()),"
            " repr(x.log().numpy()[1000::7000].tolist()))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    outs = []
    for n in ("1", "2", "3"):
        env["GPUARR_NUM_THREADS"] = n
        outs.append(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert outs[0] == outs[1] == outs[2]


def test_one_thread_runtime_no_openmp_is_linked():
    """The pool is the CPU's only thread runtime: _core needs no libgomp and calls no
    OpenMP entry point (GOMP_parallel and friends are what `#pragma omp` compiles to)."""
    import shutil
    import subprocess

    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    so = gpuarr._core.__file__
    dyn = subprocess.run(["readelf", "-d", so], capture_output=True, text=True, check=True)
    assert "gomp" not in dyn.stdout
    syms = subprocess.run(["readelf", "-W", "--dyn-syms", so], capture_output=True,
                          text=True, check=True)
    assert "GOMP_" not in syms.stdout and "omp_get" not in syms.stdout


@pytest.mark.parametrize("n", [1, 1000, 300_000])
def test_pool_loops_match_numpy_whatever_the_size(n):
    """Scans, random numbers and gathers that moved from OpenMP to the pool: the same
    results below and above the size where the pool starts."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32)
    x = gpuarr.asarray(a)
    np.testing.assert_allclose(gpuarr.cumulative_sum(x).numpy(), np.cumsum(a, dtype=np.float64),
                               rtol=1e-5, atol=1e-3)
    m = gpuarr.asarray(a.reshape(-1, 1) if n < 1000 else a.reshape(-1, 100 if n == 1000 else 300))
    np.testing.assert_allclose(gpuarr.cumulative_sum(m, axis=1).numpy(),
                               np.cumsum(m.numpy(), axis=1, dtype=np.float64), rtol=1e-5, atol=1e-3)
    idx = rng.integers(0, n, size=n)
    np.testing.assert_array_equal(x[gpuarr.asarray(idx)].numpy(), a[idx])
    gpuarr.random.seed(7)
    r1 = gpuarr.random.uniform(size=n).numpy()
    gpuarr.random.seed(7)
    r2 = gpuarr.random.uniform(size=n + 5).numpy()
    np.testing.assert_array_equal(r1, r2[:n])  # element i depends on i alone
    assert ((r1 >= 0) & (r1 < 1)).all()
    ia = rng.integers(-5, 5, size=(40, 30)).astype(np.int64)
    ib = rng.integers(-5, 5, size=(30, 50)).astype(np.int64)
    np.testing.assert_array_equal((gpuarr.asarray(ia) @ gpuarr.asarray(ib)).numpy(), ia @ ib)
