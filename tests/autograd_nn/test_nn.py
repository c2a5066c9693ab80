"""gpuarr.nn: modules, parameters on devices, PyTorch-like initialisation, state dicts."""
import math

import numpy as np
import pytest

import gpuarr
from gpuarr import nn


def test_linear_has_pytorch_shapes_and_dtype(device):
    lin = nn.Linear(5, 3, device=device)
    assert lin.weight.shape == (3, 5) and lin.bias.shape == (3,)
    assert lin.weight.dtype == gpuarr.float32
    assert lin.weight.device == device and lin.bias.device == device


def test_linear_init_is_uniform_within_one_over_sqrt_in_features():
    gpuarr.random.seed(1)
    lin = nn.Linear(64, 200)
    k = 1 / math.sqrt(64)
    w, b = lin.weight.numpy(), lin.bias.numpy()
    assert w.min() >= -k and w.max() <= k and b.min() >= -k and b.max() <= k
    assert w.min() < -0.8 * k and w.max() > 0.8 * k  # spread over the interval
    assert abs(w.mean()) < 0.1 * k


def test_linear_init_is_the_same_on_every_device_for_one_seed(device):
    gpuarr.random.seed(7)
    a = nn.Linear(4, 3).weight.numpy()
    gpuarr.random.seed(7)
    b = nn.Linear(4, 3, device=device).weight.numpy()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_forward_is_x_times_w_transposed_plus_b(device, dtype):
    lin = nn.Linear(4, 3, device=device, dtype=dtype)
    x = np.arange(8, dtype=dtype).reshape(2, 4) / 8
    y = lin(gpuarr.asarray(x, device=device))
    assert y.device == device and y.shape == (2, 3) and y.dtype == dtype
    ref = x @ lin.weight.numpy().T + lin.bias.numpy()
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5)


def test_linear_without_bias(device):
    lin = nn.Linear(2, 2, bias=False, device=device)
    assert lin.bias is None and len(list(lin.parameters())) == 1
    x = gpuarr.asarray(np.eye(2, dtype=np.float32), device=device)
    np.testing.assert_allclose(lin(x).numpy(), lin.weight.numpy().T, rtol=1e-6)


def test_linear_rejects_non_positive_features():
    with pytest.raises(ValueError):
        nn.Linear(0, 3)


def test_relu_is_maximum_with_zero(device):
    x = gpuarr.asarray(np.array([-2.0, 0.0, 3.0], np.float32), device=device)
    y = nn.ReLU()(x)
    assert y.device == device
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.0, 3.0])


def test_sequential_indexing_len_iteration_and_slices():
    a, r, b = nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1)
    net = nn.Sequential(a, r, b)
    assert len(net) == 3 and net[0] is a and net[-1] is b and list(net) == [a, r, b]
    assert isinstance(net[1:], nn.Sequential) and list(net[1:]) == [r, b]
    with pytest.raises(IndexError, match="out of range"):
        net[3]
    assert net.add(nn.ReLU()) is net and len(net) == 4
    with pytest.raises(TypeError):
        net.add(3)


def test_sequential_forward_chains_the_modules(device):
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to(device)
    x = np.random.default_rng(0).random((5, 3), dtype=np.float32)
    h = np.maximum(x @ net[0].weight.numpy().T + net[0].bias.numpy(), 0)
    ref = h @ net[2].weight.numpy().T + net[2].bias.numpy()
    y = net(gpuarr.asarray(x, device=device))
    assert y.device == device
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_named_parameters_use_dotted_names_in_order():
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1, bias=False))
    assert [k for k, _ in net.named_parameters()] == ["0.weight", "0.bias", "2.weight"]
    assert list(net.state_dict()) == ["0.weight", "0.bias", "2.weight"]
    sd = net.state_dict()
    # detached views of the parameters: the same memory, no graph
    assert sd["0.weight"]._storage_id == net[0].weight._storage_id
    assert not sd["0.weight"].requires_grad
    assert net.state_dict(keep_vars=True)["0.weight"] is net[0].weight


def test_custom_modules_register_children_and_parameters_by_assignment(device):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = nn.Linear(2, 3)
            self.scale = gpuarr.ones((3,))
            self.note = "not a parameter"

        def forward(self, x):
            return self.hidden(x) * self.scale

    net = Net()
    assert [k for k, _ in net.named_parameters()] == ["scale", "hidden.weight",
                                                      "hidden.bias"]
    assert list(net.children()) == [net.hidden] and net.note == "not a parameter"
    assert net.to(device) is net
    assert all(p.device == device for p in net.parameters())
    assert net(gpuarr.ones((1, 2), device=device)).device == device


def test_module_needs_super_init_before_parameters():
    class Bad(nn.Module):
        def __init__(self):
            self.w = gpuarr.ones((1,))

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Bad()


def test_to_moves_every_parameter_and_returns_the_module(device):
    net = nn.Sequential(nn.Linear(3, 2), nn.Sequential(nn.Linear(2, 2)))
    values = {k: v.numpy() for k, v in net.named_parameters()}
    assert net.to(device) is net
    for k, v in net.named_parameters():
        assert v.device == device
        np.testing.assert_array_equal(v.numpy(), values[k])
    assert net[1][0].weight.device == device
    assert net.cpu() is net and net[0].weight.device == gpuarr.cpu()


def test_to_accepts_strings_and_the_device_keyword(gpu_device):
    net = nn.Sequential(nn.Linear(3, 1))
    assert net.to(device="gpu:0")[0].weight.device == gpuarr.gpu(0)
    assert net.to("cpu")[0].weight.device == gpuarr.cpu()


def test_to_the_same_device_keeps_the_parameter_objects():
    net = nn.Sequential(nn.Linear(3, 1))
    w = net[0].weight
    net.to(gpuarr.cpu())
    assert net[0].weight is w


def test_forward_with_input_on_another_device_raises_mismatch(gpu_device):
    net = nn.Sequential(nn.Linear(3, 1)).to(gpu_device)
    with pytest.raises(gpuarr.DeviceMismatchError):
        net(gpuarr.ones((2, 3)))


def test_load_state_dict_copies_into_the_parameters_keeping_device_and_identity(device):
    src = nn.Sequential(nn.Linear(3, 2))
    dst = nn.Sequential(nn.Linear(3, 2)).to(device)
    w = dst[0].weight
    result = dst.load_state_dict(src.state_dict())
    assert result == ([], [])
    assert dst[0].weight is w and w.device == device
    np.testing.assert_array_equal(w.numpy(), src[0].weight.numpy())


def test_load_state_dict_accepts_numpy_arrays():
    net = nn.Sequential(nn.Linear(2, 1))
    net.load_state_dict({"0.weight": np.array([[1.0, 2.0]]), "0.bias": np.array([0.5])})
    np.testing.assert_array_equal(net[0].weight.numpy(), [[1.0, 2.0]])
    assert net[0].weight.dtype == gpuarr.float32


def test_load_state_dict_is_strict_about_keys():
    net = nn.Sequential(nn.Linear(2, 1))
    with pytest.raises(KeyError, match="missing keys \\['0.bias'\\]"):
        net.load_state_dict({"0.weight": np.zeros((1, 2))})
    with pytest.raises(KeyError, match="unexpected keys \\['x'\\]"):
        net.load_state_dict({**net.state_dict(), "x": np.zeros(1)})
    res = net.load_state_dict({"0.weight": np.zeros((1, 2)), "x": np.zeros(1)}, strict=False)
    assert res.missing_keys == ["0.bias"] and res.unexpected_keys == ["x"]
    np.testing.assert_array_equal(net[0].weight.numpy(), [[0.0, 0.0]])


def test_load_state_dict_checks_shapes_before_changing_anything():
    net = nn.Sequential(nn.Linear(2, 1))
    before = net[0].bias.numpy().copy()
    with pytest.raises(ValueError, match="shape"):
        net.load_state_dict({"0.bias": np.zeros(1), "0.weight": np.zeros((2, 2))})
    np.testing.assert_array_equal(net[0].bias.numpy(), before)


def test_repr_shows_the_tree():
    text = repr(nn.Sequential(nn.Linear(3, 1), nn.ReLU()))
    assert text.startswith("Sequential(") and "(0): Linear(in_features=3" in text
    assert "(1): ReLU()" in text


# --- Parameter -----------------------------------------------------------------------


def test_parameter_is_a_leaf_array_that_requires_grad_and_shares_memory(device):
    x = gpuarr.asarray(np.arange(3, dtype=np.float32), device=device)
    p = nn.Parameter(x)
    assert type(p) is gpuarr.Array and p is not x
    assert p.requires_grad and p.is_leaf and p.grad is None and p.device == device
    assert not x.requires_grad  # the data keeps its own flag
    assert p._storage_id == x._storage_id  # shares memory, as PyTorch's Parameter(t)
    assert isinstance(p, nn.Parameter) and not isinstance(x, nn.Parameter)


def test_a_frozen_parameter_is_still_a_parameter_and_a_detached_one_is_not():
    p = nn.Parameter(gpuarr.ones(2), requires_grad=False)
    assert isinstance(p, nn.Parameter) and not p.requires_grad
    p.requires_grad_(True)
    assert isinstance(p, nn.Parameter)
    assert not isinstance(p.detach(), nn.Parameter)
    assert not isinstance(gpuarr.ones(2, requires_grad=True), nn.Parameter)
    assert not isinstance(3.0, nn.Parameter) and not issubclass(nn.Parameter, gpuarr.Array)


def test_parameter_without_data_is_empty_and_of_non_arrays_is_a_type_error():
    assert nn.Parameter().shape == (0,)
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        nn.Parameter(np.ones(2))


def test_an_integer_parameter_cannot_require_grad():
    assert not nn.Parameter(gpuarr.arange(3), requires_grad=False).requires_grad
    with pytest.raises((TypeError, RuntimeError, ValueError)):
        nn.Parameter(gpuarr.arange(3))


def test_assigning_a_plain_array_registers_a_parameter_that_requires_grad():
    m = nn.Module()
    x = gpuarr.ones(3)
    m.scale = x
    m.steps = gpuarr.arange(2)
    assert isinstance(m.scale, nn.Parameter) and m.scale.requires_grad
    assert m.scale._storage_id == x._storage_id and not x.requires_grad
    assert isinstance(m.steps, nn.Parameter) and not m.steps.requires_grad  # integers
    assert [k for k, _ in m.named_parameters()] == ["scale", "steps"]
    p = nn.Parameter(gpuarr.zeros(1))
    m.w = p
    assert m.w is p  # a Parameter is registered as it is


def test_register_parameter_takes_a_parameter_or_none():
    m = nn.Module()
    m.register_parameter("bias", None)
    assert m.bias is None and list(m.parameters()) == []
    with pytest.raises(TypeError, match="nn.Parameter"):
        m.register_parameter("w", gpuarr.ones(1))


def test_a_parameter_shared_by_two_modules_comes_once_and_moves_once(device):
    a = nn.Linear(2, 2)
    net = nn.Sequential(a, nn.ReLU(), a)
    assert len(list(net.parameters())) == 2
    net.to(device)
    assert net[0].weight is net[2].weight and net[0].weight.device == device


# --- buffers -------------------------------------------------------------------------


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("scale", gpuarr.full((2,), 3.0))
        self.register_buffer("cache", gpuarr.zeros(2), persistent=False)

    def forward(self, x):
        return self.lin(x) * self.scale


def test_register_buffer_makes_state_that_is_not_a_parameter():
    m = Scaled()
    assert [k for k, _ in m.named_buffers()] == ["scale", "cache"]
    assert [k for k, _ in m.named_parameters()] == ["lin.weight", "lin.bias"]
    assert not isinstance(m.scale, nn.Parameter) and not m.scale.requires_grad
    outer = nn.Sequential(m)
    assert [k for k, _ in outer.named_buffers()] == ["0.scale", "0.cache"]
    assert len(list(outer.buffers())) == 2 and list(outer.buffers(recurse=False)) == []


def test_assigning_to_a_buffer_name_replaces_the_buffer():
    m = Scaled()
    m.scale = gpuarr.ones(2)
    assert "scale" in dict(m.named_buffers()) and "scale" not in dict(m.named_parameters())
    np.testing.assert_array_equal(m.scale.numpy(), [1.0, 1.0])
    del m.scale
    assert "scale" not in dict(m.named_buffers())


def test_register_buffer_rejects_bad_names_and_values():
    m = Scaled()
    with pytest.raises(KeyError, match="'.'"):
        m.register_buffer("a.b", gpuarr.ones(1))
    with pytest.raises(TypeError, match="gpuarr array"):
        m.register_buffer("b", np.ones(1))
    with pytest.raises(KeyError, match="parameter or module"):
        m.register_buffer("lin", gpuarr.ones(1))
    m.register_buffer("empty", None)
    assert m.empty is None and "empty" not in dict(m.named_buffers())


def test_state_dict_holds_persistent_buffers_in_pytorchs_order():
    # each module's parameters, then its buffers, then its children's
    m = Scaled()
    assert list(m.state_dict()) == ["scale", "lin.weight", "lin.bias"]
    net = nn.Sequential(nn.Linear(1, 1), m)
    assert list(net.state_dict()) == ["0.weight", "0.bias", "1.scale", "1.lin.weight",
                                      "1.lin.bias"]


def test_load_state_dict_loads_buffers_into_place(device):
    src, dst = Scaled(), Scaled().to(device)
    src.scale = gpuarr.asarray([5.0, 6.0])
    buf = dst.scale
    dst.load_state_dict(src.state_dict())
    assert dst.scale is buf and buf.device == device
    np.testing.assert_array_equal(buf.numpy(), [5.0, 6.0])


def test_to_cuda_and_cpu_move_buffers_with_the_parameters(device):
    m = Scaled()
    assert m.to(device) is m
    assert all(b.device == device for b in m.buffers())
    y = m(gpuarr.ones((1, 2), device=device))
    assert y.device == device
    assert m.cpu().scale.device == gpuarr.cpu() and m.cache.device == gpuarr.cpu()
    if device != gpuarr.cpu():
        assert m.cuda(device.index).scale.device == device


def test_to_moves_gradients_and_keeps_requires_grad(device):
    lin = nn.Linear(2, 1)
    lin.weight.grad = gpuarr.ones((1, 2))
    lin.bias.requires_grad_(False)
    lin.to(device)
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad
    assert lin.weight.grad.device == device and not lin.bias.requires_grad
    assert isinstance(lin.bias, nn.Parameter)


# --- modes and gradients ---------------------------------------------------------------


def test_train_and_eval_set_the_mode_of_every_module():
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout()))
    assert all(m.training for m in net.modules())
    assert net.eval() is net and not any(m.training for m in net.modules())
    assert net.train() is net and net[1][0].training
    with pytest.raises(TypeError):
        net.train("no")


def test_zero_grad_sets_gradients_to_none_or_zeros_in_place(device):
    net = nn.Sequential(nn.Linear(2, 1)).to(device)
    for p in net.parameters():
        p.grad = gpuarr.ones(p.shape, device=device)
    g = net[0].weight.grad
    net.zero_grad(set_to_none=False)
    assert net[0].weight.grad is g and g.device == device
    np.testing.assert_array_equal(g.numpy(), [[0.0, 0.0]])
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_requires_grad_freezes_every_parameter_and_apply_visits_every_module():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Linear", "Sequential"]
