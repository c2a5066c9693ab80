"""``from d2l import torch as d2l`` over gpuarr.compat.torch: the names the GPU
chapter's PyTorch tab uses (devices, ``to``, Module, Trainer, add_to_class)."""
import sys

from .. import torch as _torch
from .._shim import outside
from ..torch import nn as _nn
from ._library import HyperParameters, ProgressBoard, add_to_class, devices, trainer_class

__getattr__ = outside("d2l", __name__)
__all__ = ["HyperParameters", "ProgressBoard", "add_to_class", "cpu", "gpu", "num_gpus",
           "try_gpu", "try_all_gpus", "to", "Module", "Trainer"]


def cpu():
    """cpu()

    The CPU device."""
    return _torch.device("cpu")


def gpu(i=0):
    """gpu(i=0)

    GPU device `i` (naming one never fails)."""
    return _torch.device(f"cuda:{i}")


def num_gpus():
    """num_gpus()

    The number of GPUs."""
    return _torch.cuda.device_count()


try_gpu, try_all_gpus = devices(gpu, num_gpus, cpu)


def to(x, *args, **kwargs):
    """to(x, *args, **kwargs)

    ``x.to(*args, **kwargs)``."""
    return x.to(*args, **kwargs)


def move_model(model, device):
    """The PyTorch tab's branch of ``Trainer.prepare_model``: ``model.to(device)``."""
    model.to(device)


class Module(_nn.Module, HyperParameters):
    """Module(plot_train_per_epoch=2, plot_valid_per_epoch=1)

    d2l's model base class: a torch.nn.Module with a progress board."""

    def __init__(self, plot_train_per_epoch=2, plot_valid_per_epoch=1):
        super().__init__()
        self.save_hyperparameters()
        self.board = ProgressBoard()


Trainer = trainer_class(sys.modules[__name__])
