"""The MXNet editions' cells (d2l-en master's MXNet tab, and the 2018 Gluon edition with
`nd`) run as printed with the import line changed to gpuarr.compat.mxnet, on every
device mode; the outputs the book prints are compared where they are deterministic."""
import numpy as np
import pytest

import gpuarr
from compat_cells import SUM, TRAINER_GPUS, TRY_GPU, Notebook, needs_two_gpus

# The MXNet tab of d2l-en master as it prints (d2lbook keeps each cell's
# `tab.selected('mxnet')` branch); the import cell's modules named under gpuarr.compat.
IMPORTS_NP = """
from gpuarr.compat.d2l import mxnet as d2l
from gpuarr.compat.mxnet import np, npx
from gpuarr.compat.mxnet.gluon import nn
npx.set_np()
"""
B1 = """
def cpu():  #@save
    \"\"\"Get the CPU device.\"\"\"
    return npx.cpu()

def gpu(i=0):  #@save
    \"\"\"Get a GPU device.\"\"\"
    return npx.gpu(i)

cpu(), gpu(), gpu(1)
"""
B2 = """
def num_gpus():  #@save
    \"\"\"Get the number of available GPUs.\"\"\"
    return npx.num_gpus()

num_gpus()
"""
B13_MODULE = """
@d2l.add_to_class(d2l.Module)  #@save
def set_scratch_params_device(self, device):
    for attr in dir(self):
        a = getattr(self, attr)
        if isinstance(a, np.ndarray):
            with autograd.record():
                setattr(self, attr, a.as_in_ctx(device))
            getattr(self, attr).attach_grad()
        if isinstance(a, d2l.Module):
            a.set_scratch_params_device(device)
        if isinstance(a, list):
            for elem in a:
                elem.set_scratch_params_device(device)
"""
B13_TRAINER = TRAINER_GPUS + """
@d2l.add_to_class(d2l.Trainer)  #@save
def prepare_model(self, model):
    model.trainer = self
    model.board.xlim = [0, self.max_epochs]
    if self.gpus:
        model.collect_params().reset_ctx(self.gpus[0])
        model.set_scratch_params_device(self.gpus[0])
    self.model = model
"""
IMPORTS_ND = """
import gpuarr.compat.mxnet as mx
from gpuarr.compat.mxnet import nd
from gpuarr.compat.mxnet.gluon import nn
"""


@pytest.fixture
def nb():
    nb = Notebook(IMPORTS_NP)
    for cell in (B1, B2, TRY_GPU):
        nb.run(cell)
    return nb


@pytest.fixture
def nd_nb():
    return Notebook(IMPORTS_ND)


def test_b1_b3_contexts(nb):
    assert repr(Notebook(IMPORTS_NP).run(B1)[0]) == "(cpu(0), gpu(0), gpu(1))"
    assert nb.run(B2)[0] == gpuarr.num_gpus()
    n = gpuarr.num_gpus()
    first = "gpu(0)" if n else "cpu(0)"
    every = ", ".join(f"gpu({i})" for i in range(n))
    assert repr(nb.run(TRY_GPU)[0]) == f"({first}, cpu(0), [{every}])"


def test_b4_b5_where_an_array_lives(nb):
    assert nb.run("x = np.array([1, 2, 3])\nx.ctx")[0] == gpuarr.cpu()
    assert nb["x"].dtype == gpuarr.float32              # MXNet's np default, not int64
    out, _ = nb.run("X = np.ones((2, 3), ctx=try_gpu())\nX")
    assert out.ctx == nb.run("try_gpu()")[0]
    np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 3), np.float32))


def test_b6_to_b9_copies_between_gpus(nb):
    needs_two_gpus()
    nb.run("X = np.ones((2, 3), ctx=try_gpu())")
    out, _ = nb.run("Y = np.random.uniform(size=(2, 3), ctx=try_gpu(1))\nY")
    assert out.ctx == gpuarr.gpu(1)
    _, printed = nb.run("Z = X.copyto(try_gpu(1))\nprint(X)\nprint(Z)")
    assert printed == ("[[1. 1. 1.]\n [1. 1. 1.]] @gpu(0)\n"
                       "[[1. 1. 1.]\n [1. 1. 1.]] @gpu(1)\n")          # B7, as printed
    out, _ = nb.run(SUM)
    assert out.ctx == gpuarr.gpu(1)
    np.testing.assert_allclose(out.asnumpy(), nb["Y"].asnumpy() + 1)
    assert nb.run("Z.as_in_ctx(try_gpu(1)) is Z")[0] is True
    assert nb.run("Z.copyto(try_gpu(1)) is Z")[0] is False            # the text under B9


def test_b10_to_b12_a_dense_layer_on_the_gpu(nb):
    nb.run("X = np.ones((2, 3), ctx=try_gpu())")
    nb.run("net = nn.Sequential()\nnet.add(nn.Dense(1))\nnet.initialize(ctx=try_gpu())")
    out, _ = nb.run("net(X)")
    assert out.shape == (2, 1) and out.ctx == nb.run("try_gpu()")[0]
    assert out.asnumpy()[0, 0] == out.asnumpy()[1, 0]
    assert nb.run("net[0].weight.data().ctx")[0] == nb.run("try_gpu()")[0]


def test_b13_the_trainer_moves_a_scratch_model_to_the_first_gpu(nb):
    assert nb.run(B13_MODULE) == (None, "")
    assert nb.run(B13_TRAINER) == (None, "")
    # The page imports no `autograd`, which the saved set_scratch_params_device uses
    # (d2l's library imports it): a model that has arrays needs it in the notebook.
    nb.run("from gpuarr.compat.mxnet import autograd")
    out, _ = nb.run("""
class Scratch(d2l.Module):
    def __init__(self):
        super().__init__()
        self.w = np.random.normal(0, 0.01, (2, 1))
        self.b = np.zeros(1)

trainer = d2l.Trainer(max_epochs=3, num_gpus=8)
batch = trainer.prepare_batch([np.ones((4, 2)), np.zeros(4)])
model = Scratch()
trainer.prepare_model(model)
trainer.gpus, [a.ctx for a in batch], model.w.ctx, model.b.ctx, model.board.xlim
""")
    n = gpuarr.num_gpus()
    where = gpuarr.gpu(0) if n else gpuarr.cpu()
    assert out == ([gpuarr.gpu(i) for i in range(n)], [where, where], where, where, [0, 3])
    if n:   # moved inside record() and attached: a leaf with a gradient on the GPU
        w = nb["model"].w.array
        assert w.requires_grad and w.grad is not None and w.grad.device == where
    # the Gluon branch of prepare_model: reset_ctx moves a made parameter
    out, _ = nb.run("net = nn.Sequential()\nnet.add(nn.Dense(1))\nnet.initialize()\n"
                    "net(np.ones((2, 3)))\nnet.collect_params().reset_ctx(try_gpu())\n"
                    "net[0].weight.data().ctx, net(np.ones((2, 3), ctx=try_gpu())).ctx")
    assert out == (where, where)


def test_c1_c3_contexts_and_the_ndarray_repr(nd_nb):
    assert repr(nd_nb.run("mx.cpu(), mx.gpu(), mx.gpu(1)")[0]) == "(cpu(0), gpu(0), gpu(1))"
    assert repr(nd_nb.run("x = nd.array([1, 2, 3])\nx")[0]) == \
        "[1. 2. 3.]\n<NDArray 3 @cpu(0)>"                              # C2 [S5], as printed
    assert repr(nd_nb.run("x.context")[0]) == "cpu(0)"                 # C3 [S5]


def test_c4_to_c10_copies_and_a_computation_on_the_gpu(nd_nb):
    if gpuarr.num_gpus() == 0:
        pytest.skip("needs a GPU (set GPUARR_SIMULATE_GPUS=2 to simulate two)")
    nd_nb.run("x = nd.array([1, 2, 3])")
    assert repr(nd_nb.run("a = nd.array([1, 2, 3], ctx=mx.gpu())\na")[0]) == \
        "[1. 2. 3.]\n<NDArray 3 @gpu(0)>"                              # C4
    assert repr(nd_nb.run("y = x.copyto(mx.gpu())\ny")[0]) == "[1. 2. 3.]\n<NDArray 3 @gpu(0)>"
    assert repr(nd_nb.run("z = x.as_in_context(mx.gpu())\nz")[0]) == \
        "[1. 2. 3.]\n<NDArray 3 @gpu(0)>"                              # C7
    assert nd_nb.run("y.as_in_context(mx.gpu()) is y")[0] is True      # C8
    assert nd_nb.run("y.copyto(mx.gpu()) is y")[0] is False            # C9
    # C10 [computed with NumPy float32]: "[ 20.085537 109.1963   445.2395  ]" and
    # "<NDArray 3 @gpu(0)>". A CUDA GPU's expf may differ from the C library's in the
    # last bits (the emulated one gives 20.085539), as MXNet on a GPU would print.
    out = nd_nb.run("(z + 2).exp() * y")[0]
    assert repr(out).splitlines()[1] == "<NDArray 3 @gpu(0)>"
    np.testing.assert_allclose(out.asnumpy(), [20.085537, 109.1963, 445.2395], rtol=1e-6)
    if gpuarr.device_kind(gpuarr.gpu(0)) == "simulated":   # the CPU's exp: as printed
        assert repr(out) == "[ 20.085537 109.1963   445.2395  ]\n<NDArray 3 @gpu(0)>"


def test_c5_a_random_array_on_the_second_gpu(nd_nb):
    needs_two_gpus()
    out, _ = nd_nb.run("b = nd.random.uniform(shape=(2, 3), ctx=mx.gpu(1))\nb")
    assert repr(out).endswith("<NDArray 2x3 @gpu(1)>")
    v = out.asnumpy()
    assert ((v >= 0) & (v < 1)).all()


def test_c11_to_c13_dense_rows_in_ratio_1_2_3(nd_nb):
    if gpuarr.num_gpus() == 0:
        pytest.skip("needs a GPU (set GPUARR_SIMULATE_GPUS=2 to simulate two)")
    nd_nb.run("y = nd.array([1, 2, 3]).copyto(mx.gpu())")
    nd_nb.run("net = nn.Sequential()\nnet.add(nn.Dense(1))\nnet.initialize(ctx=mx.gpu())")
    out, _ = nd_nb.run("net(y)")
    assert repr(out).endswith("<NDArray 3x1 @gpu(0)>")
    w = nd_nb.run("net[0].weight.data()")[0]
    assert w.shape == (1, 1) and w.ctx == gpuarr.gpu(0)
    np.testing.assert_allclose(out.asnumpy()[:, 0], [w.asnumpy()[0, 0] * k for k in (1, 2, 3)],
                               rtol=1e-6)


def test_gluon_autograd_spelling_trains_a_dense_layer(nb):
    nb.run("""
from gpuarr.compat.mxnet import autograd, init
X = np.random.normal(size=(32, 2), ctx=try_gpu())
y = X @ np.array([[2.0], [-1.0]], ctx=try_gpu())
net = nn.Sequential()
net.add(nn.Dense(1))
net.initialize(init=init.Normal(0.1), ctx=try_gpu())
def loss():
    return ((net(X) - y) ** 2).mean()
first = float(loss())
for _ in range(100):
    with autograd.record():
        l = loss()
    l.backward()
    for p in net.collect_params().values():
        p.set_data(p.data() - 0.1 * p.grad())
""")
    assert float(nb.run("loss()")[0]) < nb["first"] / 10


def test_a_dense_layer_used_before_initialize_says_so(nb):
    with pytest.raises(RuntimeError, match="initialize"):
        nb.run("net = nn.Sequential()\nnet.add(nn.Dense(1))\nnet(np.ones((2, 3)))")


def test_a_name_outside_the_chapter_names_gpuarrs_spelling(nb, nd_nb):
    with pytest.raises(AttributeError, match=r"gpuarr.compat.mxnet.np covers the GPU chapter; "
                                             r"`np.linspace` is not part of it: use gpuarr.linspace"):
        nb.run("np.linspace")
    with pytest.raises(AttributeError, match=r"`npx.waitall` is not part of it"):
        nb.run("npx.waitall")
    with pytest.raises(AttributeError, match=r"`mx.kv` is not part of it"):
        nd_nb.run("mx.kv")
