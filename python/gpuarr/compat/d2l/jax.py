"""``from d2l import jax as d2l`` over gpuarr.compat.jax: the names the GPU chapter's
JAX tab uses (devices, ``to``, Trainer, add_to_class)."""
import sys

from .. import jax as _jax
from .._shim import outside
from ._library import HyperParameters, ProgressBoard, add_to_class, devices, trainer_class

__getattr__ = outside("d2l", __name__)
__all__ = ["HyperParameters", "ProgressBoard", "add_to_class", "cpu", "gpu", "num_gpus",
           "try_gpu", "try_all_gpus", "to", "Trainer"]


def cpu():
    """cpu()

    The CPU device."""
    return _jax.devices("cpu")[0]


def gpu(i=0):
    """gpu(i=0)

    GPU device `i` (as in JAX, RuntimeError without a GPU backend)."""
    return _jax.devices("gpu")[i]


def num_gpus():
    """num_gpus()

    The number of GPUs (0 without a GPU backend)."""
    try:
        return _jax.device_count("gpu")
    except RuntimeError:
        return 0


try_gpu, try_all_gpus = devices(gpu, num_gpus, cpu)


def to(x, device):
    """to(x, device)

    ``jax.device_put(x, device)``."""
    return _jax.device_put(x, device)


def move_model(model, device):
    """The JAX tab has no model to move: Flax parameters are a tree that the training
    step puts where its batch is."""


Trainer = trainer_class(sys.modules[__name__])
