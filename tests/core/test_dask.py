"""Dask arrays whose chunks are gpuarr arrays: dask.array.from_array(x, chunks=...) on
every device, computed with Dask's threaded scheduler and with a LocalCluster of two
worker processes. NumPy is the oracle; every result is a gpuarr array on the chunks'
device (nothing crossed to the host on the way)."""
import gc
import os
import time
import subprocess
import sys

import numpy as np
import pytest

import gpuarr

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'dask[array]')")


@pytest.fixture
def data():
    return np.random.default_rng(0).standard_normal((12, 10)).astype(np.float32)


def _check(result, device, expected, rtol=1e-5, atol=1e-5):
    assert isinstance(result, gpuarr.Array), type(result)
    assert result.device == device
    np.testing.assert_allclose(result.numpy(), expected, rtol=rtol, atol=atol)


def test_from_array_reads_gpuarr_dtype_and_shape(device, data):
    x = gpuarr.asarray(data, device=device)
    d = da.from_array(x, chunks=(5, 4))
    assert d.shape == (12, 10) and d.dtype == np.float32
    assert d.chunks == ((5, 5, 2), (4, 4, 2))
    assert isinstance(d._meta, gpuarr.Array) and d._meta.device == device
    assert np.dtype(gpuarr.float32) == np.float32  # what makes the above work


CASES = {
    "add": (lambda d: d + 2 * d, lambda a: a + 2 * a),
    "exp": (lambda d: da.exp(d), np.exp),
    "where": (lambda d: da.where(d > 0, d, 0), lambda a: np.where(a > 0, a, 0)),
    "sum": (lambda d: d.sum(), lambda a: a.sum()),
    "sum_axis0": (lambda d: d.sum(axis=0), lambda a: a.sum(axis=0)),
    "mean_axis1": (lambda d: d.mean(axis=1), lambda a: a.mean(axis=1)),
    "std": (lambda d: d.std(), lambda a: a.std()),
    "var_axis0": (lambda d: d.var(axis=0), lambda a: a.var(axis=0)),
    "max_axis0": (lambda d: d.max(axis=0), lambda a: a.max(axis=0)),
    "min": (lambda d: d.min(), lambda a: a.min()),
    "argmax": (lambda d: d.argmax(), lambda a: a.argmax()),
    "cumsum_axis0": (lambda d: d.cumsum(axis=0), lambda a: a.cumsum(axis=0)),
    "matmul": (lambda d: d @ d.T, lambda a: a @ a.T),
    "dot": (lambda d: da.dot(d.T, d), lambda a: a.T @ a),
    "map_blocks": (lambda d: d.map_blocks(lambda b: b * b + 1), lambda a: a * a + 1),
    "slice": (lambda d: d[2:9, ::3], lambda a: a[2:9, ::3]),
    "transpose": (lambda d: d.T, lambda a: a.T),
    "concatenate": (lambda d: da.concatenate([d, d], axis=1),
                    lambda a: np.concatenate([a, a], axis=1)),
    "rechunk": (lambda d: d.rechunk((3, 10)) * 1, lambda a: a),
    "reshape": (lambda d: d.reshape(120), lambda a: a.reshape(120)),
    "astype": (lambda d: d.astype(np.float64) / 3, lambda a: a.astype(np.float64) / 3),
    "norm": (lambda d: da.linalg.norm(d), np.linalg.norm),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_threaded_scheduler_matches_numpy(device, data, case):
    build, oracle = CASES[case]
    d = da.from_array(gpuarr.asarray(data, device=device), chunks=(5, 4))
    got = build(d).compute(scheduler="threads")
    _check(got, device, oracle(data), rtol=1e-4, atol=1e-4)


def test_argmax_along_an_axis(device, data):
    """Dask combines the chunks' argmax with NumPy index grids (np.ogrid): index keys,
    host data like a Python list, uploaded to the chunk's device and counted (issue
    31; they used to be refused beside a GPU chunk)."""
    d = da.from_array(gpuarr.asarray(data, device=device), chunks=(5, 4))
    for axis in (0, 1):
        got = d.argmax(axis=axis).compute(scheduler="threads")
        _check(got, device, data.argmax(axis=axis))


def test_chunks_on_two_devices_do_not_mix(data):
    if gpuarr.num_gpus() < 1:
        pytest.skip("needs a GPU (a simulated one will do)")
    x = da.from_array(gpuarr.asarray(data, device=gpuarr.cpu()), chunks=(6, 5))
    y = da.from_array(gpuarr.asarray(data, device=gpuarr.gpu(0)), chunks=(6, 5))
    with pytest.raises(gpuarr.DeviceMismatchError):
        (x + y).compute(scheduler="threads")


def test_numpy_ufunc_dtype_argument_picks_the_loop(device):
    """Dask's reductions call np.add(..., dtype=...): the inputs are cast first, as
    NumPy does, so small integers do not wrap."""
    x = gpuarr.asarray(np.array([100, 120], dtype=np.int8), device=device)
    got = np.add(x, x, dtype=np.int64)
    _check(got, device, np.array([200, 240]))
    assert got.dtype == gpuarr.int64
    assert np.less(x, x, dtype=bool).dtype == gpuarr.bool


def test_numpy_like_functions_take_shape(device):
    x = gpuarr.ones((2, 3), dtype=gpuarr.int32, device=device)
    z = np.zeros_like(x, shape=(4,), dtype=np.float32)
    assert z.shape == (4,) and z.dtype == gpuarr.float32 and z.device == device
    f = np.full_like(x, 7, shape=(1, 1))
    _check(f, device, np.full((1, 1), 7))
    assert f.dtype == gpuarr.int32
    with pytest.raises(TypeError, match="order="):
        np.ones_like(x, order="F")


@pytest.mark.parametrize("dask_first", [True, False])
def test_registration_whichever_is_imported_first(dask_first):
    """Dask's dispatch tables (the element count behind mean) learn gpuarr's type
    whether Dask or gpuarr is imported first, and a gpuarr import alone does not import
    Dask."""
    imports = ["import dask.array as da", "import gpuarr"]
    code = "\n".join((imports if dask_first else imports[::-1]) + [
        "import sys",
        "from dask.array.dispatch import numel_lookup",
        "fn = numel_lookup.dispatch(gpuarr.Array)",
        "assert fn.__name__ == '_numel_arraylike', fn",
    ])
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())
    alone = "import gpuarr, sys; assert 'dask' not in sys.modules"
    subprocess.run([sys.executable, "-c", alone], check=True, env=os.environ.copy())


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip(
        "dask.distributed", reason="dask is not installed (pip install 'dask[distributed]')")
    # Worker processes inherit this environment (simulated or emulated GPUs included),
    # so gpu(0) means the same kind of device in them as here.
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client
            _wait_until_the_workers_hold_no_arrays(client)
    _release_the_closed_scheduler()


def _arrays_alive_in_this_worker():
    gc.collect()
    return gpuarr._core._live_storages()


def _wait_until_the_workers_hold_no_arrays(client, timeout=30.0):
    """A worker drops its chunks a moment after compute() returns; one that exits
    before that ends with them alive, and its exit report (CI's leak check) lists
    them. Wait until each worker's registry of live storages, the one that report
    reads (empty where leak checks are off), is empty."""
    deadline = time.monotonic() + timeout
    while True:
        alive = client.run(_arrays_alive_in_this_worker)
        if not any(alive.values()):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"Dask workers still hold gpuarr arrays after {timeout} s "
                                 f"(nbytes, device, made during): {alive}")
        time.sleep(0.05)


def _release_the_closed_scheduler():
    """The scheduler runs in this process, and distributed.core._expects_comm is an
    unbounded functools.cache keyed on its handlers, bound methods of the Scheduler:
    the closed Scheduler would live until exit, and through its work-stealing state
    (closed workers' task durations) the forgotten task that carried from_array's
    gpuarr array, a copy the scheduler unpickled. Whether that state still names the
    task at close depends on timing, so CI's exit report listed 480 bytes made during
    the cluster test only sometimes (issue 31's timing-dependent leak; the chain was
    traced with objgraph.find_backref_chain from the live array at session end).
    Clearing the cache lets the Scheduler go with the fixture; the exit report still
    lists anything of gpuarr's that outlives it."""
    from distributed import core
    if hasattr(core, "_expects_comm") and hasattr(core._expects_comm, "cache_clear"):
        core._expects_comm.cache_clear()


def test_local_cluster_with_two_worker_processes(cluster_client, data):
    dev = gpuarr.gpu(0) if gpuarr.num_gpus() else gpuarr.cpu()
    d = da.from_array(gpuarr.asarray(data, device=dev), chunks=(4, 5))

    def where_run(block):
        # each chunk is a gpuarr array on the device, inside a worker process
        assert isinstance(block, gpuarr.Array) and block.device == dev
        return block * 0 + os.getpid()

    pids = d.map_blocks(where_run, dtype=np.float32).compute().numpy()
    assert os.getpid() not in set(pids.ravel().tolist())
    _check((da.exp(d) * 2).sum(axis=0).compute(), dev, (np.exp(data) * 2).sum(axis=0),
           rtol=1e-4)
    _check((d @ d.T).compute(), dev, data @ data.T, rtol=1e-4, atol=1e-4)
    _check(d.mean(axis=1).compute(), dev, data.mean(axis=1))


def test_numpy_unravel_and_ravel_index_on_the_device(device):
    idx = gpuarr.asarray(np.array([0, 7, 11]), device=device)
    rows, cols = np.unravel_index(idx, (3, 4))
    _check(rows, device, [0, 1, 2])
    _check(cols, device, [0, 3, 3])
    _check(np.ravel_multi_index((rows, cols), (3, 4)), device, [0, 7, 11])
    with pytest.raises(ValueError, match="out of bounds"):
        np.unravel_index(gpuarr.asarray(np.array([12]), device=device), (3, 4))
    with pytest.raises(ValueError, match="invalid entry"):
        np.ravel_multi_index((rows, cols + 1), (3, 4))


def test_numpy_array_like_a_gpuarr_array(device):
    """np.array(data, like=x) (Dask's empty chunks) makes a gpuarr array on x's device,
    with NumPy's ndmin; NumPy data goes there too (an explicit, counted copy)."""
    x = gpuarr.ones((2, 2), device=device)
    e = np.array([], like=x, ndmin=2, dtype=np.float32)
    assert isinstance(e, gpuarr.Array) and e.device == device
    assert e.shape == (1, 0) and e.dtype == gpuarr.float32
    _check(np.asarray([1.0, 2.0], like=x), device, [1.0, 2.0])
    y = np.array(np.ones(2), like=x)
    assert isinstance(y, gpuarr.Array) and y.device == device
