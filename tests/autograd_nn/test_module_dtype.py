"""Module.half/float/double/to(dtype): floating parameters and buffers change dtype,
integer buffers keep theirs; and a layer given an input of another dtype says so."""
import numpy as np
import pytest

import gpuarr
from gpuarr import nn


class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("scale", gpuarr.ones(2))
        self.register_buffer("steps", gpuarr.zeros(1, dtype=gpuarr.int64))

    def forward(self, x):
        return self.fc(x) * self.scale


@pytest.mark.parametrize("name,dtype", [("half", "float16"), ("float", "float32"),
                                        ("double", "float64")])
def test_module_casts_floating_state_only(device, name, dtype):
    net = WithBuffers().to(device)
    assert getattr(net, name)() is net
    want = getattr(gpuarr, dtype)
    assert net.fc.weight.dtype == want and net.fc.bias.dtype == want
    assert net.scale.dtype == want
    assert net.steps.dtype == gpuarr.int64  # a counter stays a counter
    assert net.fc.weight.device == device
    assert isinstance(net.fc.weight, nn.Parameter) and net.fc.weight.requires_grad


def test_module_to_dtype_and_device_together(device):
    net = WithBuffers()
    w = net.fc.weight.numpy()
    assert net.to(device, gpuarr.float64) is net
    assert (net.fc.weight.device, net.fc.weight.dtype) == (device, gpuarr.float64)
    np.testing.assert_array_equal(net.fc.weight.numpy(), w.astype(np.float64))
    net.to(dtype=gpuarr.float32)
    assert net.fc.weight.dtype == gpuarr.float32
    with pytest.raises(TypeError, match="not a floating dtype"):
        net.to(gpuarr.int32)
    with pytest.raises(TypeError, match="needs a device or a dtype"):
        net.to()


def test_a_cast_model_trains(device):
    net = nn.Linear(2, 1).to(device).double()
    x = gpuarr.ones((4, 2), dtype=gpuarr.float64, device=device)
    opt = gpuarr.optim.SGD(net.parameters(), lr=0.1)
    loss = net(x).sum()
    loss.backward()
    assert net.weight.grad.dtype == gpuarr.float64
    before = net.weight.numpy().copy()
    opt.step()
    assert not np.array_equal(before, net.weight.numpy())


def test_optimizer_made_before_a_cast_is_refused():
    net = nn.Linear(2, 1)
    opt = gpuarr.optim.SGD(net.parameters(), lr=0.1)
    net.half()
    net(gpuarr.ones((1, 2), dtype=gpuarr.float16)).sum().backward()
    with pytest.raises(RuntimeError, match="after the optimizer was made"):
        opt.step()


@pytest.mark.parametrize("dtype", ["int64", "float16", "float64", "int32"])
def test_linear_refuses_an_input_of_another_dtype(device, dtype):
    net = nn.Linear(3, 2).to(device)
    x = gpuarr.ones((4, 3), dtype=getattr(gpuarr, dtype), device=device)
    with pytest.raises(TypeError) as e:
        net(x)
    msg = str(e.value)
    assert dtype in msg and "float32" in msg
    assert "x.to(gpuarr.float32)" in msg and "net.to(gpuarr." in msg


def test_linear_after_the_fix_computes_in_the_layer_dtype(device):
    net = nn.Linear(3, 2).to(device)
    x = gpuarr.ones((4, 3), dtype=gpuarr.int64, device=device)
    assert net(x.float()).dtype == gpuarr.float32
    y = net.half()(x.half())
    assert y.dtype == gpuarr.float16
