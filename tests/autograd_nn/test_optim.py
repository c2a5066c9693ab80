"""gpuarr.optim: each step against the same update written in NumPy, on every device;
updates in place on each parameter's own device, state made there, no host transfer
and no host wait per step; parameter groups, state dicts and errors."""
import math

import numpy as np
import pytest

import gpuarr
from gpuarr import nn, optim
from conftest import needs_cuda_devices
from gpuarr.testing import assert_transfers, count_kernels

STEPS = 4


def put(a, device):
    return gpuarr.asarray(np.array(a), device=device)  # a copy: steps write in place


def grads(shape, dtype, steps=STEPS, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for _ in range(steps)]


def np_sgd(p, gs, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    p, buf, out = p.copy(), None, []
    for g in gs:
        g = g + weight_decay * p if weight_decay else g
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
        out.append(p.copy())
    return out


def np_adam(p, gs, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    p, out = p.copy(), []
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(gs, 1):
        g = g + weight_decay * p if weight_decay else g
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        denom = np.sqrt(v) / np.sqrt(1 - betas[1] ** t) + eps
        p = p - lr / (1 - betas[0] ** t) * m / denom
        out.append(p.copy())
    return out


def run_steps(make, p0, gs, device):
    """Step an optimizer with the given gradients; the parameter after each step."""
    p = nn.Parameter(put(p0, device))
    opt = make([p])
    out = []
    for g in gs:
        p.grad = put(g, device)
        opt.step()
        out.append(p.numpy())
    return p, out


TOL = {"float32": dict(rtol=2e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-14)}

SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.1, weight_decay=0.01),
    dict(lr=0.05, momentum=0.5, weight_decay=0.1, nesterov=True),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", SGD_CASES, ids=[str(k) for k in SGD_CASES])
def test_sgd_matches_numpy_step_by_step(device, dtype, kw):
    p0 = np.random.default_rng(1).standard_normal((3, 4)).astype(dtype)
    gs = grads((3, 4), dtype)
    _, got = run_steps(lambda ps: optim.SGD(ps, **kw), p0, gs, device)
    for a, b in zip(got, np_sgd(p0, gs, **kw)):
        np.testing.assert_allclose(a, b, **TOL[dtype])


ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.1, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.01, weight_decay=0.1),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", ADAM_CASES, ids=[str(k) for k in ADAM_CASES])
def test_adam_matches_numpy_step_by_step(device, dtype, kw):
    p0 = np.random.default_rng(2).standard_normal((5,)).astype(dtype)
    gs = grads((5,), dtype)
    _, got = run_steps(lambda ps: optim.Adam(ps, **kw), p0, gs, device)
    # sqrt is correctly rounded on every device; float32 steps differ in the last bits
    for a, b in zip(got, np_adam(p0, gs, **kw)):
        np.testing.assert_allclose(a, b, **TOL[dtype])


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps)], ids=["SGD", "Adam"])
def test_step_updates_in_place_with_state_on_the_parameters_device(device, make):
    p = nn.Parameter(gpuarr.ones(3, device=device))
    opt = make([p])
    storage = p._storage_id
    p.grad = gpuarr.ones(3, device=device)
    opt.step()
    assert p._storage_id == storage and p.device == device and p.requires_grad
    arrays = [v for v in opt.state[p].values() if isinstance(v, gpuarr.Array)]
    assert arrays and all(a.device == device for a in arrays)
    assert (p.numpy() < 1).all()


def test_parameters_spread_over_devices_are_each_updated_where_they_live(two_gpus):
    devices = [gpuarr.cpu(), *two_gpus]
    ps = [nn.Parameter(gpuarr.ones(4, device=d)) for d in devices]
    for make in (lambda: optim.SGD(ps, lr=0.5, momentum=0.9), lambda: optim.Adam(ps, lr=0.5)):
        opt = make()
        for _ in range(2):
            for p in ps:
                p.grad = gpuarr.full((4,), 2.0, device=p.device)
            opt.step()
        for p, d in zip(ps, devices):
            assert p.device == d
            assert all(v.device == d for v in opt.state[p].values()
                       if isinstance(v, gpuarr.Array))
        np.testing.assert_array_equal(ps[1].numpy(), ps[0].numpy())
        np.testing.assert_array_equal(ps[2].numpy(), ps[0].numpy())


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.1),
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True),
    lambda ps: optim.Adam(ps, weight_decay=0.01),
], ids=["SGD", "SGD-nesterov", "Adam"])
def test_a_step_makes_no_host_transfer_and_no_host_wait(gpu_device, make):
    ps = [nn.Parameter(gpuarr.ones((8, 8), device=gpu_device)),
          nn.Parameter(gpuarr.ones(8, device=gpu_device))]
    opt = make(ps)
    for p in ps:
        p.grad = gpuarr.ones(p.shape, device=gpu_device)
    opt.step()  # the first step makes the state (on the device, no copy either)
    with assert_transfers(max_h2d=0, max_d2h=0, max_d2d=0, max_syncs=0):
        with count_kernels(gpu_device) as k:
            for _ in range(3):
                opt.step()
                opt.zero_grad(set_to_none=False)
    assert k.syncs == 0 and k.h2d == 0 and k.d2h == 0
    assert not k.supported or k.launches >= 3 * len(ps)  # the work ran on the GPU


def test_parameters_without_a_gradient_are_left_alone(device):
    a = nn.Parameter(gpuarr.ones(2, device=device))
    b = nn.Parameter(gpuarr.ones(2, device=device))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = gpuarr.ones(2, device=device)
    opt.step()
    np.testing.assert_array_equal(b.numpy(), [1.0, 1.0])
    assert b not in opt.state and a in opt.state and opt.state[a]["step"] == 1


def test_zero_grad_clears_or_zeroes_every_gradient(device):
    ps = [nn.Parameter(gpuarr.ones(2, device=device)) for _ in range(2)]
    opt = optim.SGD(ps, lr=0.1)
    for p in ps:
        p.grad = gpuarr.ones(2, device=device)
    g = ps[0].grad
    opt.zero_grad(set_to_none=False)
    assert ps[0].grad is g
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert all(p.grad is None for p in ps)


def test_parameter_groups_have_their_own_hyperparameters(device):
    a = nn.Parameter(gpuarr.ones(2, device=device))
    b = nn.Parameter(gpuarr.ones(2, device=device))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    a.grad = gpuarr.ones(2, device=device)
    b.grad = gpuarr.ones(2, device=device)
    opt.step()
    np.testing.assert_allclose(a.numpy(), [0.9, 0.9])
    np.testing.assert_allclose(b.numpy(), [0.5, 0.5])
    opt.param_groups[0]["lr"] = 0.0  # a schedule changes lr between steps
    opt.step()
    np.testing.assert_allclose(a.numpy(), [0.9, 0.9])
    c = nn.Parameter(gpuarr.ones(1, device=device))
    opt.add_param_group({"params": [c], "momentum": 0.9})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["momentum"] == 0.9


def test_state_dict_round_trip_continues_the_same_trajectory(device):
    p0, gs = np.arange(3, dtype=np.float32), grads((3,), "float32", steps=4)
    full, _ = run_steps(lambda ps: optim.Adam(ps, lr=0.1), p0, gs, device)
    p = nn.Parameter(put(p0, device))
    opt = optim.Adam([p], lr=0.1)
    for g in gs[:2]:
        p.grad = put(g, device)
        opt.step()
    saved = opt.state_dict()
    assert saved["param_groups"][0]["params"] == [0] and saved["state"][0]["step"] == 2
    q = nn.Parameter(p.detach().copy())
    opt2 = optim.Adam([q], lr=1.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.state[q]["step"] == 2
    assert opt2.state[q]["exp_avg"]._storage_id != opt.state[p]["exp_avg"]._storage_id
    for g in gs[2:]:
        q.grad = put(g, device)
        opt2.step()
    np.testing.assert_array_equal(q.numpy(), full.numpy())


def test_optimizers_take_a_models_parameters(device):
    net = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1)).to(device)
    opt = optim.SGD(net.parameters(), lr=0.1)
    assert len(opt.param_groups[0]["params"]) == 4
    assert "lr: 0.1" in repr(opt) and repr(opt).startswith("SGD (")


def test_optimizer_arguments_are_checked():
    p = nn.Parameter(gpuarr.ones(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="wrap it in a list"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="gpuarr arrays"):
        optim.SGD([np.ones(2)], lr=0.1)
    with pytest.raises(ValueError, match="invalid lr"):
        optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="betas"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="more than once"):
        optim.SGD([p, p], lr=0.1)
    with pytest.raises(TypeError, match="unknown hyperparameters"):
        optim.SGD([{"params": [p], "lrr": 0.1}], lr=0.1)


def test_an_optimizer_made_before_the_model_moved_says_so_instead_of_not_learning(
        gpu_device):
    net = nn.Sequential(nn.Linear(2, 1))
    opt = optim.SGD(net.parameters(), lr=0.1)  # holds the CPU parameters
    net.to(gpu_device)
    for p in net.parameters():
        p.grad = gpuarr.ones(p.shape, device=gpu_device)  # what backward() gives
    with pytest.raises(RuntimeError, match=r"moved to gpu\(0\) after the optimizer was "
                                           r"made.*optim.SGD\(net.parameters\(\)"):
        opt.step()
    optim.SGD(net.parameters(), lr=0.1).step()  # made after the move: fine


def _operator_sgd(p, grad, buf, lr, mom, wd, nesterov):
    grad = grad + wd * p
    if buf is None:
        buf = grad.copy()
    else:
        buf *= mom
        buf += 1.0 * grad
    grad = grad + mom * buf if nesterov else buf
    p -= lr * grad
    return buf


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_updates_equal_the_operator_forms_bit_for_bit(device, dtype):
    # the optimizers run their rules as gpuarr.fuse chains: same arithmetic, same
    # rounding as the in-place operators they replaced, one pass each
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal((17, 5)).astype(dtype)
    grads = [rng.standard_normal((17, 5)).astype(dtype) for _ in range(3)]
    # copies: on the CPU, asarray of a NumPy array shares its memory
    p = nn.Parameter(gpuarr.asarray(w0.copy(), device=device))
    opt = optim.SGD([p], lr=1.5, momentum=0.9, weight_decay=0.01, nesterov=True)
    ref, buf = gpuarr.asarray(w0.copy(), device=device), None
    for g in grads:
        p.grad = gpuarr.asarray(g, device=device)
        opt.step()
        buf = _operator_sgd(ref, gpuarr.asarray(g, device=device), buf, 1.5, 0.9, 0.01, True)
    assert np.array_equal(p.detach().numpy(), ref.numpy())

    q = nn.Parameter(gpuarr.asarray(w0.copy(), device=device))
    # a large lr: the update's last bits must reach the parameter's
    adam = optim.Adam([q], lr=3.0, weight_decay=0.01)
    ref = gpuarr.asarray(w0.copy(), device=device)
    m, v = gpuarr.zeros_like(ref), gpuarr.zeros_like(ref)
    for t, g in enumerate(grads, 1):
        q.grad = gpuarr.asarray(g, device=device)
        adam.step()
        gr = gpuarr.asarray(g, device=device) + 0.01 * ref
        m *= 0.9
        m += (1.0 - 0.9) * gr
        v *= 0.999
        v += (1.0 - 0.999) * (gr * gr)
        denom = v.sqrt() / math.sqrt(1.0 - 0.999 ** t) + 1e-8
        ref -= 3.0 / (1.0 - 0.9 ** t) * (m / denom)
    assert np.array_equal(q.detach().numpy(), ref.numpy())
    assert np.array_equal(adam.state[q]["exp_avg"].numpy(), m.numpy())
    assert np.array_equal(adam.state[q]["exp_avg_sq"].numpy(), v.numpy())


@needs_cuda_devices
def test_an_adam_step_is_four_kernels_per_parameter_on_cuda():
    d = gpuarr.gpu(0)
    p = nn.Parameter(gpuarr.ones((64, 64), device=d))
    opt = optim.Adam([p], weight_decay=0.01)
    p.grad = gpuarr.ones((64, 64), device=d)
    opt.step()
    with count_kernels(d) as k:
        opt.step()
    # weight decay, both moments, the update: one fused kernel each (12 unfused)
    assert k.launches == 4 and k.syncs == 0, k
