"""Errors of queued work belong to their results (docs/DESIGN.md, "Failed queued work";
issue 31, item 1).

On a GPU, a gather or scatter whose index array is already on the device is checked by
its kernel, after the call returned. If it fails, its result (and everything computed
from it later) is failed: reading it raises the original IndexError, naming the
operation and the line that queued it, every time; an unrelated read never raises it;
synchronize() raises the failures of the calling thread's work not raised yet, each
once; one never raised is reported at exit, with exit status 1. The CPU raises at the
operation. Every rule runs on each GPU of the process (simulated, emulated CUDA, or
real CUDA); the exit rule runs in a subprocess of the same kind.
"""
import inspect
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import gpuarr
from gpuarr import _core
from conftest import DEVICES

GPUS = [d for d in DEVICES if d != gpuarr.cpu()]
HERE = os.path.abspath(__file__)


@pytest.fixture(params=GPUS or [None], ids=[repr(d) for d in GPUS] or ["no-gpu"])
def gpu(request):
    if request.param is None:
        pytest.skip("needs a GPU (GPUARR_SIMULATE_GPUS=2 or GPUARR_CUDA_EMULATE=2)")
    return request.param


def _next_line():
    """The line after the caller's: where the operation under test is queued."""
    return inspect.currentframe().f_back.f_lineno + 1


def failed_take(d, bad=55):
    """take() of a 10-element array with a device index array holding `bad`: queued,
    fails on the device. Returns (x, y, the line that queued it)."""
    x = gpuarr.arange(10.0, device=d)
    idx = gpuarr.asarray(np.array([3, bad, 1]), device=d)
    line = _next_line()
    y = gpuarr.take(x, idx)
    return x, y, line


def check_original(err, bad, line, what="take"):
    msg = str(err.value)
    assert err.type is IndexError, msg
    assert msg.startswith(f"index {bad} is out of bounds for axis with size 10"), msg
    assert f"failed in {what} queued at {HERE}:{line}" in msg, msg


# --- a failed result never reads as data ---------------------------------------------

def test_the_garbage_read_of_the_issue_raises_every_time(gpu):
    x, y, line = failed_take(gpu)
    z = x * 2  # an unrelated array: its read waits for the failed gather, and is fine
    np.testing.assert_array_equal(z.numpy(), np.arange(10.0) * 2)
    for _ in range(3):
        with pytest.raises(IndexError) as e:
            y.numpy()  # was [6.9e-310, ...] (garbage), with no error
        check_original(e, 55, line)
    gpuarr.synchronize()  # raised already: nothing left to report


READS = {
    "numpy": lambda y, tmp: y.numpy(),
    "item": lambda y, tmp: y[0].item(),
    "float": lambda y, tmp: float(y[1]),
    "bool": lambda y, tmp: bool(y[2]),
    "repr": lambda y, tmp: repr(y),
    "str": lambda y, tmp: str(y),
    "to_cpu": lambda y, tmp: y.to(gpuarr.cpu()),
    "dlpack_to_host": lambda y, tmp: y.__dlpack__(dl_device=(1, 0)),
    "save": lambda y, tmp: gpuarr.save(os.path.join(tmp, "y.npy"), y),
    "operand_then_read": lambda y, tmp: (y.sum() + 1).item(),
}


@pytest.mark.parametrize("read", list(READS))
def test_every_read_of_a_failed_result_raises_the_original_error(gpu, read, tmp_path):
    _, y, line = failed_take(gpu)
    with pytest.raises(IndexError) as e:
        READS[read](y, str(tmp_path))
    check_original(e, 55, line)
    if read == "save":
        assert not os.path.exists(os.path.join(str(tmp_path), "y.npy")) or \
            os.path.getsize(os.path.join(str(tmp_path), "y.npy")) == 0


def _other_gpu(y):
    others = [d for d in GPUS if d != y.device]
    if not others:
        pytest.skip("needs two GPUs (GPUARR_SIMULATE_GPUS=2 or GPUARR_CUDA_EMULATE=2)")
    return y.to(others[0])


USES = {
    "add": lambda y: y + 1,
    "multiply_good": lambda y: gpuarr.ones(3, device=y.device) * y,
    "sum": lambda y: gpuarr.sum(y),
    "max_axis": lambda y: gpuarr.max(y.reshape(3, 1), axis=1),
    "cumsum": lambda y: gpuarr.cumsum(y),
    "matmul": lambda y: y @ gpuarr.ones((3, 2), device=y.device),
    "astype": lambda y: y.astype("int32"),
    "view_slice": lambda y: y[::-1],
    "view_reshape": lambda y: y.reshape(1, 3).T,
    "copy": lambda y: y.copy(),
    "where": lambda y: gpuarr.where(y > 0, y, 0.0),
    "sort": lambda y: gpuarr.sort(y),
    "fft": lambda y: gpuarr.fft.fft(y),
    "norm": lambda y: gpuarr.linalg.vector_norm(y),
    "solve": lambda y: gpuarr.linalg.solve(
        gpuarr.eye(3, device=y.device) * (y.reshape(3, 1) * 0 + 2),
        gpuarr.ones(3, device=y.device)),
    "gather_from_it": lambda y: y[gpuarr.asarray(np.array([0, 2]), device=y.device)],
    # the index is 0 whatever y's storage holds (a comparison times 0: (y * 0) is NaN
    # where the failed take left a NaN, and the gather then failed on its own too, an
    # error this test does not raise and the teardown's synchronize() did, now and then)
    "used_as_index": lambda y: gpuarr.arange(5.0, device=y.device)[
        gpuarr.zeros(3, dtype="int64", device=y.device) + (y > 0).astype("int64") * 0],
    "empty_result": lambda y: y[:0] + 1,
    "to_other_gpu": _other_gpu,
    "chain": lambda y: gpuarr.exp(gpuarr.sin(y.astype("float32")) * 0.0) - 1,
}


@pytest.mark.parametrize("use", list(USES))
def test_a_result_computed_from_a_failed_one_raises_the_original_error(gpu, use):
    _, y, line = failed_take(gpu)
    with pytest.raises(IndexError) as e:
        r = USES[use](y)  # a factorisation may find out at once (it waits anyway)
        r.numpy()
    check_original(e, 55, line)


def test_good_plus_equals_a_failed_result_does_not_use_the_garbage(gpu):
    _, y, line = failed_take(gpu)
    good = gpuarr.ones(3, device=gpu)
    view = good[1:]
    good += y
    for arr in (good, view, good * 2):
        with pytest.raises(IndexError) as e:
            arr.numpy()
        check_original(e, 55, line)
    good[...] = 1.0  # a storage once failed stays failed (written from garbage before)
    with pytest.raises(IndexError):
        good.numpy()


def test_a_failed_scatter_fails_its_destination_and_its_views(gpu):
    a = np.arange(12.0).reshape(3, 4)
    x = gpuarr.asarray(a, device=gpu)
    col = x[:, 1]
    idx = gpuarr.asarray(np.array([0, 5]), device=gpu)
    line = _next_line()
    x[idx] = 7.0
    other = gpuarr.asarray(a, device=gpu) + 1
    np.testing.assert_array_equal(other.numpy(), a + 1)  # unrelated
    for arr in (x, col, x.sum()):
        with pytest.raises(IndexError) as e:
            arr.numpy()
        assert str(e.value).startswith("index 5 is out of bounds for axis with size 3")
        assert f"failed in x[index] = value queued at {HERE}:{line}" in str(e.value)


def test_a_mask_computed_from_a_failed_result_raises_the_original_error(gpu):
    x, y, line = failed_take(gpu)
    with pytest.raises(IndexError) as e:
        y[y > 0]  # the mask's count is read back: a read of the failed result
    check_original(e, 55, line)
    np.testing.assert_array_equal(x[x > 7].numpy(), [8.0, 9.0])  # x is fine


def test_an_unrelated_read_never_raises_it(gpu):
    x, y, line = failed_take(gpu)
    w = gpuarr.asarray(np.array([0, 9]), device=gpu)
    for _ in range(3):
        assert x[w].numpy().tolist() == [0.0, 9.0]  # a good gather, device index
        assert float(x.sum()) == 45.0
    with pytest.raises(IndexError) as e:
        y.numpy()
    check_original(e, 55, line)
    gpuarr.synchronize(gpu)  # raised by the read: nothing left


def test_a_failure_whose_result_is_gone_is_still_reported(gpu):
    _, y, line = failed_take(gpu, bad=-11)
    del y
    with pytest.raises(IndexError) as e:
        gpuarr.synchronize()
    check_original(e, -11, line)
    gpuarr.synchronize()  # once


# --- several failures, threads, devices -----------------------------------------------

def test_several_queued_failures_are_each_reported(gpu):
    x = gpuarr.arange(10.0, device=gpu)
    ys, lines = [], []
    for bad in (11, 12, 13):
        idx = gpuarr.asarray(np.array([bad]), device=gpu)
        lines.append(_next_line())
        ys.append(x[idx])
    with pytest.raises(IndexError) as e:
        gpuarr.synchronize()
    msg = str(e.value)
    assert msg.startswith("index 11 is out of bounds"), msg
    assert "2 more failed operations queued by this thread" in msg, msg
    for bad, line in zip((12, 13), lines[1:]):
        assert f"IndexError: index {bad} is out of bounds" in msg, msg
        assert f"{HERE}:{line}" in msg, msg
    gpuarr.synchronize()  # each reported once
    for y, bad, line in zip(ys, (11, 12, 13), lines):
        with pytest.raises(IndexError) as e:
            y.numpy()  # and each result still reads as failed
        check_original(e, bad, line, "x[index]")


def test_a_failure_after_many_successes_is_still_reported(gpu):
    x = gpuarr.arange(10.0, device=gpu)
    good = gpuarr.asarray(np.array([2, 7]), device=gpu)
    ys = [x[good] for _ in range(150)]  # settled successes ahead of it in the registry
    _, bad, line = failed_take(gpu, bad=99)
    del bad
    with pytest.raises(IndexError) as e:
        gpuarr.synchronize()
    check_original(e, 99, line)
    assert ys[-1].numpy().tolist() == [2.0, 7.0]


def test_a_failure_raised_by_a_read_is_not_raised_again_by_synchronize(gpu):
    _, y1, line1 = failed_take(gpu, bad=21)
    _, y2, line2 = failed_take(gpu, bad=22)
    with pytest.raises(IndexError) as e:
        y1.numpy()
    check_original(e, 21, line1)
    with pytest.raises(IndexError) as e:
        gpuarr.synchronize()
    check_original(e, 22, line2)
    assert "more failed" not in str(e.value)


def test_errors_do_not_cross_threads(gpu):
    queued, checked = threading.Event(), threading.Event()
    got = {}

    def worker():
        try:
            _, got["y"], got["line"] = failed_take(gpu, bad=31)
            queued.set()
            checked.wait(60)
            try:
                gpuarr.synchronize()
                got["sync"] = None
            except IndexError as e:
                got["sync"] = str(e)
        finally:
            queued.set()

    t = threading.Thread(target=worker)
    t.start()
    assert queued.wait(60)
    # this thread's synchronize() and its reads do not raise the worker's error
    gpuarr.synchronize()
    mine = gpuarr.arange(4.0, device=gpu)
    assert mine.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    gpuarr.synchronize()
    checked.set()
    t.join(60)
    assert got["sync"] is not None and got["sync"].startswith("index 31 is out of bounds")
    assert f"{HERE}:{got['line']}" in got["sync"]
    # the worker's result is still failed, whoever reads it
    with pytest.raises(IndexError, match="index 31 is out of bounds"):
        got["y"].numpy()


def test_synchronize_of_one_device_raises_the_failures_queued_there(two_gpus):
    d0, d1 = two_gpus
    _, y, line = failed_take(d1, bad=41)
    gpuarr.synchronize(d0)
    with pytest.raises(IndexError) as e:
        gpuarr.synchronize(d1)
    check_original(e, 41, line)
    assert f"on {d1!r}" in str(e.value)


def test_the_cpu_raises_at_the_operation():
    x = gpuarr.arange(10.0)
    idx = gpuarr.asarray(np.array([3, 55]))
    with pytest.raises(IndexError, match="index 55 is out of bounds for axis with size 10"):
        gpuarr.take(x, idx)
    with pytest.raises(IndexError, match="index 55 is out of bounds"):
        x[idx] = 1.0
    np.testing.assert_array_equal(x.numpy(), np.arange(10.0))  # nothing was marked
    assert _core._unreported_failures() == 0


def test_a_good_device_index_leaves_nothing_to_report(gpu):
    x = gpuarr.arange(10.0, device=gpu)
    idx = gpuarr.asarray(np.array([9, -10, 4]), device=gpu)
    y = x[idx]
    x[idx] = y + 100
    np.testing.assert_array_equal(y.numpy(), [9.0, 0.0, 4.0])
    gpuarr.synchronize()
    assert _core._unreported_failures() == 0


# --- the exit report ------------------------------------------------------------------

def _run(code, **env_extra):
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("ending", ["normal", "exit3", "raised"])
def test_a_failure_never_raised_is_reported_at_exit_with_status_1(gpu, ending):
    r = _run(f"""
        import sys
        import numpy as np, gpuarr
        d = gpuarr.gpu({gpu.index})
        x = gpuarr.arange(10.0, device=d)
        y = gpuarr.take(x, gpuarr.asarray(np.array([55]), device=d))  # line 6
        x[gpuarr.asarray(np.array([-12]), device=d)] = 1.0  # line 7
        print("done", gpuarr.zeros(0, device=d).numpy().tolist())
        if "{ending}" == "raised":
            for a in (y, x):
                try:
                    a.numpy()
                except IndexError as e:
                    print("caught", e)
        if "{ending}" == "exit3":
            sys.exit(3)
    """)
    assert r.stdout.startswith("done []"), r.stdout + r.stderr
    if ending == "raised":
        assert r.returncode == 0 and "never raised" not in r.stderr, r.stderr
        assert r.stdout.count("caught") == 2
        return
    assert r.returncode == (3 if ending == "exit3" else 1), (r.returncode, r.stderr)
    assert "2 errors in queued work were never raised" in r.stderr, r.stderr
    assert ("IndexError: index 55 is out of bounds for axis with size 10 "
            "(failed in take queued at <string>:6") in r.stderr, r.stderr
    assert ("IndexError: index -12 is out of bounds for axis with size 10 "
            "(failed in x[index] = value queued at <string>:7") in r.stderr, r.stderr


def test_dlpack_export_of_a_failed_result_is_refused(gpu):
    # a consumer reads the memory itself, and no error can reach it later: the export
    # settles the array first (emulated devices play CUDA devices for DLPack here)
    if gpuarr.device_kind(gpu) != "emulated":
        pytest.skip("needs CUDA GPUs: emulated ones, which can play CUDA devices for "
                    "DLPack (GPUARR_CUDA_EMULATE_DLPACK=cuda)")
    r = _run("""
        import numpy as np, gpuarr
        d = gpuarr.gpu(0)
        x = gpuarr.arange(10.0, device=d)
        y = gpuarr.take(x, gpuarr.asarray(np.array([55]), device=d))
        try:
            y.__dlpack__(stream=-1)
            print("exported")
        except IndexError as e:
            print("refused:", e)
        x.__dlpack__(stream=-1)
        print("x exported")
    """, GPUARR_CUDA_EMULATE_DLPACK="cuda")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("refused: index 55 is out of bounds"), r.stdout
    assert "take queued at <string>:5" in lines[0] and lines[1] == "x exported", r.stdout


def test_sync_checks_raise_at_the_operation(gpu):
    r = _run(f"""
        import numpy as np, gpuarr
        d = gpuarr.gpu({gpu.index})
        x = gpuarr.arange(10.0, device=d)
        idx = gpuarr.asarray(np.array([55]), device=d)
        for what in ("take", "setitem"):
            try:
                gpuarr.take(x, idx) if what == "take" else x.__setitem__(idx, 1.0)
                print(what, "deferred")
            except IndexError as e:
                print(what, "at once:", e)
        print(x.numpy().tolist() == list(range(10)))
    """, GPUARR_SYNC_CHECKS="1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("take at once: index 55 is out of bounds"), r.stdout
    assert lines[1].startswith("setitem at once: index 55 is out of bounds"), r.stdout
    assert lines[2] == "True", r.stdout  # raised at once: nothing marked, as on the CPU


# --- the cost: no host wait of its own (CUDA devices count them) ---------------------

def _counting(gpu):
    with gpuarr.testing.count_kernels(gpu) as k:
        pass
    if not k.supported:
        pytest.skip("needs CUDA GPUs: the kernel counters of emulated or real CUDA")


def test_failed_work_adds_no_host_wait(gpu):
    _counting(gpu)
    x = gpuarr.arange(1000.0, device=gpu)
    good = gpuarr.asarray(np.arange(0, 1000, 7), device=gpu)
    bad = gpuarr.asarray(np.array([1, 5000]), device=gpu)
    gpuarr.synchronize()
    with gpuarr.testing.count_kernels(gpu) as k:
        y = x[good] + 1  # queued, no wait
        z = x[bad] * 2
    assert k.syncs == 0 and k.d2h == 0, k
    with gpuarr.testing.count_kernels(gpu) as k:
        y.numpy()  # the read's own wait brings the outcome back
    assert k.syncs == 1, k
    with gpuarr.testing.count_kernels(gpu) as k:
        with pytest.raises(IndexError, match="index 5000 is out of bounds"):
            z.numpy()
    assert k.syncs == 1, k


def test_a_failure_moved_to_another_gpu_needs_no_wait_on_its_own(two_gpus):
    d0, d1 = two_gpus
    _counting(d0)
    _, y, line = failed_take(d0)
    w = y.to(d1)  # the copy's event also brings d0's outcome back
    with gpuarr.testing.count_kernels(d0) as k0:
        with pytest.raises(IndexError) as e:
            w.numpy()
    check_original(e, 55, line)
    assert k0.syncs == 0, k0


def test_more_fallible_operations_than_slots_between_two_waits(gpu):
    _counting(gpu)
    x = gpuarr.arange(10.0, device=gpu)
    idx = gpuarr.asarray(np.array([4]), device=gpu)
    bad = gpuarr.asarray(np.array([10]), device=gpu)
    acc = gpuarr.zeros(1, device=gpu)
    gpuarr.synchronize()
    with gpuarr.testing.count_kernels(gpu) as k:
        for i in range(1100):  # the ring has 1024 slots: one wait when it is full
            acc += x[idx]
        last = x[bad]
    assert k.syncs == 1, k
    assert acc.numpy().tolist() == [4400.0]
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        last.numpy()


@pytest.mark.parametrize("write", [False, True])
def test_three_index_arrays_report_only_the_original_failure(gpu, write):
    # more index arrays than one kernel takes are folded into offsets by one gather
    # each (ga_index.c, fold_indices); where one of those fails, the final kernel must
    # neither report a second error made of the failed gather's leftovers nor reach
    # outside the array: only the original failure shows, once
    x = gpuarr.zeros((2, 3, 4), device=gpu)
    i0 = gpuarr.asarray(np.array([0, 1]), device=gpu)
    i1 = gpuarr.asarray(np.array([2, 77]), device=gpu)
    i2 = gpuarr.asarray(np.array([3, 0]), device=gpu)
    if write:
        x[i0, i1, i2] = 1.0
        y = x
    else:
        y = x[i0, i1, i2]
    for _ in range(2):
        with pytest.raises(IndexError) as e:
            y.numpy()
        assert str(e.value).startswith("index 77 is out of bounds for axis with size 3"), \
            str(e.value)
    gpuarr.synchronize()  # the read raised it: nothing is left
    # an empty axis: every index is out of range (take_along_axis of a 3-d array)
    z = gpuarr.zeros((2, 0, 3), device=gpu)
    r = gpuarr.take_along_axis(z, gpuarr.zeros((2, 1, 3), dtype="int64", device=gpu),
                               axis=1)
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis with size 0"):
        r.numpy()
    gpuarr.synchronize()
