"""`with device:` scopes follow the code, not the thread: asyncio tasks and threads each
see their own default device, and __exit__ restores the device that was current at
the matching __enter__, even when scopes of a generator and its caller interleave.

(A generator suspended inside a `with` shares its caller's context, as for
decimal.localcontext and numpy.errstate: Python gives generators no context of their
own. What gpuarr guarantees is that each scope's exit undoes exactly its own entry.)"""
import asyncio
import threading

import pytest

import gpuarr


@pytest.fixture
def two_devices():
    """Two devices that differ: gpu(0)/gpu(1) where GPUs exist, else gpu(5)/gpu(6)
    (entering a scope does not touch the device)."""
    if gpuarr.num_gpus() >= 2:
        return gpuarr.gpu(0), gpuarr.gpu(1)
    return gpuarr.gpu(5), gpuarr.gpu(6)


def test_interleaved_asyncio_tasks_see_their_own_device(two_devices):
    seen = {}

    async def task(name, dev, ev_in, ev_out):
        with dev:
            ev_in.set()
            await ev_out.wait()  # the other task enters its own scope meanwhile
            seen[name] = gpuarr.get_default_device()
        seen[name + " after"] = gpuarr.get_default_device()

    async def main():
        a_in, a_out, b_in, b_out = (asyncio.Event() for _ in range(4))
        ta = asyncio.create_task(task("a", two_devices[0], a_in, a_out))
        await a_in.wait()
        tb = asyncio.create_task(task("b", two_devices[1], b_in, b_out))
        await b_in.wait()
        a_out.set()  # a leaves first, while b is still inside its scope
        await ta
        b_out.set()
        await tb
        seen["main"] = gpuarr.get_default_device()

    asyncio.run(main())
    assert seen["a"] == two_devices[0]
    assert seen["b"] == two_devices[1]
    assert seen["a after"] == gpuarr.cpu() and seen["b after"] == gpuarr.cpu()
    assert seen["main"] == gpuarr.cpu()


def test_generator_scopes_undo_their_own_entry(two_devices):
    d0, d1 = two_devices

    def gen():
        with d1:
            yield gpuarr.get_default_device()
        yield gpuarr.get_default_device()

    g = gen()
    with d0:
        assert next(g) == d1  # the generator entered its scope
    # The caller's scope ended: its exit restored what was current at its enter (the
    # CPU), not "whatever was on top" (which left d0 or d1 behind).
    assert gpuarr.get_default_device() != d0
    assert next(g) == gpuarr.cpu()  # the generator's exit undid only its own entry
    assert gpuarr.get_default_device() == gpuarr.cpu()


def test_an_abandoned_generator_scope_is_undone_when_it_closes(two_devices):
    def gen():
        with two_devices[1]:
            yield
    g = gen()
    next(g)
    g.close()
    assert gpuarr.get_default_device() == gpuarr.cpu()


def test_threads_see_their_own_device(two_devices):
    barrier = threading.Barrier(2)
    seen = {}

    def worker(i):
        with two_devices[i]:
            barrier.wait()
            seen[i] = gpuarr.get_default_device()
            barrier.wait()
        seen[i, "after"] = gpuarr.get_default_device()

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen[0] == two_devices[0] and seen[1] == two_devices[1]
    assert seen[0, "after"] == gpuarr.cpu() and seen[1, "after"] == gpuarr.cpu()


def test_nested_scopes_of_one_device_object(two_devices):
    d0, d1 = two_devices
    with d0:
        with d1:
            with d0:
                assert gpuarr.get_default_device() == d0
            assert gpuarr.get_default_device() == d1
        assert gpuarr.get_default_device() == d0
    assert gpuarr.get_default_device() == gpuarr.cpu()


def test_creation_uses_the_scope(device):
    with device:
        assert gpuarr.ones(3).device == device
    assert gpuarr.ones(3).device == gpuarr.cpu()
