"""The JAX edition's cells (d2l-en master, "GPUs", JAX tab, up to the Flax model, which
is another library) run as printed with the import lines changed to gpuarr.compat.jax,
on every device mode; JAX's immutability is checked too."""
import numpy as np
import pytest

import gpuarr
from compat_cells import Notebook, needs_two_gpus

IMPORTS = """
import gpuarr.compat.jax as jax
from gpuarr.compat.jax import numpy as jnp
"""
HELPERS = """
def cpu():  #@save
    return jax.devices('cpu')[0]

def gpu(i=0):  #@save
    return jax.devices('gpu')[i]

def num_gpus():  #@save
    try:
        return jax.device_count('gpu')
    except:
        return 0  # No GPU backend found

def try_gpu(i=0):  #@save
    if num_gpus() >= i + 1:
        return gpu(i)
    return cpu()

def try_all_gpus():  #@save
    return [gpu(i) for i in range(num_gpus())]
"""


@pytest.fixture
def nb():
    nb = Notebook(IMPORTS)
    nb.run(HELPERS)
    return nb


def test_devices_and_the_fallback(nb):
    n = gpuarr.num_gpus()
    assert nb.run("num_gpus()")[0] == n
    assert nb.run("cpu()")[0] == gpuarr.cpu()
    first = gpuarr.gpu(0) if n else gpuarr.cpu()
    assert nb.run("try_gpu(), try_gpu(10), try_all_gpus()")[0] == \
        (first, gpuarr.cpu(), [gpuarr.gpu(i) for i in range(n)])


def test_where_an_array_lives(nb):
    out, _ = nb.run("x = jnp.array([1, 2, 3])\nx.device()")
    assert out == (gpuarr.gpu(0) if gpuarr.num_gpus() else gpuarr.cpu())  # JAX's default


def test_device_put_on_the_second_gpu(nb):
    needs_two_gpus()
    nb.run("X = jax.device_put(jnp.ones((2, 3)), try_gpu())")
    out, _ = nb.run("Y = jax.device_put(jax.random.uniform(jax.random.PRNGKey(0), (2, 3)),"
                    " try_gpu(1))\nY")
    assert out.device() == gpuarr.gpu(1)
    _, printed = nb.run("Z = jax.device_put(X, try_gpu(1))\nprint(X)\nprint(Z)")
    assert printed == ("[[1. 1. 1.]\n [1. 1. 1.]] @gpu(0)\n"
                       "[[1. 1. 1.]\n [1. 1. 1.]] @gpu(1)\n")
    out, _ = nb.run("Y + Z")
    np.testing.assert_allclose(np.asarray(out.array.numpy()), nb["Y"].array.numpy() + 1)
    assert nb.run("Z2 = jax.device_put(Z, try_gpu(1))\nZ2 is Z")[0] is True


def test_the_same_key_draws_the_same_values(nb):
    a, _ = nb.run("jax.random.uniform(jax.random.PRNGKey(3), (4,))")
    b, _ = nb.run("jax.random.uniform(jax.random.PRNGKey(3), (4,))")
    np.testing.assert_array_equal(a.array.numpy(), b.array.numpy())


def test_arrays_are_immutable_as_in_jax(nb):
    nb.run("x = jnp.zeros((3,))")
    with pytest.raises(TypeError, match=r"immutable.*x.at\[idx\].set\(y\)"):
        nb.run("x[0] = 1.0")
    out, _ = nb.run("y = x.at[1].set(5.0)\nx0 = x\nx += 1\ny, x0, x is x0")
    y, x0, same = out
    np.testing.assert_array_equal(y.array.numpy(), [0, 5, 0])
    np.testing.assert_array_equal(x0.array.numpy(), [0, 0, 0])   # unchanged
    assert same is False


def test_a_gpu_backend_without_a_gpu_raises_as_jax_does(nb):
    if gpuarr.num_gpus():
        pytest.skip("this machine has GPUs: the error is for a machine without one")
    with pytest.raises(RuntimeError, match="no GPU"):
        nb.run("jax.devices('gpu')")


def test_a_name_outside_the_chapter_names_gpuarrs_spelling(nb):
    with pytest.raises(AttributeError, match=r"`jnp.linspace` is not part of it: "
                                             r"use gpuarr.linspace"):
        nb.run("jnp.linspace")
    with pytest.raises(AttributeError, match=r"`jax.jit` is not part of it"):
        nb.run("jax.jit")
