"""``mxnet.gluon`` over gpuarr: ``gluon.nn`` (Sequential, Dense) and ``Parameter``."""
from ..._shim import outside
from . import nn
from .nn import Parameter

__getattr__ = outside("gluon", __name__)
