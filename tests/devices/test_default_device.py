"""gpuarr.default_device(d): the device of arrays made without device= inside the
block (what libraries such as SciPy, xarray and array-api-extra make), per thread and
asyncio task, restored at the block's end, as `with gpu(i):`."""
import asyncio
import threading

import pytest

import gpuarr


def test_arrays_made_without_a_device_go_to_the_scope_device(device):
    with gpuarr.default_device(device) as d:
        assert d == device
        for x in (gpuarr.zeros(3), gpuarr.asarray([1.0, 2.0]), gpuarr.arange(4)):
            assert x.device == device
        assert gpuarr.__array_namespace_info__().default_device() == device
    assert gpuarr.zeros(3).device == gpuarr.get_default_device() == gpuarr.cpu()


def test_scopes_nest_and_restore_on_an_exception(two_gpus):
    g0, g1 = two_gpus
    with pytest.raises(RuntimeError):
        with gpuarr.default_device(g0):
            with gpuarr.default_device(g1):
                assert gpuarr.ones(1).device == g1
            assert gpuarr.ones(1).device == g0
            raise RuntimeError
    assert gpuarr.get_default_device() == gpuarr.cpu()


def test_another_thread_keeps_its_own_default(gpu_device):
    seen = []
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen.append(gpuarr.zeros(1).device)
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with gpuarr.default_device(gpu_device):
        inside.set()
        done.wait()
    t.join()
    assert seen == [gpuarr.cpu()]


def test_asyncio_tasks_keep_their_own_default(gpu_device):
    async def in_scope(entered, leave):
        with gpuarr.default_device(gpu_device):
            entered.set()
            await leave.wait()
            return gpuarr.zeros(1).device

    async def outside(entered, leave):
        await entered.wait()
        d = gpuarr.zeros(1).device
        leave.set()
        return d

    async def main():
        entered, leave = asyncio.Event(), asyncio.Event()
        return await asyncio.gather(in_scope(entered, leave), outside(entered, leave))

    assert asyncio.run(main()) == [gpu_device, gpuarr.cpu()]


@pytest.mark.parametrize("bad", ["gpu:0", 0, None])
def test_a_non_device_is_refused_with_the_spelling(bad):
    with pytest.raises(TypeError, match=r"gpuarr\.Device such as gpuarr\.gpu\(0\)"):
        with gpuarr.default_device(bad):
            pass
