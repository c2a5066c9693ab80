"""What the framework shims share: an array wrapper that adds a framework's spellings
to a gpuarr array, and the error for a name outside the chapter.

gpuarr.Array is a C type that cannot be subclassed, and its attributes are gpuarr's
API (checked against the stubs), so a shim never adds names to it: each framework's
array is a small wrapper that forwards everything to the Array inside it and adds
only that framework's spellings (``x.ctx``, ``x.is_cuda``, ``x.device()``, ...).
"""
import operator

import gpuarr
from gpuarr import Array

# The operators an array of the chapter meets; each forwards to gpuarr's.
_BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
           "and", "or", "xor", "lt", "le", "gt", "ge", "eq", "ne")
_REFLECTED = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
              "and", "or", "xor")
_UNARY = ("neg", "pos", "abs", "invert")


class Tensor:
    """Tensor(array)

    A gpuarr array seen through a framework's spelling. Attributes and methods not
    defined here are gpuarr's (``x.device``, ``x.shape``, ``x.sum()``...), with
    arrays in their results wrapped again; ``x.array`` is the gpuarr array itself."""

    __slots__ = ("_a",)
    __hash__ = object.__hash__

    def __init__(self, array):
        if not isinstance(array, Array):
            raise TypeError(f"{type(self).__name__} wraps a gpuarr.Array, not "
                            f"{type(array).__name__}")
        object.__setattr__(self, "_a", array)

    @property
    def array(self):
        """The gpuarr.Array this tensor is (no copy)."""
        return self._a

    def _wrap(self, value):
        """Wrap an Array result; the same Array gives back this very wrapper, so
        ``x.cuda(1) is x`` holds when nothing moved, as in every framework."""
        if value is self._a:
            return self
        return wrap(value, type(self))

    def _operands(self, others):
        """The gpuarr arrays an operation of self with `others` runs on (a hook:
        TensorFlow's shim copies them to one device here)."""
        return [self._a] + [unwrap(o) for o in others]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._a, name)
        if callable(value) and not isinstance(value, (Array, gpuarr.Device, gpuarr.DType)):
            def call(*args, **kwargs):
                return self._wrap(value(*unwrap(args), **unwrap(kwargs)))
            call.__name__ = name
            call.__doc__ = value.__doc__
            return call
        return self._wrap(value)

    def __setattr__(self, name, value):
        setattr(self._a, name, unwrap(value))

    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a, spec)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (self._wrap(v) for v in self._a)

    def __getitem__(self, key):
        return self._wrap(self._a[unwrap(key)])

    def __setitem__(self, key, value):
        self._a[unwrap(key)] = unwrap(value)

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __index__(self):
        return operator.index(self._a)

    def __array__(self, dtype=None, copy=None):
        return self._a.__array__(dtype) if dtype is not None else self._a.__array__()


def _binary(name):
    op = getattr(operator, f"__{name}__") if name not in ("and", "or") else \
        getattr(operator, f"{name}_")

    def forward(self, other):
        a, b = self._operands([other])
        return self._wrap(op(a, b))
    forward.__name__ = f"__{name}__"
    return forward


def _reflected(name):
    op = getattr(operator, f"__{name}__") if name not in ("and", "or") else \
        getattr(operator, f"{name}_")

    def forward(self, other):
        a, b = self._operands([other])
        return self._wrap(op(b, a))
    forward.__name__ = f"__r{name}__"
    return forward


def _inplace(name):
    op = getattr(operator, f"__i{name}__")

    def forward(self, other):
        a, b = self._operands([other])
        object.__setattr__(self, "_a", op(a, b))  # the same Array, changed in place
        return self
    forward.__name__ = f"__i{name}__"
    return forward


def _unary(name):
    op = getattr(operator, f"__{name}__")

    def forward(self):
        return self._wrap(op(self._a))
    forward.__name__ = f"__{name}__"
    return forward


for _n in _BINARY:
    setattr(Tensor, f"__{_n}__", _binary(_n))
for _n in _REFLECTED:
    setattr(Tensor, f"__r{_n}__", _reflected(_n))
    setattr(Tensor, f"__i{_n}__", _inplace(_n))
for _n in _UNARY:
    setattr(Tensor, f"__{_n}__", _unary(_n))


def wrap(value, cls):
    """`value` with every gpuarr.Array in it (also in a tuple or list) wrapped as cls."""
    if isinstance(value, Array):
        return cls(value)
    if isinstance(value, (tuple, list)):
        return type(value)(wrap(v, cls) for v in value)
    return value


def unwrap(value):
    """`value` with every wrapper in it (also in a tuple, list or dict) unwrapped."""
    if isinstance(value, Tensor):
        return value._a
    if isinstance(value, (tuple, list)):
        return type(value)(unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


def wrapping(fn, cls):
    """fn over gpuarr arrays, taking and returning cls wrappers."""
    def call(*args, **kwargs):
        return wrap(fn(*unwrap(args), **unwrap(kwargs)), cls)
    call.__name__ = getattr(fn, "__name__", "call")
    call.__doc__ = fn.__doc__
    return call


def outside(shim, module):
    """A module ``__getattr__`` for the shim `module` (its ``__name__``), whose names
    the book spells ``shim.<name>`` ('torch', 'torch.cuda', 'tf'...): a name the chapter
    does not use raises AttributeError naming gpuarr's spelling."""

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        hint = (f"gpuarr.{name}" if hasattr(gpuarr, name)
                else "gpuarr's own API (help(gpuarr), README.md)")
        raise AttributeError(f"{module} covers the GPU chapter; "
                             f"`{shim}.{name}` is not part of it: use {hint}")
    return __getattr__
