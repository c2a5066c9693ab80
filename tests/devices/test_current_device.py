"""The current GPU of a thread or task (gpuarr.cuda.set_device, gpuarr.cuda.device,
`with gpu(i):`): a bare .cuda() on arrays and modules goes there, as in PyTorch."""
import asyncio
import threading

import pytest

import gpuarr
from gpuarr import nn


def test_current_device_is_gpu0_by_default(gpu_device):
    assert gpuarr.cuda.current_device() == 0
    assert gpuarr.ones(2).cuda().device == gpuarr.gpu(0)


def _in_thread(fn):
    """Run fn in a new thread (whose current device starts fresh) and raise what it
    raised."""
    errors = []

    def run():
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - raised again below
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if errors:
        raise errors[0]


def test_set_device_moves_bare_cuda(two_gpus):
    x = gpuarr.ones(3)

    def body():
        gpuarr.cuda.set_device(1)
        assert gpuarr.cuda.current_device() == 1
        assert x.cuda().device == gpuarr.gpu(1)
        assert nn.Linear(3, 2).cuda().weight.device == gpuarr.gpu(1)
        # where new arrays go is the default device's business, as in PyTorch
        assert gpuarr.ones(2).device == gpuarr.cpu()
        assert x.cuda(0).device == gpuarr.gpu(0)  # a number still wins
        assert x.cuda("gpu:0").device == gpuarr.gpu(0)

    _in_thread(body)
    assert gpuarr.cuda.current_device() == 0  # the main thread's did not change


def test_device_scope_restores_the_previous_one(two_gpus):
    with gpuarr.cuda.device(1):
        assert gpuarr.cuda.current_device() == 1
        assert gpuarr.ones(2).cuda().device == gpuarr.gpu(1)
        with gpuarr.cuda.device(0):
            assert gpuarr.cuda.current_device() == 0
        assert gpuarr.cuda.current_device() == 1
    assert gpuarr.cuda.current_device() == 0
    with gpuarr.cuda.device(None):  # PyTorch's no-op
        assert gpuarr.cuda.current_device() == 0


def test_with_gpu_and_default_device_set_the_current_device(two_gpus):
    x = gpuarr.ones(2)
    with gpuarr.gpu(1):
        assert gpuarr.cuda.current_device() == 1
        assert x.cuda().device == gpuarr.gpu(1)
        assert nn.Linear(2, 2).cuda().weight.device == gpuarr.gpu(1)
        with gpuarr.cuda.device(0):  # entered inside: wins inside
            assert x.cuda().device == gpuarr.gpu(0)
    with gpuarr.cuda.device(0):
        with gpuarr.gpu(1):  # entered inside: wins inside
            assert gpuarr.cuda.current_device() == 1
        assert gpuarr.cuda.current_device() == 0
    old = gpuarr.get_default_device()
    gpuarr.set_default_device(gpuarr.gpu(1))
    try:
        assert x.cuda().device == gpuarr.gpu(1)
    finally:
        gpuarr.set_default_device(old)
    assert gpuarr.cuda.current_device() == 0


def test_current_device_is_per_thread(two_gpus):
    seen = {}
    barrier = threading.Barrier(2)

    def run(i):
        gpuarr.cuda.set_device(i)
        barrier.wait()
        seen[i] = gpuarr.cuda.current_device()

    threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {0: 0, 1: 1}
    assert gpuarr.cuda.current_device() == 0


def test_current_device_is_per_task(two_gpus):
    async def task(i):
        with gpuarr.cuda.device(i):
            await asyncio.sleep(0.01)
            return gpuarr.cuda.current_device(), gpuarr.ones(1).cuda().device

    async def both():
        return await asyncio.gather(task(1), task(0))

    assert asyncio.run(both()) == [(1, gpuarr.gpu(1)), (0, gpuarr.gpu(0))]


def test_set_device_errors_say_what_is_wrong():
    n = gpuarr.num_gpus()
    with pytest.raises(Exception, match=rf"gpu\({n}\) does not exist"):
        gpuarr.cuda.set_device(n)
    with pytest.raises(ValueError, match="start at 0"):
        gpuarr.cuda.set_device(-1)
    with pytest.raises(ValueError, match="is not a GPU"):
        gpuarr.cuda.set_device(gpuarr.cpu())
    with pytest.raises(TypeError, match="GPU number"):
        gpuarr.cuda.device(1.5)


def test_counts_and_synchronize(device):
    assert gpuarr.cuda.device_count() == gpuarr.num_gpus()
    assert gpuarr.cuda.is_available() == (gpuarr.num_gpus() > 0)
    if device.type == "gpu":
        x = gpuarr.ones(100, device=device) * 2
        gpuarr.cuda.synchronize(device)
        gpuarr.cuda.synchronize(device.index)
        assert float(x.sum()) == 200.0


def test_the_later_of_set_device_and_set_default_device_wins(two_gpus):
    # set_device left at 0 by an earlier call (another test's, once) must not pin
    # the current device against a later set_default_device
    old = gpuarr.get_default_device()
    x = gpuarr.ones(2)
    gpuarr.cuda.set_device(0)
    try:
        gpuarr.set_default_device(gpuarr.gpu(1))
        assert gpuarr.cuda.current_device() == 1 and x.cuda().device == gpuarr.gpu(1)
        gpuarr.cuda.set_device(0)
        assert gpuarr.cuda.current_device() == 0 and x.cuda().device == gpuarr.gpu(0)
    finally:
        gpuarr.set_default_device(old)
