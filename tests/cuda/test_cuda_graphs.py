"""A captured step on a CUDA GPU is one CUDA graph launch (issue 45): the first replay
captures the plan's calls into a graph, every later replay launches it, with bitwise
the uncaptured step's results; a label out of range still raises at the read of the
loss; random numbers (dropout) draw anew at each launch, as the uncaptured step would;
a plan whose capture fails replays as its calls and says why; the graph's blocks go
when the step goes. The capture rules the backend relies on are checked by a self-test
that runs on the emulation and on a real GPU alike. On emulated devices or a real
GPU."""
import ctypes
import gc
import os

import numpy as np
import pytest

import gpuarr
from conftest import needs_cuda_devices
from gpuarr import optim
from gpuarr.testing import count_kernels

from capture_steps import batches, mlp, step_fn

pytestmark = needs_cuda_devices


@pytest.fixture
def dev():
    d = gpuarr.gpu(0)
    gpuarr.synchronize(d)
    return d


def _plugin():
    mode = gpuarr._core._gpu_mode()[0]
    name = "libgpuarr_cuda_emu.so" if mode == "emulated" else "libgpuarr_cuda.so"
    return ctypes.CDLL(os.path.join(os.path.dirname(gpuarr._core.__file__), name))


def test_the_capture_rules_hold_as_the_backend_expects(dev):
    # captured kernels wait for a launch, each launch runs them, a wait for the
    # capturing stream fails and invalidates the capture
    msg = ctypes.create_string_buffer(512)
    assert _plugin().gpuarr_cuda_selftest_graph(0, msg, 512) == 0, msg.value.decode()


def _sgd(ps):
    return optim.SGD(ps, lr=0.1, momentum=0.9)


def test_a_replay_is_one_graph_launch_with_the_uncaptured_results(dev):
    net_a, net_b = mlp(dev), mlp(dev)
    opt_a, opt_b = _sgd(net_a.parameters()), _sgd(net_b.parameters())
    step, captured = step_fn(net_a, opt_a), gpuarr.capture(step_fn(net_b, opt_b))
    data = batches(dev, 5)
    for i, (X, y) in enumerate(data):
        want = step(X, y)
        if i < 3:
            got = captured(X, y)
        else:  # a replay on its own input buffers: no copy in
            captured.inputs[0][...], captured.inputs[1][...] = X, y
            gpuarr.synchronize(dev)
            with count_kernels(dev) as k:
                got = captured(*captured.inputs)
            assert (k.launches, k.graph_launches, k.syncs, k.h2d, k.d2h) == (1, 1, 0, 0, 0), k
            assert k.graph_kernels >= 10, k
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert captured.plan_replays == 3
    info = captured.plan_info()
    assert info["graph"] is True and info["graph_reason"] is None, info
    for p, q in zip(net_a.parameters(), net_b.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_a_label_out_of_range_raises_at_the_read_of_a_replayed_loss(dev):
    net = mlp(dev)
    captured = gpuarr.capture(step_fn(net, _sgd(net.parameters())))
    (X, y), = batches(dev, 1)
    for _ in range(3):
        captured(X, y).numpy()
    assert captured.plan_info()["graph"] is True
    bad = gpuarr.asarray(np.array([0, 1, 2, 7, 0, 1]), device=dev)
    loss = captured(X, bad)  # queued: nothing waits yet
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis with size 3"):
        loss.numpy()
    # as the uncaptured step's parameters would: the failure flowed into them
    with pytest.raises(IndexError, match="out of bounds"):
        net[0].weight.numpy()


def test_a_dropout_step_is_one_graph_launch_that_draws_anew_each_replay(dev):
    # each replay draws what the uncaptured step draws from the generator's state of
    # that moment: the graph's random calls read the seed and counter from device words
    # written before the launch (its one copy in)
    net_a, net_b = mlp(dev, dropout=0.5), mlp(dev, dropout=0.5)
    opt_a, opt_b = _sgd(net_a.parameters()), _sgd(net_b.parameters())
    step, captured = step_fn(net_a, opt_a), gpuarr.capture(step_fn(net_b, opt_b))
    data = batches(dev, 6)
    for i, (X, y) in enumerate(data):
        # two seeds, and the counter moved on by a draw of 4 i words, before each step
        def reseed():
            gpuarr.random.seed(100 + i % 2)
            gpuarr.random.uniform(size=4 * i, device=dev)

        reseed()
        want = step(X, y)
        after = gpuarr.random.get_state()
        reseed()
        if i < 3:
            got = captured(X, y)
        else:
            captured.inputs[0][...], captured.inputs[1][...] = X, y
            gpuarr.synchronize(dev)
            with count_kernels(dev) as k:
                got = captured(*captured.inputs)
            assert (k.launches, k.graph_launches, k.syncs, k.h2d, k.d2h) == (1, 1, 0, 1, 0), k
        assert gpuarr.random.get_state() == after
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    info = captured.plan_info()
    assert info["graph"] is True and info["graph_reason"] is None, info
    for p, q in zip(net_a.parameters(), net_b.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_a_replay_whose_counter_aligns_otherwise_runs_its_calls(dev):
    # float64 normals take 4 words an element, aligned to 4: after an odd count of
    # float32 words drawn outside the step, the graph's offsets no longer hold, and that
    # replay runs as calls, with the uncaptured draws; the next aligned one is a graph
    def draw(x):
        return x + gpuarr.random.normal(size=(3,), dtype=gpuarr.float64, device=dev)

    captured = gpuarr.capture(draw)
    x = gpuarr.zeros(3, dtype=gpuarr.float64, device=dev)
    # float32 words drawn before each call; the first replay (call 2) makes the graph
    # from a counter that is a multiple of 4
    extra = [1, 2, 4, 3, 8, 1, 0, 2]
    for i, n in enumerate(extra):
        gpuarr.random.seed(5)
        gpuarr.random.uniform(size=n, dtype=gpuarr.float32, device=dev)
        want, after = draw(x).numpy(), gpuarr.random.get_state()
        gpuarr.random.seed(5)
        gpuarr.random.uniform(size=n, dtype=gpuarr.float32, device=dev)
        gpuarr.synchronize(dev)
        with count_kernels(dev) as k:
            got = captured(x).numpy()
        np.testing.assert_array_equal(got, want)
        assert gpuarr.random.get_state() == after
        if i >= 2:
            assert k.graph_launches == (n % 4 == 0), (i, k)
    assert captured.plan_info()["graph"] is True


def test_a_failed_capture_replays_as_calls_with_the_same_results(dev, monkeypatch):
    net_a, net_b = mlp(dev), mlp(dev)
    step = step_fn(net_a, _sgd(net_a.parameters()))
    captured = gpuarr.capture(step_fn(net_b, _sgd(net_b.parameters())))
    if gpuarr._core._gpu_mode()[0] != "emulated":
        pytest.skip("the failure is injected into the emulated runtime")
    data = batches(dev, 4)
    for i, (X, y) in enumerate(data):
        if i == 2:  # the first replay captures: its instantiation fails
            monkeypatch.setenv("GPUARR_CUDA_EMULATE_FAIL", "cudaGraphInstantiate")
        np.testing.assert_array_equal(captured(X, y).numpy(), step(X, y).numpy())
        monkeypatch.delenv("GPUARR_CUDA_EMULATE_FAIL", raising=False)
    info = captured.plan_info()
    assert info["graph"] is False and "capture failed" in info["graph_reason"], info
    assert "cudaGraphInstantiate" in info["graph_reason"], info
    for p, q in zip(net_a.parameters(), net_b.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_the_graph_blocks_go_back_when_the_step_goes(dev):
    def allocated():
        gpuarr.synchronize(dev)
        gc.collect()
        return gpuarr.memory_stats(dev)["allocated_bytes"]

    net = mlp(dev)
    opt = _sgd(net.parameters())
    (X, y), = batches(dev, 1)
    step_fn(net, opt)(X, y)  # the optimizer's state, before the baseline
    before = allocated()
    captured = gpuarr.capture(step_fn(net, opt))
    for _ in range(4):
        captured(X, y)
    assert captured.plan_info()["graph"] is True
    assert allocated() > before
    del captured
    assert allocated() == before
