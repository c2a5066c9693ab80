"""``mxnet.npx`` over gpuarr: contexts and counting GPUs."""
import gpuarr

from .._shim import outside

__getattr__ = outside("npx", __name__)


def cpu(device_id=0):
    """cpu(device_id=0)

    The CPU context (``gpuarr.cpu()``)."""
    return gpuarr.cpu()


def gpu(device_id=0):
    """gpu(device_id=0)

    GPU context `device_id` (``gpuarr.gpu(i)``); naming one never fails."""
    return gpuarr.gpu(device_id)


def num_gpus():
    """num_gpus()

    The number of GPUs (``gpuarr.num_gpus()``), 0 without one."""
    return gpuarr.num_gpus()


def set_np(shape=True, array=True, dtype=False):
    """set_np(shape=True, array=True, dtype=False)

    MXNet's switch to NumPy semantics: gpuarr has them always, so nothing to do."""


def reset_np():
    """reset_np()

    Nothing to undo (see set_np)."""
