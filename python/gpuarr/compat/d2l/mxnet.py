"""``from d2l import mxnet as d2l`` over gpuarr.compat.mxnet: the names the GPU
chapter's MXNet tab uses (devices, ``to``, Module with set_scratch_params_device,
Trainer, add_to_class)."""
import sys

from .._shim import outside
from ..mxnet import np, npx
from ..mxnet.gluon import nn as _nn
from ._library import HyperParameters, ProgressBoard, add_to_class, devices, trainer_class

__getattr__ = outside("d2l", __name__)
__all__ = ["HyperParameters", "ProgressBoard", "add_to_class", "cpu", "gpu", "num_gpus",
           "try_gpu", "try_all_gpus", "to", "Module", "Trainer"]


def cpu():
    """cpu()

    The CPU context."""
    return npx.cpu()


def gpu(i=0):
    """gpu(i=0)

    GPU context `i` (naming one never fails)."""
    return npx.gpu(i)


def num_gpus():
    """num_gpus()

    The number of GPUs."""
    return npx.num_gpus()


try_gpu, try_all_gpus = devices(gpu, num_gpus, cpu)


def to(x, device):
    """to(x, device)

    ``x.as_in_context(device)``."""
    return x.as_in_context(device)


def move_model(model, device):
    """The MXNet tab's branch of ``Trainer.prepare_model``: Gluon parameters and the
    arrays of a from-scratch model."""
    model.collect_params().reset_ctx(device)
    model.set_scratch_params_device(device)


class Module(_nn.Block, HyperParameters):
    """Module(plot_train_per_epoch=2, plot_valid_per_epoch=1)

    d2l's model base class: a Gluon Block with a progress board, whose array
    attributes ``set_scratch_params_device`` moves."""

    def __init__(self, plot_train_per_epoch=2, plot_valid_per_epoch=1):
        super().__init__()
        self.save_hyperparameters()
        self.board = ProgressBoard()

    def set_scratch_params_device(self, device):
        """set_scratch_params_device(device)

        Move every array attribute (and those of sub-modules) to `device` and attach
        its gradient (the chapter's ``#@save`` cell)."""
        for name, value in list(vars(self).items()):
            if isinstance(value, np.ndarray):
                moved = value.as_in_ctx(device)
                moved.attach_grad()
                setattr(self, name, moved)
            elif isinstance(value, Module):
                value.set_scratch_params_device(device)
            elif isinstance(value, list):
                for part in value:
                    if isinstance(part, Module):
                        part.set_scratch_params_device(device)

Trainer = trainer_class(sys.modules[__name__])
