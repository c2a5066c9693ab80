"""gpuarr.testing and the pytest plugin (gpuarr_device, --gpuarr-simulate-gpus)."""
import importlib.metadata
import os
import re
import threading

import numpy as np
import pytest

import gpuarr
from gpuarr.testing import (WorkCounts, assert_allclose, assert_array_equal, assert_numpy,
                            assert_on_device, assert_transfers, assert_work, count_work,
                            describe)

pytest_plugins = ["pytester"]

# Subprocesses import the same gpuarr as these tests: installed, or a source tree.
PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))


def test_assert_allclose_passes_and_fails_for_arrays_on_any_device(device):
    x = gpuarr.asarray(np.array([1.0, 2.0, 3.0], np.float32), device=device)
    assert_allclose(x, [1.0, 2.0, 3.0000001])
    assert_allclose(x, gpuarr.asarray(np.array([1.0, 2.0, 3.0], np.float32)))
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        assert_allclose(x, [1.0, 2.0, 3.1])
    with pytest.raises(AssertionError):
        assert_allclose(x, [1.0, 2.0])


def test_assert_allclose_picks_rtol_from_the_dtype():
    x16 = gpuarr.asarray(np.array([1.0], np.float16))
    assert_allclose(x16, [1.0005])
    x64 = gpuarr.asarray(np.array([1.0]))
    with pytest.raises(AssertionError):
        assert_allclose(x64, [1.0005])
    assert_allclose(x64, [1.0005], rtol=1e-3)


def test_assert_array_equal_compares_exactly(device):
    x = gpuarr.asarray(np.array([1, 2, 3], np.int32), device=device)
    assert_array_equal(x, np.array([1, 2, 3]))
    with pytest.raises(AssertionError, match="Mismatched"):
        assert_array_equal(x, [1, 2, 4])
    with pytest.raises(AssertionError):
        assert_array_equal(x, np.array([1, 2, 3], np.int64), strict=True)


def test_nan_equals_nan_in_both_assertions(device):
    x = gpuarr.asarray(np.array([np.nan, 1.0]), device=device)
    assert_array_equal(x, [np.nan, 1.0])
    assert_allclose(x, [np.nan, 1.0])


def test_the_device_argument_checks_where_actual_lives(device):
    x = gpuarr.asarray(np.ones(2), device=device)
    assert_array_equal(x, [1.0, 1.0], device=device)
    with pytest.raises(AssertionError) as e:
        assert_allclose(x, [1.0, 1.0], device=gpuarr.gpu(9))
    # which array should live where, and never the values
    assert str(e.value) == (f"the result should be a gpuarr array on gpu(9); got a gpuarr "
                            f"array (float64, shape (2,)) on {device!r}")


def test_comparisons_do_not_count_in_the_ledger(gpu_device):
    x = gpuarr.asarray(np.ones(3), device=gpu_device)
    y = gpuarr.asarray(np.ones(3), device=gpu_device)
    x.numpy()  # one real read before
    before = gpuarr.transfer_stats()
    assert_allclose(x, y)
    assert_array_equal(x, y)
    with pytest.raises(AssertionError):
        assert_array_equal(x, [0, 0, 0])
    assert gpuarr.transfer_stats() == before
    x.numpy()  # and the ledger keeps counting afterwards
    assert gpuarr.transfer_stats().d2h_count == before.d2h_count + 1


def test_reset_after_a_hidden_comparison_gives_zero(gpu_device):
    x = gpuarr.asarray(np.ones(3), device=gpu_device)
    assert_array_equal(x, [1, 1, 1])
    gpuarr.reset_transfer_stats()
    assert gpuarr.transfer_stats() == gpuarr.TransferStats()
    x.numpy()
    assert gpuarr.transfer_stats().d2h_count == 1


def test_assert_transfers_passes_within_the_limits(gpu_device):
    x = gpuarr.asarray(np.ones(3), device=gpu_device)
    with assert_transfers(max_h2d=0, max_d2h=1, max_d2d=0) as t:
        x.numpy()
    assert t.d2h_count == 1


def test_assert_transfers_fails_with_a_readable_report(gpu_device):
    x = gpuarr.asarray(np.ones(3), device=gpu_device)
    with pytest.raises(AssertionError) as e:
        with assert_transfers(max_d2h=1):
            for _ in range(3):
                x.numpy()
    msg = str(e.value)
    assert "3 device->host copies (at most 1 allowed)" in msg
    assert "device->host: 3 copies, 72 bytes" in msg


def _read(x):
    return x.numpy()


def test_assert_transfers_names_the_line_of_each_copy(gpu_device):
    x = gpuarr.asarray(np.ones(3), device=gpu_device)
    with pytest.raises(AssertionError) as e:
        with assert_transfers(max_d2h=1):
            for _ in range(2):
                _read(x)
            float(x.sum())
    msg = str(e.value)
    assert "3 device->host copies (at most 1 allowed)" in msg
    assert "test_testing_helpers.py:" in msg
    assert ": 2 device->host copies\n      return x.numpy()" in msg
    assert ": 1 device->host copy\n      float(x.sum())" in msg


def test_assert_transfers_limits_bytes(gpu_device):
    x = gpuarr.asarray(np.ones(64, np.float32), device=gpu_device)
    with assert_transfers(max_d2h_bytes=256, max_h2d_bytes=0):
        x.numpy()
    with pytest.raises(AssertionError, match=r"256 bytes device->host \(at most 255 allowed\)"):
        with assert_transfers(max_d2h_bytes=255):
            x.numpy()
    with pytest.raises(AssertionError, match=r"12 bytes host->device \(at most 0 allowed\)"):
        with assert_transfers(max_h2d_bytes=0):
            gpuarr.asarray(np.ones(3, np.float32), device=gpu_device)


def test_grader_failures_hide_gpuarr_testing_frames(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", PYDIR)
    monkeypatch.setenv("GPUARR_SIMULATE_GPUS", "1")
    monkeypatch.delenv("GPUARR_CUDA_EMULATE", raising=False)
    pytester.makepyfile("""
import numpy as np, gpuarr
from gpuarr.testing import assert_transfers, assert_allclose

def test_budget():
    x = gpuarr.asarray(np.ones(3), device=gpuarr.gpu(0))
    with assert_transfers(max_d2h=0):
        x.numpy()

def test_place():
    assert_allclose(gpuarr.ones(2), [1, 1], device=gpuarr.gpu(0))
""")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    out = r.stdout.str()
    assert "2 failed" in out
    assert "gpuarr/testing.py" not in out and "contextlib" not in out, out


def test_assert_transfers_limits_h2d_and_d2d(two_gpus):
    g0, g1 = two_gpus
    with pytest.raises(AssertionError, match="host->device"):
        with assert_transfers(max_h2d=0):
            x = gpuarr.asarray(np.ones(2), device=g0)
    with pytest.raises(AssertionError, match="device->device"):
        with assert_transfers(max_d2d=0):
            x.to(g1)


def test_assert_transfers_does_not_hide_the_blocks_own_error():
    with pytest.raises(KeyError):
        with assert_transfers(max_d2h=0):
            raise KeyError("boom")


def test_assert_transfers_with_no_limits_never_fails(gpu_device):
    with assert_transfers():
        gpuarr.asarray(np.ones(2), device=gpu_device).numpy()


# --- the pytest plugin ------------------------------------------------------------------

def _plugin_args():
    eps = importlib.metadata.entry_points(group="pytest11")
    installed = any(ep.value == "gpuarr.pytest_plugin" for ep in eps)
    return [] if installed else ["-p", "gpuarr.pytest_plugin"]


DEVICE_TEST = """
import gpuarr

def test_runs_on(gpuarr_device):
    x = gpuarr.asarray([1.0, 2.0], device=gpuarr_device)
    assert x.device == gpuarr_device
"""


@pytest.fixture
def child(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", PYDIR)
    for k in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE"):
        monkeypatch.delenv(k, raising=False)
    return pytester


def test_plugin_option_simulates_gpus_and_the_fixture_covers_every_device(child):
    child.makepyfile(DEVICE_TEST)
    r = child.runpytest_subprocess(*_plugin_args(), "--gpuarr-simulate-gpus=2", "-v")
    r.assert_outcomes(passed=3)
    r.stdout.fnmatch_lines(["*gpuarr: 2 GPUs (simulated)*", "*test_runs_on?cpu(0)? PASSED*",
                            "*test_runs_on?gpu(0)? PASSED*", "*test_runs_on?gpu(1)? PASSED*"])


def test_plugin_option_takes_effect_before_conftest_asks_for_devices(child):
    child.makeconftest("import gpuarr\nN = gpuarr.num_gpus()\n")
    child.makepyfile("import conftest\n\ndef test_n():\n    assert conftest.N == 3\n")
    r = child.runpytest_subprocess(*_plugin_args(), "--gpuarr-simulate-gpus=3")
    r.assert_outcomes(passed=1)


def test_plugin_without_the_option_uses_what_the_machine_has(child):
    child.makepyfile(DEVICE_TEST)
    r = child.runpytest_subprocess(*_plugin_args(), "--gpuarr-simulate-gpus=0", "-v")
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["*test_runs_on?cpu(0)? PASSED*"])


def test_plugin_rejects_a_negative_count(child):
    child.makepyfile(DEVICE_TEST)
    r = child.runpytest_subprocess(*_plugin_args(), "--gpuarr-simulate-gpus=-1")
    assert r.ret != 0
    r.stderr.fnmatch_lines(["*--gpuarr-simulate-gpus needs a number >= 0*"])


def _counts_kernels(device):
    return device.type != "cpu" and gpuarr._core._gpu_mode()[0] in ("cuda", "emulated")


def test_count_kernels_counts_launches_copies_and_waits(device):
    x = gpuarr.asarray(np.arange(1000, dtype=np.float32), device=device)
    y = gpuarr.asarray(np.ones(1000, np.float32), device=device)
    with gpuarr.testing.count_kernels(device) as k:
        z = x + y
        total = float(z.sum())
    assert total == float((np.arange(1000, dtype=np.float32) + 1).sum())
    if not _counts_kernels(device):
        assert not k.supported
        assert (k.launches, k.syncs, k.h2d, k.d2h, k.max_grid_blocks) == (0, 0, 0, 0, 0)
        assert "not counted" in repr(k)
        return
    assert k.supported
    assert k.launches >= 2  # the add and the reduction
    assert k.syncs >= 1  # float() waits for the sum
    assert k.d2h >= 1 and k.h2d == 0
    assert 1 <= k.max_grid_blocks
    assert "launches=" in repr(k)


def test_count_kernels_counts_only_inside_the_block_and_per_device(device):
    x = gpuarr.asarray(np.arange(10.0), device=device)
    with gpuarr.testing.count_kernels(device) as k:
        pass
    assert (k.launches, k.syncs, k.h2d, k.d2h) == (0, 0, 0, 0)
    with gpuarr.testing.count_kernels(device) as k:
        gpuarr.asarray(np.arange(10.0), device=device)
        x.numpy()
    if _counts_kernels(device):
        assert (k.h2d, k.d2h) == (1, 1)
        assert k.launches == 0
        assert k.syncs == 1
    if gpuarr.num_gpus() >= 2 and _counts_kernels(device):
        other = gpuarr.gpu(1 - device.index)
        with gpuarr.testing.count_kernels(other) as k:
            x + 1
        assert k.launches == 0


# --- where the work ran: count_work, assert_work ----------------------------------------


def test_count_work_counts_each_kind_on_the_device_that_ran_it(device):
    a = gpuarr.asarray(np.ones((4, 4), np.float32), device=device)
    idx = gpuarr.asarray(np.array([0, 2]), device=device)
    with count_work() as w:
        b = a @ a
        s = b.sum()
        c = b + s
        gpuarr.rand(3, device=device)
        c[idx]
    mine = w[device]
    assert (mine.matmuls, mine.reductions, mine.random) == (1, 1, 1), mine
    assert mine.elementwise >= 1 and mine.indexing >= 1, mine
    assert mine.total == sum(getattr(mine, k) for k in (
        "elementwise", "reductions", "matmuls", "random", "indexing", "sorting", "linalg",
        "fft"))
    for other in w.devices:
        if other != device:
            assert w[other] == WorkCounts(), (other, w)
    assert f"{device!r}: " in str(w) and "1 matrix product" in str(w)


def test_count_work_counts_each_matrix_of_a_batched_product(device):
    a = gpuarr.asarray(np.ones((5, 3, 3), np.float32), device=device)
    with count_work(device) as w:
        a @ a
    assert w[device].matmuls == 5
    with pytest.raises(KeyError, match="was not counted in this block"):
        w[gpuarr.gpu(7)]


def test_count_work_counts_work_of_other_threads_and_freezes_at_the_end(device):
    a = gpuarr.asarray(np.ones((4, 4), np.float32), device=device)
    with count_work(device) as w:
        t = threading.Thread(target=lambda: [a @ a for _ in range(3)])
        t.start()
        t.join()
    a @ a  # after the block: not counted
    assert w[device].matmuls == 3


def test_assert_work_passes_on_the_device_and_fails_in_words(device):
    a = gpuarr.asarray(np.ones((4, 4), np.float32), device=device)
    with assert_work(device, matmuls=2, elsewhere=0) as w:
        a @ a @ a
    assert w[device].matmuls == 2
    with pytest.raises(AssertionError) as e:
        with assert_work(device, matmuls=3, reductions=1):
            a @ a
    msg = str(e.value)
    assert msg.startswith(f"too little work on {device!r}: 1 matrix product (at least 3 "
                          f"expected); 0 reductions (at least 1 expected)"), msg
    assert f"work done in the block: cpu(0): " in msg
    with pytest.raises(AssertionError, match=r"no device did it: was it computed with "
                                             r"NumPy on the host"):
        with assert_work(device, total=1):
            np.ones(3) + 1
    with pytest.raises(TypeError, match="unknown kinds of work"):
        assert_work(device, products=1)


def test_assert_work_names_the_device_that_did_the_work_instead(gpu_device):
    a = gpuarr.ones((4, 4))
    with pytest.raises(AssertionError) as e:
        with assert_work(gpu_device, matmuls=1, elsewhere=0):
            a @ a
    msg = str(e.value)
    assert f"too little work on {gpu_device!r}: 0 matrix products" in msg
    assert f"work done on other devices than {gpu_device!r}: 1 operation (at most 0 " \
           f"allowed)" in msg
    assert "(it ran on cpu(0) instead" in msg


def test_assert_work_turns_a_device_mismatch_into_advice(gpu_device):
    x = gpuarr.ones(3, device=gpu_device)
    with pytest.raises(AssertionError) as e:
        with assert_work(gpu_device):
            x + gpuarr.ones(3)
    msg = str(e.value)
    assert "the operands live on different devices" in msg
    assert f"In this exercise the work belongs on {gpu_device!r}, the device it gives: " \
           f"move each array that lives elsewhere there, with x.to({gpu_device!r})" in msg
    assert isinstance(e.value.__cause__, gpuarr.DeviceMismatchError)


def test_work_counting_is_the_same_on_every_device_kind():
    # one operation, one count, whatever serves the device (C counters in the core)
    counts = []
    for d in [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]:
        a = gpuarr.asarray(np.ones((3, 3), np.float32), device=d)
        with count_work(d) as w:
            (a @ a).sum()
        counts.append((w[d].matmuls, w[d].reductions))
    assert set(counts) == {(1, 1)}, counts


# --- counting blocks see every copy --------------------------------------------------------

def test_a_counting_block_sees_hidden_copies_and_ignores_resets(gpu_device):
    x = gpuarr.asarray(np.ones(3), device=gpu_device)
    before = gpuarr.transfer_stats()
    with gpuarr.count_transfers() as t:
        gpuarr.testing._host(x)  # the comparisons' own, hidden copy
        with gpuarr._devices._uncounted():
            x.numpy()
        gpuarr.reset_transfer_stats()
    assert t.d2h_count == 2 and t.d2h_bytes == 48, t
    # outside a block, transfer_stats() still leaves the hidden copies out
    assert gpuarr.transfer_stats().d2h_count == 0 <= before.d2h_count
    with pytest.raises(AssertionError, match="2 device->host copies"):
        with assert_transfers(max_d2h=1):
            assert_allclose(x, [1, 1, 1])
            gpuarr.reset_transfer_stats()
            x.numpy()


def test_assert_transfers_check_sets_a_budget_from_the_result(gpu_device):
    x = gpuarr.asarray(np.ones(8, np.float64), device=gpu_device)
    budget = assert_transfers(max_d2h=1)
    with budget:
        log = x.numpy()
    budget.check(max_d2h_bytes=log.nbytes)
    with pytest.raises(AssertionError) as e:
        budget.check(max_d2h_bytes=32, why="four float64 values")
    assert "64 bytes device->host (at most 32 allowed: four float64 values)" in str(e.value)
    with pytest.raises(TypeError):
        budget.check(d2h=1)
    with pytest.raises(RuntimeError, match="after the with block"):
        assert_transfers().check(max_d2h=0)


def test_waits_last_fails_when_work_is_queued_after_a_wait(two_gpus):
    g0, g1 = two_gpus
    a0 = gpuarr.ones((8, 8), device=g0)
    a1 = gpuarr.ones((8, 8), device=g1)
    with assert_transfers(waits_last=True):
        a0 @ a0
        a1 @ a1
        gpuarr.synchronize()
    with pytest.raises(AssertionError) as e:
        with assert_transfers(waits_last=True):
            a0 @ a0
            gpuarr.synchronize(g0)
            a1 @ a1
    msg = str(e.value)
    assert msg.startswith("the host waited for a device before all the work was queued: 1 "
                          "operation was queued after the first wait, at "
                          "test_testing_helpers.py:"), msg
    assert "gpuarr.synchronize(g0)" in msg


# --- what a result is, in words ------------------------------------------------------------

def test_describe_says_what_a_value_is_without_its_values(device):
    x = gpuarr.asarray(np.ones((2, 3), np.float32), device=device)
    assert describe(x) == f"a gpuarr array (float32, shape (2, 3)) on {device!r}"
    assert describe(np.ones(4)) == ("a NumPy array (numpy.ndarray, float64, shape (4,)) on "
                                    "the host")
    assert describe([1, 2]) == "a list of 2 items" and describe(1.5) == "a float"
    assert describe(None) == "None"


def test_assert_numpy_and_assert_on_device_fail_in_words(device):
    x = gpuarr.asarray(np.ones(50, np.float32), device=device)
    with pytest.raises(AssertionError) as e:
        assert_numpy(x, "the log")
    assert str(e.value) == ("the log should be a NumPy array (numpy.ndarray); got a gpuarr "
                            f"array (float32, shape (50,)) on {device!r}")
    assert_numpy(np.ones(50, np.float32), "the log", shape=(50,), dtype=("float32", "float64"))
    with pytest.raises(AssertionError, match=r"the log should have shape \(49,\)"):
        assert_numpy(np.ones(50), "the log", shape=(49,))
    with pytest.raises(AssertionError, match="the log should have dtype float32 or float64"):
        assert_numpy(np.ones(50, np.int64), "the log", dtype=("float32", "float64"))
    assert_on_device(x, device, "X", shape=(50,), dtype="float32")
    with pytest.raises(AssertionError) as e:
        assert_on_device(np.ones(2), device, "X")
    assert str(e.value) == (f"X should be a gpuarr array on {device!r}; got a NumPy array "
                            "(numpy.ndarray, float64, shape (2,)) on the host")


# --- the graders' plugin: fresh inputs, pairs of devices, the graded module ---------------

GRADER_TEST = """
import gpuarr

def test_pairs(gpuarr_device_pair):
    a, b = gpuarr_device_pair
    assert a != b

def test_fresh(gpuarr_rng):
    print("drawn", gpuarr_rng.integers(10**12))
    assert False

def test_graded(gpuarr_student):
    mod = gpuarr_student("answer")
    assert mod.VALUE == 1
"""


def test_plugin_pairs_fresh_inputs_and_a_checked_graded_module(child, monkeypatch):
    child.makepyfile(test_grader=GRADER_TEST)
    child.makepyfile(answer="import gpuarr\nVALUE = 1\ngpuarr.testing.count_work = None\n")
    r = child.runpytest_subprocess(*_plugin_args(), "--gpuarr-simulate-gpus=2", "-v")
    r.assert_outcomes(passed=6, failed=2)
    r.stdout.fnmatch_lines(["*test_pairs?cpu(0)->gpu(0)? PASSED*",
                            "*test_pairs?gpu(1)->gpu(0)? PASSED*",
                            "*inputs drawn with seed * (GPUARR_GRADER_SEED=* draws them again)*",
                            "*the graded code changed what grades it: "
                            "gpuarr.testing.count_work*"])
    seed = re.search(r"GPUARR_GRADER_SEED=(\d+)", r.stdout.str()).group(1)
    drawn = re.search(r"drawn (\d+)", r.stdout.str()).group(1)
    monkeypatch.setenv("GPUARR_GRADER_SEED", seed)
    again = child.runpytest_subprocess(*_plugin_args(), "-k", "fresh", "-s")
    assert f"drawn {drawn}" in again.stdout.str()


def test_plugin_min_gpus_grades_again_on_two_simulated_gpus(child, monkeypatch):
    child.makeini("[pytest]\ngpuarr_min_gpus = 2\n")
    child.makepyfile(DEVICE_TEST)
    monkeypatch.setenv("GPUARR_SIMULATE_GPUS", "1")
    r = child.runpytest_subprocess(*_plugin_args(), "-v")
    r.assert_outcomes(passed=2)
    r.stdout.fnmatch_lines(["*fewer than 2 GPUs here: the tests run again at the end on 2 "
                            "simulated GPUs*", "*second pass on 2 simulated GPUs*",
                            "*3 passed*", "*WARNING: gpuarr found 1 GPU*",
                            "*The same tests ran again on 2 simulated GPUs (above).*"])
