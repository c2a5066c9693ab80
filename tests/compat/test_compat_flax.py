"""The JAX edition's Flax cells (d2l-en, "GPUs", JAX tab: the model on the GPU) run as
printed with `from gpuarr.compat.flax import linen as nn` for `from flax import linen
as nn`, on every device mode: the parameters are made on the input's device (the
default one), apply runs there, and jax.device_put moves the whole tree."""
import numpy as np
import pytest

import gpuarr
from compat_cells import Notebook, needs_two_gpus

IMPORTS = """
import gpuarr.compat.jax as jax
from gpuarr.compat.jax import numpy as jnp
from gpuarr.compat.flax import linen as nn
"""
# The chapter's cells, as the JAX edition prints them.
MODEL = """
net = nn.Sequential([nn.Dense(1)])

key1, key2 = jax.random.split(jax.random.PRNGKey(0))
x = jax.random.normal(key1, (10,))  # Dummy input
params = net.init(key2, x)  # Initialization call
"""
APPLY = "net.apply(params, x)"
WHERE = "print(jax.tree_util.tree_map(lambda x: x.device(), params))"


def default_device():
    return gpuarr.gpu(0) if gpuarr.num_gpus() else gpuarr.cpu()


@pytest.fixture
def nb():
    nb = Notebook(IMPORTS)
    nb.run(MODEL)
    return nb


def kernel_and_bias(params):
    layer = params["params"]["layers_0"]
    return layer["kernel"].array.numpy(), layer["bias"].array.numpy()


def test_the_model_runs_where_its_input_is(nb):
    out, _ = nb.run(APPLY)
    assert out.shape == (1,) and out.device() == default_device()
    assert out.dtype == gpuarr.float32
    kernel, bias = kernel_and_bias(nb["params"])
    assert kernel.shape == (10, 1) and bias.shape == (1,)
    np.testing.assert_allclose(out.array.numpy(), nb["x"].array.numpy() @ kernel + bias,
                               rtol=1e-5, atol=1e-6)


def test_the_parameters_print_their_device(nb):
    _, printed = nb.run(WHERE)
    d = default_device()
    assert printed == f"{{'params': {{'layers_0': {{'kernel': {d}, 'bias': {d}}}}}}}\n"


def test_the_same_key_makes_the_same_parameters(nb):
    again = Notebook(IMPORTS)
    again.run(MODEL)
    for a, b in zip(kernel_and_bias(nb["params"]), kernel_and_bias(again["params"])):
        np.testing.assert_array_equal(a, b)
    other, _ = nb.run("net.init(jax.random.PRNGKey(1), x)")
    assert not np.array_equal(kernel_and_bias(other)[0], kernel_and_bias(nb["params"])[0])


def test_the_kernel_is_lecun_normal():
    """Flax's default kernel init: a normal truncated at 2 standard deviations, with
    variance 1 / fan_in; bias zeros."""
    nb = Notebook(IMPORTS)
    params, _ = nb.run("nn.Dense(64).init(jax.random.PRNGKey(2), jnp.ones((3, 256)))")
    kernel = params["params"]["kernel"].array.numpy()
    bound = 2 * np.sqrt(1 / 256) / 0.87962566103423978
    assert kernel.shape == (256, 64) and np.abs(kernel).max() <= bound * (1 + 1e-6)
    assert abs(kernel.std() / np.sqrt(1 / 256) - 1) < 0.05      # 16384 draws: 1 %
    assert abs(kernel.mean()) < 0.05 * np.sqrt(1 / 256)
    np.testing.assert_array_equal(params["params"]["bias"].array.numpy(), np.zeros(64))


def test_layers_are_named_by_their_place_in_the_list():
    nb = Notebook(IMPORTS)
    nb.run("net = nn.Sequential([nn.Dense(4), nn.relu, nn.Dense(1)])\n"
           "params = net.init(jax.random.PRNGKey(0), jnp.ones((2, 3)))")
    assert sorted(nb["params"]["params"]) == ["layers_0", "layers_2"]
    out, _ = nb.run("net.apply(params, jnp.ones((2, 3)))")
    p = {k: {n: v.array.numpy() for n, v in layer.items()}
         for k, layer in nb["params"]["params"].items()}
    hidden = np.maximum(np.ones((2, 3)) @ p["layers_0"]["kernel"] + p["layers_0"]["bias"], 0)
    np.testing.assert_allclose(out.array.numpy(),
                               hidden @ p["layers_2"]["kernel"] + p["layers_2"]["bias"],
                               rtol=1e-5, atol=1e-6)


def test_an_integer_input_computes_in_the_parameters_dtype(nb):
    out, _ = nb.run("net.apply(params, jnp.array([1, 0, 0, 0, 0, 0, 0, 0, 0, 2]))")
    assert out.dtype == gpuarr.float32            # JAX's promotion, never float64


def test_device_put_moves_the_parameter_tree(nb):
    needs_two_gpus()
    _, printed = nb.run("params1 = jax.device_put(params, jax.devices()[1])\n"
                        "print(jax.tree_util.tree_map(lambda x: x.device(), params1))")
    assert printed == "{'params': {'layers_0': {'kernel': gpu(1), 'bias': gpu(1)}}}\n"
    out, _ = nb.run("net.apply(params1, jax.device_put(x, jax.devices()[1]))")
    assert out.device() == gpuarr.gpu(1)
    np.testing.assert_allclose(out.array.numpy(), nb.run(APPLY)[0].array.numpy(), rtol=1e-6)
    with pytest.raises(gpuarr.DeviceMismatchError):   # committed to two devices, as JAX
        nb.run("net.apply(params1, x)")


def test_calling_a_module_directly_says_to_use_apply(nb):
    with pytest.raises(TypeError, match=r"net.init\(key, x\), then net.apply\(params, x\)"):
        nb.run("net(x)")
    with pytest.raises(TypeError, match=r"PRNG key first"):
        nb.run("net.init(0, x)")


def test_a_name_outside_the_chapter_names_gpuarrs_spelling(nb):
    with pytest.raises(AttributeError, match=r"gpuarr.compat.flax.linen covers the GPU "
                                             r"chapter; `nn.Conv` is not part of it"):
        nb.run("nn.Conv")
