"""The MXNet editions' cells (d2l-en master's MXNet tab, and the 2018 Gluon edition with
`nd`) run as printed with the import line changed to gpuarr.compat.mxnet, on every
device mode; the outputs the book prints are compared where they are deterministic."""
import numpy as np
import pytest

import gpuarr
from compat_cells import Notebook, needs_two_gpus

IMPORTS_NP = """
from gpuarr.compat.mxnet import np, npx
from gpuarr.compat.mxnet.gluon import nn
npx.set_np()
"""
B1_B3 = """
def cpu(): return npx.cpu()
def gpu(i=0): return npx.gpu(i)
def num_gpus(): return npx.num_gpus()
def try_gpu(i=0):
    if num_gpus() >= i + 1:
        return gpu(i)
    return cpu()
def try_all_gpus():
    return [gpu(i) for i in range(num_gpus())]
"""
IMPORTS_ND = """
import gpuarr.compat.mxnet as mx
from gpuarr.compat.mxnet import nd
from gpuarr.compat.mxnet.gluon import nn
"""


@pytest.fixture
def nb():
    nb = Notebook(IMPORTS_NP)
    nb.run(B1_B3)
    return nb


@pytest.fixture
def nd_nb():
    return Notebook(IMPORTS_ND)


def test_b1_b3_contexts(nb):
    assert repr(nb.run("cpu(), gpu(), gpu(1)")[0]) == "(cpu(0), gpu(0), gpu(1))"
    assert nb.run("num_gpus()")[0] == gpuarr.num_gpus()
    first = "gpu(0)" if gpuarr.num_gpus() else "cpu(0)"
    assert repr(nb.run("try_gpu(), try_gpu(10)")[0]) == f"({first}, cpu(0))"


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
    out, _ = nb.run("Y + Z")
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
