"""``mxnet.nd`` (MXNet 1.x) over gpuarr: arrays that print as ``<NDArray 3 @gpu(0)>``."""
import types

import gpuarr

from .._shim import outside, wrapping
from ._ndarray import LegacyNDArray, context

__getattr__ = outside("nd", __name__)
exp, dot = (wrapping(f, LegacyNDArray) for f in (gpuarr.exp, gpuarr.matmul))
NDArray = LegacyNDArray


def array(source_array, ctx=None, dtype=None):
    """array(source_array, ctx=None, dtype=None)

    A new array on `ctx`; float32 unless `dtype` says otherwise, as MXNet's nd."""
    if isinstance(source_array, LegacyNDArray):
        source_array = source_array.asnumpy()
    return LegacyNDArray(gpuarr.array(source_array, dtype=dtype or gpuarr.float32,
                                      device=context(ctx)))


def ones(shape, ctx=None, dtype=None):
    """ones(shape, ctx=None, dtype=None)

    Ones of `shape` on `ctx`."""
    return LegacyNDArray(gpuarr.ones(shape, dtype=dtype, device=context(ctx)))


def zeros(shape, ctx=None, dtype=None):
    """zeros(shape, ctx=None, dtype=None)

    Zeros of `shape` on `ctx`."""
    return LegacyNDArray(gpuarr.zeros(shape, dtype=dtype, device=context(ctx)))


def _uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None):
    """uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None)

    Uniform [low, high) values of `shape` (MXNet 1.x says shape=, not size=) on `ctx`."""
    return LegacyNDArray(gpuarr.random.uniform(low, high, size=shape, dtype=dtype,
                                               device=context(ctx)))


random = types.SimpleNamespace(uniform=_uniform)
