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
