"""``jax.numpy`` over gpuarr: arrays made on the default device (the first GPU when
there is one, as JAX's), immutable (gpuarr.compat.jax.Array)."""
import gpuarr

from .._shim import outside, wrapping
from ._array import Array
from .devices import default_device

__getattr__ = outside("jnp", __name__)
exp, dot, matmul, sum = (wrapping(f, Array) for f in
                         (gpuarr.exp, gpuarr.matmul, gpuarr.matmul, gpuarr.sum))
float16, float32, float64, int32, int64 = (gpuarr.float16, gpuarr.float32, gpuarr.float64,
                                           gpuarr.int32, gpuarr.int64)
ndarray = Array


def array(obj, dtype=None):
    """array(obj, dtype=None)

    A new array of Python or NumPy data on the default device."""
    obj = obj.array.numpy() if isinstance(obj, Array) else obj
    return Array(gpuarr.array(obj, dtype=dtype, device=default_device()))


def ones(shape, dtype=None):
    """ones(shape, dtype=None)

    Ones of `shape` on the default device."""
    return Array(gpuarr.ones(shape, dtype=dtype, device=default_device()))


def zeros(shape, dtype=None):
    """zeros(shape, dtype=None)

    Zeros of `shape` on the default device."""
    return Array(gpuarr.zeros(shape, dtype=dtype, device=default_device()))
