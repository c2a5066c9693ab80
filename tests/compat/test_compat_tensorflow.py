"""The TensorFlow edition's cells (d2l-en master, "GPUs", TensorFlow tab) run as printed
with `import gpuarr.compat.tensorflow as tf` for `import tensorflow as tf`, on every
device mode. TensorFlow's own rules are checked too: placement by `tf.device` scope and
the implicit copy across devices (which gpuarr itself refuses)."""
import numpy as np
import pytest

import gpuarr
from compat_cells import SUM, TRY_GPU, Notebook, needs_two_gpus

# The TensorFlow tab of d2l-en master as it prints (d2lbook keeps each cell's
# `tab.selected('tensorflow')` branch); the import cell's modules under gpuarr.compat.
IMPORTS = """
from gpuarr.compat.d2l import tensorflow as d2l
import gpuarr.compat.tensorflow as tf
"""
T1 = """
def cpu():  #@save
    \"\"\"Get the CPU device.\"\"\"
    return tf.device('/CPU:0')

def gpu(i=0):  #@save
    \"\"\"Get a GPU device.\"\"\"
    return tf.device(f'/GPU:{i}')

cpu(), gpu(), gpu(1)
"""
T2 = """
def num_gpus():  #@save
    \"\"\"Get the number of available GPUs.\"\"\"
    return len(tf.config.experimental.list_physical_devices('GPU'))

num_gpus()
"""


def _tf_name(i=None):
    kind = "CPU:0" if i is None else f"GPU:{i}"
    return f"/job:localhost/replica:0/task:0/device:{kind}"


@pytest.fixture
def nb():
    nb = Notebook(IMPORTS)
    for cell in (T1, T2, TRY_GPU):
        nb.run(cell)
    return nb


def test_naming_devices_never_fails():
    # TensorFlow shows three scope objects; the shim's name the device each places on
    out, _ = Notebook(IMPORTS).run(T1)
    assert repr(out) == "(tf.device(cpu(0)), tf.device(gpu(0)), tf.device(gpu(1)))"


def test_counting_gpus_and_the_fallback(nb):
    n = gpuarr.num_gpus()
    assert nb.run(T2)[0] == n
    first, fallback, every = nb.run(TRY_GPU)[0]
    assert (first.device, fallback.device) == (gpuarr.gpu(0) if n else gpuarr.cpu(),
                                               gpuarr.cpu())
    assert [d.device for d in every] == [gpuarr.gpu(i) for i in range(n)]


def test_a_constant_goes_to_the_first_gpu_as_in_tensorflow(nb):
    out, _ = nb.run("x = tf.constant([1, 2, 3])\nx.device")
    assert out == _tf_name(0 if gpuarr.num_gpus() else None)


def test_a_scope_places_new_tensors(nb):
    out, _ = nb.run("with try_gpu():\n    X = tf.ones((2, 3))\nX")
    assert out.array.device == (gpuarr.gpu(0) if gpuarr.num_gpus() else gpuarr.cpu())
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 3), np.float32))
    assert gpuarr.get_default_device() == gpuarr.cpu()  # the scope is closed again


def test_the_second_gpu_cells_copy_implicitly(nb):
    needs_two_gpus()
    nb.run("with try_gpu():\n    X = tf.ones((2, 3))")
    out, _ = nb.run("with try_gpu(1):\n    Y = tf.random.uniform((2, 3))\nY")
    assert out.device == _tf_name(1)
    _, printed = nb.run("with try_gpu(1):\n    Z = X\nprint(X)\nprint(Z)")
    assert printed == ("[[1. 1. 1.]\n [1. 1. 1.]] @gpu(0)\n" * 2)  # Z = X moves nothing
    gpuarr.synchronize()
    before = gpuarr.transfer_stats()
    out, _ = nb.run(SUM)                          # TensorFlow copies Z to gpu(1) silently
    assert out.device == _tf_name(1)
    np.testing.assert_allclose(out.numpy(), nb["Y"].numpy() + 1)
    assert (gpuarr.transfer_stats() - before).d2d_bytes == 2 * 3 * 4   # counted
    assert nb.run("with try_gpu(1):\n    Z2 = Z\nZ2 is Z")[0] is True


def test_a_keras_model_in_a_mirrored_strategy(nb):
    nb.run("with try_gpu():\n    X = tf.ones((2, 3))")
    nb.run("""
strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    net = tf.keras.models.Sequential([
        tf.keras.layers.Dense(1)])
""")
    out, _ = nb.run("net(X)")
    v = out.numpy()
    assert v.shape == (2, 1) and v[0, 0] == v[1, 0]
    where = _tf_name(0 if gpuarr.num_gpus() else None)
    assert nb.run("net.layers[0].weights[0].device, net.layers[0].weights[1].device")[0] == \
        (where, where)


def test_an_unknown_device_name_says_how_to_write_one(nb):
    with pytest.raises(ValueError, match="'/GPU:<index>'"):
        nb.run("tf.device('/TPU:0')")


def test_a_name_outside_the_chapter_names_gpuarrs_spelling(nb):
    with pytest.raises(AttributeError, match=r"gpuarr.compat.tensorflow covers the GPU "
                                             r"chapter; `tf.linspace` is not part of it: "
                                             r"use gpuarr.linspace"):
        nb.run("tf.linspace")
