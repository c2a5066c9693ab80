"""gpuarr.parallel (scatter, gather, broadcast, reduce_add, allreduce) against NumPy on
one device (the CPU, or one GPU), every GPU of the process (2 in CI's GPU modes) and
three simulated GPUs (a subprocess), with the transfer ledger's counts: copies between
GPUs are device->device copies, and none of the helpers waits for a device."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpuarr
from gpuarr import parallel
from gpuarr.testing import assert_allclose, assert_array_equal

from conftest import DEVICES

GPUS = [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]
# Device lists: one device (each of the process's), every GPU, and the CPU with them.
LISTS = [[d] for d in DEVICES]
if len(GPUS) >= 2:
    LISTS += [GPUS, GPUS[::-1], [gpuarr.cpu()] + GPUS]
IDS = ["+".join(repr(d) for d in devs) for devs in LISTS]


def _peer(devs, src):
    """(d2d, h2d, d2h) counts of one copy from src to each other device of devs."""
    d2d = sum(1 for d in devs if d != src and d.type != "cpu" and src.type != "cpu")
    h2d = sum(1 for d in devs if d != src and src.type == "cpu")
    d2h = sum(1 for d in devs if d != src and d.type == "cpu" and src.type != "cpu")
    return d2d, h2d, d2h


def _counts(t):
    return t.d2d_count, t.h2d_count, t.d2h_count


@pytest.mark.parametrize("devs", LISTS, ids=IDS)
@pytest.mark.parametrize("n", [1, 2, 7, 10])
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64"])
def test_scatter_then_gather_gives_x_back(devs, n, dtype):
    a = (np.arange(n * 3) - 4).reshape(n, 3).astype(dtype)
    x = gpuarr.asarray(a, device=devs[0])
    with gpuarr.count_transfers() as t:
        chunks = parallel.scatter(x, devs)
    want = np.array_split(a, len(devs))
    assert [c.device for c in chunks] == devs
    for c, w in zip(chunks, want):
        assert_array_equal(c, w, strict=True)
    moved = [d for d, w in zip(devs, want) if d != devs[0] and w.size]
    assert _counts(t) == _peer([devs[0]] + moved, devs[0])
    assert t.syncs == 0
    with gpuarr.count_transfers() as t:
        y = parallel.gather(chunks, devs[-1])
    assert y.device == devs[-1]
    assert_array_equal(y, a, strict=True)
    assert t.syncs == 0


@pytest.mark.parametrize("devs", LISTS, ids=IDS)
def test_scatter_along_another_axis_of_a_strided_view(devs):
    a = np.arange(4 * 11 * 2, dtype=np.float64).reshape(4, 11, 2)
    x = gpuarr.asarray(a, device=devs[0])[::2, :, ::-1]
    chunks = parallel.scatter(x, devs, axis=-2)
    for c, w in zip(chunks, np.array_split(a[::2, :, ::-1], len(devs), axis=1)):
        assert_array_equal(c, w, strict=True)
    assert_array_equal(parallel.gather(chunks, devs[0], axis=1), a[::2, :, ::-1])


def test_chunk_sizes_follow_array_split():
    assert parallel.chunk_sizes(10, 3) == [4, 3, 3]
    assert parallel.chunk_sizes(2, 3) == [1, 1, 0]
    assert parallel.chunk_sizes(6, 2) == [3, 3]


@pytest.mark.parametrize("devs", LISTS, ids=IDS)
def test_broadcast_copies_to_each_device_once(devs):
    a = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    x = gpuarr.asarray(a, device=devs[0])
    with gpuarr.count_transfers() as t:
        copies = parallel.broadcast(x, devs)
    assert copies[0] is x
    for c, d in zip(copies, devs):
        assert_array_equal(c, a, strict=True, device=d)
    assert _counts(t) == _peer(devs, devs[0]) and t.syncs == 0


@pytest.mark.parametrize("devs", LISTS, ids=IDS)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_reduce_add_and_allreduce_sum_every_array(devs, dtype):
    rng = np.random.default_rng(len(devs))
    hosts = [rng.integers(-50, 50, (5, 3)).astype(dtype) for _ in devs]
    arrays = [gpuarr.asarray(h, device=d) for h, d in zip(hosts, devs)]
    want = sum(hosts)
    target = devs[-1]
    with gpuarr.count_transfers() as t:
        total = parallel.reduce_add(arrays, target)
    assert_array_equal(total, want, strict=True, device=target)
    assert t.syncs == 0
    assert total is not arrays[-1]
    for a, h in zip(arrays, hosts):  # the inputs are left alone
        assert_array_equal(a, h)
    with gpuarr.count_transfers() as t:
        out = parallel.allreduce(arrays)
    assert out == arrays
    for a, d in zip(arrays, devs):
        assert_array_equal(a, want, strict=True, device=d)
    # to the first array's device and back: 2 (n - 1) copies
    d2d, h2d, d2h = _peer(devs, devs[0])
    assert _counts(t) == (2 * d2d, h2d + d2h, h2d + d2h)
    assert t.syncs == t.d2h_count  # only a copy to the host waits (for its data)


@pytest.mark.parametrize("device", DEVICES, ids=repr)
def test_gradients_flow_through_scatter_broadcast_and_gather(device):
    devs = [device] + [g for g in GPUS if g != device]
    a = np.arange(12, dtype=np.float64).reshape(6, 2)
    x = gpuarr.asarray(a, device=device)
    x.requires_grad_(True)
    w = gpuarr.asarray(np.array([1.5, -2.0]), device=device)
    w.requires_grad_(True)
    parts = [c * wc for c, wc in zip(parallel.scatter(x, devs), parallel.broadcast(w, devs))]
    loss = (parallel.gather(parts, device) ** 2).sum()
    loss.backward()
    assert_allclose(x.grad, 2 * a * np.array([1.5, -2.0]) ** 2, device=device)
    assert_allclose(w.grad, (2 * a ** 2 * np.array([1.5, -2.0])).sum(0), device=device)


def test_bad_input_is_a_clear_error():
    x = gpuarr.ones((4, 2))
    with pytest.raises(TypeError, match="list of devices"):
        parallel.scatter(x, gpuarr.cpu())
    with pytest.raises(ValueError, match="at least one device"):
        parallel.scatter(x, [])
    with pytest.raises(ValueError, match="out of bounds"):
        parallel.scatter(x, [gpuarr.cpu()], axis=2)
    with pytest.raises(ValueError, match="0-d"):
        parallel.scatter(gpuarr.asarray(1.0), [gpuarr.cpu()])
    with pytest.raises(TypeError, match="gpuarr array"):
        parallel.scatter(np.ones(3), [gpuarr.cpu()])
    with pytest.raises(TypeError, match="list of gpuarr arrays"):
        parallel.allreduce(x)
    with pytest.raises(TypeError, match="item 1 is a ndarray"):
        parallel.reduce_add([x, np.ones((4, 2))], gpuarr.cpu())
    with pytest.raises(ValueError, match="item 1 has"):
        parallel.allreduce([x, gpuarr.ones((4, 3))])
    with pytest.raises(ValueError, match="at least one array"):
        parallel.gather([], gpuarr.cpu())


THREE = textwrap.dedent("""
    import numpy as np, gpuarr
    from gpuarr import parallel
    devs = [gpuarr.gpu(i) for i in range(3)]
    a = np.arange(30.).reshape(10, 3)
    x = gpuarr.asarray(a, device=devs[0])
    with gpuarr.count_transfers() as t:
        chunks = parallel.scatter(x, devs)
        y = parallel.gather(chunks, devs[2])
        arrays = parallel.broadcast(x * 1, devs)  # not x: allreduce writes in place
        parallel.allreduce(arrays)
        r = parallel.reduce_add(arrays, devs[1])
    assert [c.shape for c in chunks] == [(4, 3), (3, 3), (3, 3)]
    assert (t.d2d_count, t.h2d_count, t.d2h_count, t.syncs) == (2 + 2 + 2 + 4 + 2, 0, 0, 0), t
    for c, w in zip(chunks, np.array_split(a, 3)):
        np.testing.assert_array_equal(c.numpy(), w)
    np.testing.assert_array_equal(y.numpy(), a)
    for v in arrays:
        np.testing.assert_array_equal(v.numpy(), 3 * a)
    np.testing.assert_array_equal(r.numpy(), 9 * a)
    print("ok")
""")


def test_collectives_on_three_simulated_gpus():
    env = dict(os.environ, GPUARR_SIMULATE_GPUS="3")
    env.pop("GPUARR_CUDA_EMULATE", None)
    out = subprocess.run([sys.executable, "-c", THREE], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
