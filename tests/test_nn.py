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
    assert net.state_dict()["0.weight"] is net[0].weight


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
