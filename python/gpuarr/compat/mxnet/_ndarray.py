"""The MXNet shim's array (gpuarr.compat.mxnet.NDArray) and its context spellings."""
import gpuarr

from .._shim import Tensor as _Wrapper


def context(ctx):
    """A gpuarr Device for a ``ctx=`` argument (None: the CPU, as MXNet's default;
    a list: its first context)."""
    if ctx is None:
        return gpuarr.cpu()
    if isinstance(ctx, (list, tuple)):
        return context(ctx[0])
    if not isinstance(ctx, gpuarr.Device):
        raise TypeError(f"ctx= takes a context such as npx.gpu(0) or mx.cpu(), "
                        f"not {type(ctx).__name__}")
    return ctx


class NDArray(_Wrapper):
    """NDArray(array)

    A gpuarr array in MXNet's spelling: ``ctx`` / ``context``, ``as_in_ctx`` /
    ``as_in_context`` (the array itself when already there), ``copyto`` (always a
    copy), ``asnumpy()``; all else is gpuarr's."""

    __slots__ = ()
    legacy = False  # True for the 1.x ``nd`` arrays, which print MXNet's NDArray form

    @property
    def ctx(self):
        """The context (gpuarr Device) the array lives on."""
        return self._a.device

    context = ctx

    def as_in_ctx(self, ctx):
        """as_in_ctx(ctx)

        The array on `ctx`: itself when already there, else a copy there."""
        return self._wrap(self._a.to(context(ctx)))

    as_in_context = as_in_ctx

    def copyto(self, other):
        """copyto(other)

        A new copy on context `other` (always new memory), or into array `other`."""
        return self._wrap(self._a.copyto(other._a if isinstance(other, NDArray)
                                         else context(other)))

    def asnumpy(self):
        """asnumpy()

        A NumPy copy of the values on the host."""
        return self._a.numpy()

    def __repr__(self):
        if not self.legacy:
            return repr(self._a)
        body = str(self._a).rsplit(" @", 1)[0]
        shape = "x".join(str(n) for n in self._a.shape)
        return f"{body}\n<NDArray {shape} @{self._a.device!r}>"


class LegacyNDArray(NDArray):
    """LegacyNDArray(array)

    The 1.x ``mxnet.nd`` array: prints as ``[1. 2. 3.]`` and ``<NDArray 3 @gpu(0)>``."""

    __slots__ = ()
    legacy = True
