"""``from d2l import tensorflow as d2l`` over gpuarr.compat.tensorflow: the TensorFlow
tab's import cell loads it; its device helpers are the chapter's."""
from .. import tensorflow as _tf
from .._shim import outside
from ._library import HyperParameters, ProgressBoard, add_to_class, devices

__getattr__ = outside("d2l", __name__)
__all__ = ["HyperParameters", "ProgressBoard", "add_to_class", "cpu", "gpu", "num_gpus",
           "try_gpu", "try_all_gpus"]


def cpu():
    """cpu()

    A scope that places new tensors on the CPU."""
    return _tf.device("/CPU:0")


def gpu(i=0):
    """gpu(i=0)

    A scope that places new tensors on GPU `i`."""
    return _tf.device(f"/GPU:{i}")


def num_gpus():
    """num_gpus()

    The number of GPUs."""
    return len(_tf.config.experimental.list_physical_devices("GPU"))


try_gpu, try_all_gpus = devices(gpu, num_gpus, cpu)
