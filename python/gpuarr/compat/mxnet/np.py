"""``mxnet.np`` over gpuarr: arrays with ``ctx=`` (gpuarr's ``device=``)."""
import types

import gpuarr

from .._shim import outside, wrapping
from ._ndarray import NDArray, context

__getattr__ = outside("np", __name__)
exp, dot, matmul = (wrapping(f, NDArray) for f in (gpuarr.exp, gpuarr.matmul, gpuarr.matmul))
float16, float32, float64, int32, int64 = (gpuarr.float16, gpuarr.float32, gpuarr.float64,
                                           gpuarr.int32, gpuarr.int64)
ndarray = NDArray


def array(obj, dtype=None, ctx=None):
    """array(obj, dtype=None, ctx=None)

    A new array of Python or NumPy data on `ctx` (default: the CPU); Python data
    become float32 unless `dtype` says otherwise, as in MXNet's np (NumPy arrays keep
    their dtype)."""
    obj = obj.asnumpy() if isinstance(obj, NDArray) else obj
    if dtype is None and not hasattr(obj, "dtype"):
        dtype = gpuarr.float32
    return NDArray(gpuarr.array(obj, dtype=dtype, device=context(ctx)))


def ones(shape, dtype=None, ctx=None):
    """ones(shape, dtype=None, ctx=None)

    Ones of `shape` on `ctx`."""
    return NDArray(gpuarr.ones(shape, dtype=dtype, device=context(ctx)))


def zeros(shape, dtype=None, ctx=None):
    """zeros(shape, dtype=None, ctx=None)

    Zeros of `shape` on `ctx`."""
    return NDArray(gpuarr.zeros(shape, dtype=dtype, device=context(ctx)))


def _uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None):
    """uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None)

    Uniform [low, high) values of shape `size`, drawn on `ctx`."""
    return NDArray(gpuarr.random.uniform(low, high, size=size, dtype=dtype,
                                         device=context(ctx)))


def _normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None):
    """normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None)

    Normal values of shape `size`, drawn on `ctx`."""
    return NDArray(gpuarr.random.normal(loc, scale, size=size, dtype=dtype,
                                        device=context(ctx)))


random = types.SimpleNamespace(uniform=_uniform, normal=_normal, seed=gpuarr.random.seed)
