"""Indexing without hidden waits on CUDA devices (issue 10, item 4).

Integer-array gather and scatter (x[idx], x[idx] = v, take) queue their kernels and
return: an out-of-range index in an index array already on the device is recorded by
the kernel in the operation's failure slot, and its result fails: a read of it, or the
next synchronize(), raises IndexError (docs/DESIGN.md, "Failed queued work"); one from
host data (a list) is checked on the host before the upload and raised at once.
GPUARR_SYNC_CHECKS=1 makes the device error immediate. Counted with gpuarr.testing.count_kernels on emulated CUDA
(GPUARR_CUDA_EMULATE=2) or a GPU; skipped otherwise.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpuarr
from gpuarr import _core
from conftest import needs_cuda_devices

pytestmark = needs_cuda_devices

N = 1 << 20
rng = np.random.default_rng(10)
IDX = rng.integers(-N, N, size=N, dtype=np.int64)


@pytest.fixture
def dev():
    d = gpuarr.gpu(0)
    gpuarr.synchronize(d)  # nothing pending from an earlier test
    return d


@pytest.fixture
def big(dev):
    a = rng.standard_normal(N, dtype=np.float32)
    return a, gpuarr.asarray(a, device=dev), gpuarr.asarray(IDX, device=dev)


def test_gather_with_a_device_index_launches_at_most_two_kernels_and_never_waits(dev, big):
    a, x, idx = big
    with gpuarr.testing.count_kernels(dev) as k:
        y = x[idx]
    assert k.supported
    assert k.launches <= 2, k
    assert k.syncs == 0 and k.d2h == 0 and k.h2d == 0, k
    np.testing.assert_array_equal(y.numpy(), a[IDX])


def test_scatter_with_a_device_index_never_waits(dev, big):
    a, x, idx = big
    v = gpuarr.asarray(np.arange(N, dtype=np.float32), device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        x[idx] = v
        x[idx] = 2.5
    assert k.syncs == 0 and k.d2h == 0, k
    want = a.copy()
    want[IDX] = 2.5
    np.testing.assert_array_equal(x.numpy(), want)


def test_take_with_a_device_index_never_waits(dev, big):
    a, x, idx = big
    with gpuarr.testing.count_kernels(dev) as k:
        y = gpuarr.take(x, idx)
        z = x.take(idx, axis=0)
    assert k.syncs == 0 and k.d2h == 0, k
    np.testing.assert_array_equal(y.numpy(), np.take(a, IDX))
    np.testing.assert_array_equal(z.numpy(), np.take(a, IDX, axis=0))


@pytest.mark.parametrize("read", ["synchronize", "numpy", "item"])
def test_bad_device_index_raises_at_its_read_or_synchronize_once(dev, read):
    x = gpuarr.asarray(np.arange(6.0), device=dev)
    idx = gpuarr.asarray(np.array([1, 9, 2]), device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        y = x[idx]  # queued: no wait, no error yet
    assert k.syncs == 0
    with pytest.raises(IndexError, match=r"index 9 is out of bounds for axis with size 6"):
        if read == "synchronize":
            gpuarr.synchronize(dev)
        elif read == "numpy":
            y.numpy()
        else:
            y[0].item()
    # reported once (a read counts): synchronize() has nothing left, a good gather is quiet
    gpuarr.synchronize(dev)
    y = x[gpuarr.asarray(np.array([5, -6]), device=dev)]
    gpuarr.synchronize(dev)
    np.testing.assert_array_equal(y.numpy(), [5.0, 0.0])


def test_bad_negative_device_index_names_the_index(dev):
    x = gpuarr.asarray(np.zeros((4, 3)), device=dev)
    idx = gpuarr.asarray(np.array([-5]), device=dev)
    x[:, 0][idx]
    with pytest.raises(IndexError, match=r"index -5 is out of bounds for axis with size 4"):
        gpuarr.synchronize(dev)


def test_scatter_with_a_bad_device_index_fails_its_destination_only(dev):
    a = np.arange(24, dtype=np.float32).reshape(6, 4)
    x = gpuarr.asarray(a, device=dev)
    idx = gpuarr.asarray(np.array([0, 2, 7]), device=dev)
    x[idx] = 100.0
    x[idx] = gpuarr.asarray(np.ones((3, 4), np.float32), device=dev)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis with size 6"):
        gpuarr.synchronize(dev)
    # the destination of a failed scatter is failed (its data is not what the program
    # says it is): every read raises; the kernels' "writes nothing" is checked below
    # the core, in tests/cuda/test_cuda_kernels.py
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        x.numpy()
    # other arrays scatter as before: a failure belongs to its own operation's slot
    y = gpuarr.asarray(a, device=dev)
    y[gpuarr.asarray(np.array([0, -1]), device=dev)] = -1.0
    want = a.copy()
    want[[0, -1]] = -1.0
    np.testing.assert_array_equal(y.numpy(), want)


@pytest.mark.parametrize("how", ["getitem", "setitem", "take", "2d"])
def test_bad_host_index_raises_at_once_without_a_device_wait(dev, how):
    a = np.arange(12.0).reshape(3, 4)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        with pytest.raises(IndexError) as e:
            if how == "getitem":
                x[[0, 3]]
            elif how == "setitem":
                x[[0, -4]] = 1.0
            elif how == "take":
                gpuarr.take(x, [12])
            else:
                x[:, [1, 4]]
    assert k.syncs == 0 and k.launches == 0 and k.h2d == 0, k
    want = {"getitem": "index 3 is out of bounds for axis 0 with size 3",
            "setitem": "index -4 is out of bounds for axis 0 with size 3",
            "take": "index 12 is out of bounds for axis 0 with size 12",
            "2d": "index 4 is out of bounds for axis 1 with size 4"}[how]
    assert want in str(e.value)
    gpuarr.synchronize(dev)  # nothing was deferred
    np.testing.assert_array_equal(x.numpy(), a)


def test_good_host_index_is_uploaded_once_and_gathers(dev):
    a = np.arange(12.0).reshape(3, 4)
    x = gpuarr.asarray(a, device=dev)
    with gpuarr.testing.count_kernels(dev) as k:
        y = x[[2, -1, 0], 1:]
    assert k.syncs == 0 and k.h2d == 1, k
    np.testing.assert_array_equal(y.numpy(), a[[2, -1, 0], 1:])


def test_sync_checks_make_the_device_index_error_immediate():
    code = textwrap.dedent("""
        import numpy as np, gpuarr
        d = gpuarr.gpu(0)
        x = gpuarr.asarray(np.arange(6.0), device=d)
        idx = gpuarr.asarray(np.array([1, 9]), device=d)
        for what in ("get", "set"):
            try:
                if what == "get":
                    x[idx]
                else:
                    x[idx] = 5.0
                print(what, "deferred")
            except IndexError as e:
                print(what, "immediate:", e)
        gpuarr.synchronize(d)  # nothing left to report
        print(x.numpy().tolist())
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUARR_")}
    env["GPUARR_CUDA_EMULATE"] = os.environ.get("GPUARR_CUDA_EMULATE", "1")
    if _core._gpu_mode()[0] == "cuda":
        env.pop("GPUARR_CUDA_EMULATE")
    env["GPUARR_SYNC_CHECKS"] = "1"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("get immediate: index 9 is out of bounds"), r.stdout
    assert lines[1].startswith("set immediate: index 9 is out of bounds"), r.stdout
    assert lines[2] == "[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]", r.stdout
