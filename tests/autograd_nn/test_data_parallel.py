"""nn.DataParallel: the same gradients and training steps as the module on one device
(within float tolerance: the batch's rows are summed in another order), no host wait
in a forward and backward pass, and the module itself where there is one device."""
import numpy as np
import pytest

import gpuarr
from gpuarr import nn, optim
from gpuarr.testing import assert_allclose

GPUS = [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]


def _net(seed=0):
    rng = np.random.default_rng(seed)
    net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    for p in net.parameters():  # the same weights for every copy of the test's net
        p.detach()[...] = gpuarr.asarray(rng.standard_normal(p.shape).astype("float32") * 0.5,
                                device=p.device)
    return net


def _batch(n=10, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, 6)).astype("float32"),
            rng.integers(0, 3, n).astype("int64"))


def _grads(net, X, y, device):
    net.zero_grad()
    loss = nn.CrossEntropyLoss()(net(gpuarr.asarray(X, device=device)),
                                 gpuarr.asarray(y, device=device))
    loss.backward()
    return loss, [p.grad for p in net.parameters()]


def _devices_lists():
    lists = [[gpuarr.cpu()]]
    if len(GPUS) >= 2:
        lists += [GPUS, GPUS[::-1]]
    return lists


@pytest.mark.parametrize("devs", _devices_lists(), ids=lambda ds: "+".join(map(repr, ds)))
@pytest.mark.parametrize("n", [10, 1])
def test_gradients_equal_one_devices(devs, n):
    X, y = _batch(n)
    one = _net().to(devs[0])
    loss1, g1 = _grads(one, X, y, devs[0])
    dp = nn.DataParallel(_net().to(devs[0]), devices=devs)
    loss2, g2 = _grads(dp, X, y, devs[0])
    assert loss2.device == devs[0]
    assert_allclose(loss2, loss1.numpy(), rtol=1e-5)
    for a, b, p in zip(g2, g1, dp.module.parameters()):
        assert a.device == devs[0] == p.device
        assert_allclose(a, b.numpy(), rtol=1e-5, atol=1e-6)


def test_training_steps_follow_one_devices():
    if len(GPUS) < 2:
        pytest.skip("needs two GPUs (set GPUARR_SIMULATE_GPUS=2 to simulate them)")
    one, dp = _net().to(GPUS[0]), nn.DataParallel(_net().to(GPUS[0]))
    assert dp.devices == GPUS
    opts = [optim.SGD(one.parameters(), lr=0.1), optim.SGD(dp.parameters(), lr=0.1)]
    for step in range(3):
        X, y = _batch(8, seed=step)
        for net, opt in zip((one, dp), opts):
            _grads(net, X, y, GPUS[0])
            opt.step()
    for a, b in zip(dp.module.parameters(), one.parameters()):
        assert_allclose(a, b.numpy(), rtol=1e-4, atol=1e-5)


def test_a_forward_and_backward_pass_never_waits():
    if len(GPUS) < 2:
        pytest.skip("needs two GPUs (set GPUARR_SIMULATE_GPUS=2 to simulate them)")
    dp = nn.DataParallel(_net().to(GPUS[0]), devices=GPUS[:2])
    X, y = (gpuarr.asarray(a, device=GPUS[0]) for a in _batch(10))
    with gpuarr.count_transfers() as t:
        nn.CrossEntropyLoss()(dp(X), y).backward()
    # forward: 4 parameters and 1 chunk to gpu(1), its output back; backward: the
    # output's gradient to gpu(1), the 4 parameters' back (X needs none)
    assert (t.d2d_count, t.h2d_count, t.d2h_count, t.syncs) == (11, 0, 0, 0), t


def test_backward_feeds_the_other_device_first_and_copies_gradients_home_last(
        monkeypatch):
    """Each device's queue is in order and a copy between two devices is a task on
    both, so the order in which backward queues the nodes decides whether the
    replicas' backward passes overlap (autograd._Ready). The gradient's copy to
    gpu(1) comes before anything of gpu(1)'s; the replica's parameter gradients go
    home to gpu(0) only after every other node of the pass (queued earlier, gpu(0)
    would wait there for gpu(1)'s whole backward pass before doing its own)."""
    if len(GPUS) < 2:
        pytest.skip("needs two GPUs (set GPUARR_SIMULATE_GPUS=2 to simulate them)")
    from gpuarr import autograd
    seen = []
    node_grads = autograd._node_grads

    def recording(node, g):
        x = node._edges()[0][1]
        cross = node._op == autograd._TO and g is not None and x.device != g.device
        seen.append(("home" if cross and x.grad_fn is None else
                     "feed" if cross else "node", g.device if g is not None else None))
        return node_grads(node, g)

    monkeypatch.setattr(autograd, "_node_grads", recording)
    net = nn.Sequential(_net(), nn.ReLU(), nn.Linear(3, 3))
    dp = nn.DataParallel(net.to(GPUS[0]), devices=GPUS[:2])
    X, y = (gpuarr.asarray(a, device=GPUS[0]) for a in _batch(10))
    nn.CrossEntropyLoss()(dp(X), y).backward()
    kinds = [k for k, _ in seen]
    assert kinds.count("feed") == 1 and kinds.count("home") == 6, seen
    first_home = kinds.index("home")
    assert set(kinds[first_home:]) == {"home"}, seen
    on_gpu1 = [i for i, (k, dev) in enumerate(seen) if k == "node" and dev == GPUS[1]]
    assert on_gpu1 and kinds.index("feed") < on_gpu1[0], seen


def test_one_device_is_the_module_itself():
    net = _net()
    dp = nn.DataParallel(net, devices=[gpuarr.cpu()])
    X = gpuarr.asarray(_batch(4)[0])
    with gpuarr.count_transfers() as t:
        out = dp(X)
    assert (t.d2d_count, t.h2d_count, t.d2h_count) == (0, 0, 0)
    assert_allclose(out, net(X).numpy())
    assert list(dp.state_dict()) == ["module." + k for k in net.state_dict()]
    if not GPUS:  # a machine without a GPU: devices=None is [cpu()]
        assert nn.DataParallel(net).devices == [gpuarr.cpu()]


def test_bad_use_is_a_clear_error():
    with pytest.raises(TypeError, match="wraps a gpuarr.nn.Module"):
        nn.DataParallel(lambda x: x)
    with pytest.raises(ValueError, match="at least one device"):
        nn.DataParallel(_net(), devices=[])
    with pytest.raises(ValueError, match="each device once"):
        nn.DataParallel(_net(), devices=[gpuarr.cpu(), gpuarr.cpu()])
    if len(GPUS) >= 2:
        dp = nn.DataParallel(_net(), devices=GPUS)  # the net is on the CPU
        with pytest.raises(RuntimeError, match=r"must live on devices\[0\]"):
            dp(gpuarr.ones((4, 6), device=GPUS[0]))
