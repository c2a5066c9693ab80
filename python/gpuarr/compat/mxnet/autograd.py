"""``mxnet.autograd`` over gpuarr.autograd: ``record()``, ``pause()``."""
from gpuarr import autograd as _autograd

from .._shim import outside

__getattr__ = outside("autograd", __name__)
record, pause = _autograd.record, _autograd.pause


def is_recording():
    """is_recording()

    Whether operations are recorded now (gpuarr's grad mode)."""
    return _autograd.is_grad_enabled()
