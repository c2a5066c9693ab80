"""The JAX shim's array: immutable, ``device()``, ``.at[i].set(v)``."""
import gpuarr

from .._shim import Tensor as _Wrapper
from .._shim import unwrap

_IMMUTABLE = ("JAX arrays are immutable: instead of x[idx] = y, write "
              "x = x.at[idx].set(y)")


class Array(_Wrapper):
    """Array(array)

    A gpuarr array in JAX's spelling, and with JAX's rule: immutable. ``x[i] = v`` and
    in-place operators raise or rebind (``x += 1`` makes a new array, as in JAX);
    ``x.at[i].set(v)`` / ``.add(v)`` return a new array; ``x.device()`` is its device
    (the d2l edition's spelling), ``x.devices()`` the set of them."""

    __slots__ = ()

    def device(self):
        """device()

        The device the array lives on."""
        return self._a.device

    def devices(self):
        """devices()

        {the device} (JAX's spelling for a sharded array's devices)."""
        return {self._a.device}

    def __setitem__(self, key, value):
        raise TypeError(_IMMUTABLE)

    def __setattr__(self, name, value):
        raise AttributeError(_IMMUTABLE)

    @property
    def at(self):
        """``x.at[idx].set(v)``, ``.add(v)``: a new array with those elements changed."""
        return _At(self)

    def block_until_ready(self):
        """block_until_ready()

        Wait for the array's queued work; the array itself."""
        gpuarr.synchronize(self._a.device)
        return self


def _rebinding(name):
    def forward(self, other):
        return getattr(self, f"__{name}__")(other)  # a new array: JAX has no in place
    forward.__name__ = f"__i{name}__"
    return forward


for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
           "and", "or", "xor"):
    setattr(Array, f"__i{_n}__", _rebinding(_n))


class _At:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, key):
        return _Update(self.x, key)


class _Update:
    def __init__(self, x, key):
        self.x, self.key = x, unwrap(key)

    def _apply(self, fn):
        new = self.x._a.copy()
        new[self.key] = fn(new[self.key])
        return Array(new)

    def set(self, value):
        """set(value): a new array with x[idx] = value."""
        return self._apply(lambda old: unwrap(value))

    def add(self, value):
        """add(value): a new array with x[idx] += value."""
        return self._apply(lambda old: old + unwrap(value))
