"""The PyTorch edition's cells (d2l-en master, "GPUs"; the PyTorch notes' recipes) run
as printed with `import gpuarr.compat.torch as torch` for `import torch`, on every
device mode: with two GPUs what the book prints (devices in gpuarr's spelling), with
fewer the cells that name a second GPU skip with the book's reason."""
import numpy as np
import pytest

import gpuarr
from compat_cells import SUM, TRAINER_GPUS, TRY_GPU, Notebook, needs_two_gpus

# The tab's import cell, each line's module named under gpuarr.compat.
IMPORTS = """
from gpuarr.compat.d2l import torch as d2l
import gpuarr.compat.torch as torch
from gpuarr.compat.torch import nn
"""

A1 = """
def cpu():  #@save
    \"\"\"Get the CPU device.\"\"\"
    return torch.device('cpu')

def gpu(i=0):  #@save
    \"\"\"Get a GPU device.\"\"\"
    return torch.device(f'cuda:{i}')

cpu(), gpu(), gpu(1)
"""
A2 = """
def num_gpus():  #@save
    \"\"\"Get the number of available GPUs.\"\"\"
    return torch.cuda.device_count()

num_gpus()
"""
A3 = TRY_GPU
# A13, as the PyTorch tab prints it (d2lbook keeps the `tab.selected('pytorch')` branch).
A13 = TRAINER_GPUS + """
@d2l.add_to_class(d2l.Trainer)  #@save
def prepare_model(self, model):
    model.trainer = self
    model.board.xlim = [0, self.max_epochs]
    if self.gpus:
        model.to(self.gpus[0])
    self.model = model
"""


@pytest.fixture
def nb():
    nb = Notebook(IMPORTS)
    for cell in (A1, A2, A3):
        nb.run(cell)
    return nb


def test_a1_naming_devices_never_fails():
    out, _ = Notebook(IMPORTS).run(A1)
    assert repr(out) == "(cpu(0), gpu(0), gpu(1))"


def test_a2_counting_gpus(nb):
    assert nb.run(A2)[0] == gpuarr.num_gpus()


def test_a3_fallback_helpers(nb):
    n = gpuarr.num_gpus()
    first = "gpu(0)" if n else "cpu(0)"
    every = ", ".join(f"gpu({i})" for i in range(n))
    assert repr(nb.run(A3)[0]) == f"({first}, cpu(0), [{every}])"


def test_a4_where_a_tensor_lives(nb):
    out, _ = nb.run("x = torch.tensor([1, 2, 3])\nx.device")
    assert out == gpuarr.cpu() and nb["x"].dtype == gpuarr.int64


def test_a5_making_a_tensor_on_a_gpu(nb):
    out, _ = nb.run("X = torch.ones(2, 3, device=try_gpu())\nX")
    assert out.device == (gpuarr.gpu(0) if gpuarr.num_gpus() else gpuarr.cpu())
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 3), np.float32))


def test_a6_to_a9_copies_between_gpus(nb):
    needs_two_gpus()
    nb.run("X = torch.ones(2, 3, device=try_gpu())")
    out, _ = nb.run("Y = torch.rand(2, 3, device=try_gpu(1))\nY")
    assert out.device == gpuarr.gpu(1)
    _, printed = nb.run("Z = X.cuda(1)\nprint(X)\nprint(Z)")
    assert printed == ("[[1. 1. 1.]\n [1. 1. 1.]] @gpu(0)\n"
                       "[[1. 1. 1.]\n [1. 1. 1.]] @gpu(1)\n")
    with pytest.raises(gpuarr.DeviceMismatchError):   # the book: do not add X + Y
        nb.run("X + Y")
    out, _ = nb.run(SUM)
    assert out.device == gpuarr.gpu(1)
    np.testing.assert_allclose(out.numpy(), nb["Y"].numpy() + 1)
    assert nb.run("Z.cuda(1) is Z")[0] is True


def test_a10_to_a12_a_model_on_the_gpu(nb):
    nb.run("X = torch.ones(2, 3, device=try_gpu())")
    nb.run("net = nn.Sequential(nn.LazyLinear(1))\nnet = net.to(device=try_gpu())")
    out, _ = nb.run("net(X)")
    assert out.shape == (2, 1) and out.device == nb.run("try_gpu()")[0]
    v = out.numpy()
    assert v[0, 0] == v[1, 0]              # both rows of ones give the same output
    assert nb.run("net[0].weight.data.device")[0] == nb.run("try_gpu()")[0]


def test_a13_the_trainer_moves_batches_and_the_model_to_the_first_gpu(nb):
    assert nb.run(A13) == (None, "")
    out, _ = nb.run("""
class Model(d2l.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

trainer = d2l.Trainer(max_epochs=3, num_gpus=8)
batch = trainer.prepare_batch([torch.ones(4, 3), torch.zeros(4)])
model = Model()
trainer.prepare_model(model)
trainer.gpus, [a.device for a in batch], model.net.weight.device, model.board.xlim
""")
    n = gpuarr.num_gpus()
    where = gpuarr.gpu(0) if n else gpuarr.cpu()
    assert out == ([gpuarr.gpu(i) for i in range(n)], [where, where], where, [0, 3])
    assert nb["model"].trainer is nb["trainer"] and nb["trainer"].model is nb["model"]
    assert nb.run("d2l.Trainer(max_epochs=1).gpus")[0] == []      # num_gpus=0: the CPU


def test_the_s4_variant_with_linear_3_1(nb):
    nb.run("X = torch.ones(2, 3, device=try_gpu())")
    nb.run("net = nn.Sequential(nn.Linear(3, 1))\nnet = net.to(device=try_gpu())")
    w, b = nb.run("net[0].weight.data")[0], nb.run("net[0].bias.data")[0]
    expected = np.ones((2, 3), np.float32) @ w.numpy().T + b.numpy()
    np.testing.assert_allclose(nb.run("net(X)")[0].numpy(), expected, rtol=1e-6)


# --- the PyTorch notes: the spellings of the same lesson -----------------------------

def test_tensor_spellings(nb):
    out, _ = nb.run("x = torch.ones(2, 3, device=try_gpu())\n"
                    "(x.is_cuda, x.get_device(), x.mm(torch.ones((3, 1), device=try_gpu())).shape)")
    n = gpuarr.num_gpus()
    assert out == (n > 0, 0 if n else -1, (2, 1))
    out, _ = nb.run("torch.cuda.is_available(), torch.tensor([1.5]).dtype")
    assert out == (n > 0, gpuarr.float32)


def test_to_with_a_dtype_casts_and_keeps_the_device(nb):
    out, _ = nb.run("y = torch.ones(2, device=try_gpu()).to(torch.float16)\ny")
    assert out.dtype == gpuarr.float16 and out.device == nb.run("try_gpu()")[0]
    out, _ = nb.run("y.to(torch.device('cpu'), torch.float64)")
    assert out.dtype == gpuarr.float64 and out.device == gpuarr.cpu()


def test_set_device_makes_bare_cuda_go_there(nb):
    needs_two_gpus()
    out, _ = nb.run("torch.cuda.set_device(1)\n"
                    "x = torch.ones(2).cuda()\n"
                    "net = nn.Linear(2, 1).cuda()\n"
                    "torch.cuda.current_device(), x.device, net.weight.device, net(x).device")
    nb.run("torch.cuda.set_device(0)")
    assert out == (1, gpuarr.gpu(1), gpuarr.gpu(1), gpuarr.gpu(1))


def test_the_device_context_is_restored_after_the_block(nb):
    needs_two_gpus()
    out, _ = nb.run("with torch.cuda.device(1):\n"
                    "    inside = (torch.cuda.current_device(), torch.zeros(1).cuda().device)\n"
                    "inside, torch.cuda.current_device(), torch.zeros(1).cuda().device")
    assert out == ((1, gpuarr.gpu(1)), 0, gpuarr.gpu(0))


def test_set_device_past_the_last_gpu_says_how_many_there_are(nb):
    with pytest.raises(RuntimeError, match="invalid device ordinal 5"):
        nb.run("torch.cuda.set_device(5)")


def test_memory_allocated_counts_a_new_tensor(nb):
    if gpuarr.num_gpus() == 0:
        pytest.skip("needs a GPU (set GPUARR_SIMULATE_GPUS=2 to simulate two)")
    gpuarr.synchronize()
    before, _ = nb.run("torch.cuda.memory_allocated(0)")
    out, _ = nb.run("big = torch.ones(1024, 256, device=gpu(0))\n"
                    "torch.cuda.memory_allocated(0), torch.cuda.max_memory_allocated(0), "
                    "torch.cuda.memory_reserved(0)")
    allocated, peak, reserved = out
    assert allocated - before >= 1024 * 256 * 4
    assert peak >= allocated and reserved >= allocated
    del nb.ns["big"]


def test_a_name_outside_the_chapter_names_gpuarrs_spelling(nb):
    with pytest.raises(AttributeError, match=r"gpuarr.compat.torch covers the GPU chapter; "
                                             r"`torch.exp2` is not part of it: use gpuarr.exp2"):
        nb.run("torch.exp2")
    with pytest.raises(AttributeError, match=r"`torch.cuda.nccl` is not part of it"):
        nb.run("torch.cuda.nccl")
    with pytest.raises(AttributeError, match=r"`torch.nn.Conv2d` is not part of it"):
        nb.run("nn.Conv2d")
    with pytest.raises(AttributeError, match=r"gpuarr.compat.d2l.torch covers the GPU "
                                             r"chapter; `d2l.load_array` is not part of it"):
        nb.run("d2l.load_array")


def test_training_through_the_shim_reduces_the_loss(nb):
    nb.run("""
torch.manual_seed(0)
X = torch.randn(64, 3, device=try_gpu())
y = X.mm(torch.tensor([[1.0], [-2.0], [0.5]], device=try_gpu()))
net = nn.Linear(3, 1).to(try_gpu())
loss = nn.MSELoss()
first = float(loss(net(X), y))
for _ in range(50):
    l = loss(net(X), y)
    l.backward()
    with torch.no_grad():
        for p in net.parameters():
            p -= 0.1 * p.grad
            p.grad = None
""")
    last, _ = nb.run("float(loss(net(X), y))")
    assert last < nb["first"] / 10
