"""The JAX edition's cells (d2l-en master, "GPUs", JAX tab; the Flax model's cells are
test_compat_flax.py's) run as printed with the import cell's modules named under
gpuarr.compat, on every device mode; JAX's immutability is checked too."""
import numpy as np
import pytest

import gpuarr
from compat_cells import SUM, TRAINER_GPUS, TRY_GPU, Notebook, needs_two_gpus

# The JAX tab of d2l-en master as it prints (d2lbook keeps each cell's
# `tab.selected('jax')` branch); the import cell's modules named under gpuarr.compat.
IMPORTS = """
from gpuarr.compat.d2l import jax as d2l
from gpuarr.compat.flax import linen as nn
import gpuarr.compat.jax as jax
from gpuarr.compat.jax import numpy as jnp
"""
J1 = """
def cpu():  #@save
    \"\"\"Get the CPU device.\"\"\"
    return jax.devices('cpu')[0]

def gpu(i=0):  #@save
    \"\"\"Get a GPU device.\"\"\"
    return jax.devices('gpu')[i]

cpu(), gpu(), gpu(1)
"""
J2 = """
def num_gpus():  #@save
    \"\"\"Get the number of available GPUs.\"\"\"
    try:
        return jax.device_count('gpu')
    except:
        return 0  # No GPU backend found

num_gpus()
"""
X_CELL = """
# By default JAX puts arrays to GPUs or TPUs if available
X = jax.device_put(jnp.ones((2, 3)), try_gpu())
X
"""
Y_CELL = """
Y = jax.device_put(jax.random.uniform(jax.random.PRNGKey(0), (2, 3)),
                   try_gpu(1))
Y
"""


def run_j1(nb):
    """J1 names gpu(1): its last line raises on fewer GPUs, as in JAX (RuntimeError
    with no GPU backend, IndexError with one GPU); its definitions are made first."""
    if gpuarr.num_gpus() >= 2:
        return nb.run(J1)[0]
    with pytest.raises(RuntimeError if gpuarr.num_gpus() == 0 else IndexError):
        nb.run(J1)
    return None


@pytest.fixture
def nb():
    nb = Notebook(IMPORTS)
    run_j1(nb)
    for cell in (J2, TRY_GPU):
        nb.run(cell)
    return nb


def test_naming_devices(nb):
    needs_two_gpus()
    assert Notebook(IMPORTS).run(J1)[0] == (gpuarr.cpu(), gpuarr.gpu(0), gpuarr.gpu(1))


def test_devices_and_the_fallback(nb):
    n = gpuarr.num_gpus()
    assert nb.run(J2)[0] == n
    assert nb.run("cpu()")[0] == gpuarr.cpu()
    first = gpuarr.gpu(0) if n else gpuarr.cpu()
    assert nb.run(TRY_GPU)[0] == \
        (first, gpuarr.cpu(), [gpuarr.gpu(i) for i in range(n)])


def test_where_an_array_lives(nb):
    out, _ = nb.run("x = jnp.array([1, 2, 3])\nx.device()")
    assert out == (gpuarr.gpu(0) if gpuarr.num_gpus() else gpuarr.cpu())  # JAX's default


def test_device_put_on_the_first_gpu(nb):
    out, _ = nb.run(X_CELL)
    assert out.device() == (gpuarr.gpu(0) if gpuarr.num_gpus() else gpuarr.cpu())
    np.testing.assert_array_equal(out.array.numpy(), np.ones((2, 3), np.float32))


def test_device_put_on_the_second_gpu(nb):
    needs_two_gpus()
    nb.run(X_CELL)
    out, _ = nb.run(Y_CELL)
    assert out.device() == gpuarr.gpu(1)
    _, printed = nb.run("Z = jax.device_put(X, try_gpu(1))\nprint(X)\nprint(Z)")
    assert printed == ("[[1. 1. 1.]\n [1. 1. 1.]] @gpu(0)\n"
                       "[[1. 1. 1.]\n [1. 1. 1.]] @gpu(1)\n")
    out, _ = nb.run(SUM)
    np.testing.assert_allclose(np.asarray(out.array.numpy()), nb["Y"].array.numpy() + 1)
    assert nb.run("Z2 = jax.device_put(Z, try_gpu(1))\nZ2 is Z")[0] is True


def test_the_trainer_moves_batches_to_the_first_gpu(nb):
    assert nb.run(TRAINER_GPUS) == (None, "")
    out, _ = nb.run("trainer = d2l.Trainer(max_epochs=3, num_gpus=8)\n"
                    "batch = trainer.prepare_batch([jnp.ones((4, 3)), jnp.zeros(4)])\n"
                    "trainer.gpus, [a.device() for a in batch]")
    n = gpuarr.num_gpus()
    where = gpuarr.gpu(0) if n else gpuarr.cpu()
    assert out == ([gpuarr.gpu(i) for i in range(n)], [where, where])


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
