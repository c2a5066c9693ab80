"""gpuarr.compat.mxnet: the MXNet editions of the GPU chapter, on gpuarr.

    from gpuarr.compat.mxnet import np, npx, nd, gluon, autograd, init   # MXNet 1.6+ / 2
    import gpuarr.compat.mxnet as mx; from gpuarr.compat.mxnet import nd  # MXNet 1.x
    from gpuarr.compat.mxnet.gluon import nn

Contexts are gpuarr Devices (``npx.gpu(1)`` and ``mx.gpu(1)`` print ``gpu(1)``, as
MXNet's do); ``ctx=`` is gpuarr's ``device=``; arrays are gpuarr arrays in MXNet's
spelling (gpuarr.compat.mxnet.NDArray). As in MXNet and gpuarr, operands on two devices
raise and nothing is copied implicitly. A name outside the chapter raises
AttributeError naming gpuarr's spelling.
"""
from .._shim import outside
from . import autograd, gluon, init, nd, np, npx
from ._ndarray import NDArray
from .npx import cpu, gpu, num_gpus

__getattr__ = outside("mx", __name__)
