"""Methods of gpuarr.Array written in Python.

The Array type is defined in C (csrc/binding/py_array.c) with the hot paths (operators,
indexing, moves between devices). Methods that only combine core functions are
written here and attached to the type, so each stays next to the function it wraps.
Each module registers its methods with ``method(name)``.
"""
from ._core import Array

_registered = {}


def method(name=None):
    """Decorator: attach the function as ``Array.<name>``."""

    def attach(fn):
        setattr(Array, name or fn.__name__, fn)
        _registered[name or fn.__name__] = fn
        return fn

    return attach


def prop(name):
    """Decorator: attach a read-only property ``Array.<name>``."""

    def attach(fn):
        setattr(Array, name, property(fn, doc=fn.__doc__))
        _registered[name] = fn
        return fn

    return attach
