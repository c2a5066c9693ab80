"""gpuarr.nn: just enough of a neural-network library for the GPUs chapter.

A model is a tree of modules whose leaves hold parameter arrays. ``net.to(device)``
moves every parameter (and returns the net), ``net(X)`` runs the forward pass where
``X`` and the parameters live, and ``state_dict()`` / ``load_state_dict()`` read and
write the parameters (with ``gpuarr.save`` / ``gpuarr.load`` for files). Forward
only: there is no autograd.

    >>> net = gpuarr.nn.Sequential(gpuarr.nn.Linear(3, 1))
    >>> net = net.to(gpuarr.try_gpu())
    >>> net[0].weight.device
    gpu(0)
"""
import math
from collections import OrderedDict, namedtuple

from . import _core
from ._core import Array

__all__ = ["Module", "Linear", "Sequential", "ReLU"]

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class Module:
    """Module()

    Base class of layers and models. Assigning an Array to an attribute registers a
    parameter; assigning a Module registers a child. Subclasses define
    ``forward(*inputs)``; calling the module calls it."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())

    # --- registration through attributes --------------------------------------

    def _check_init(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before "
                "assigning parameters or sub-modules")

    def __setattr__(self, name, value):
        """__setattr__(name, value)

        Assigning an Array registers a parameter, assigning a Module a child; assigning
        None to either removes it. Other values are plain attributes."""
        if isinstance(value, (Array, Module)):
            self._check_init()
            for d in (self._parameters, self._modules):
                d.pop(name, None)
            self.__dict__.pop(name, None)
            (self._parameters if isinstance(value, Array) else self._modules)[name] = value
        elif "_parameters" in self.__dict__ and (name in self._parameters
                                                 or name in self._modules):
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to {name!r}: it "
                                "holds a parameter or a module (use an Array or a Module)")
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
            object.__setattr__(self, name, None)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """__getattr__(name)

        A registered parameter or child module by its attribute name."""
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name):
        """__delattr__(name)

        Unregister a parameter or child module (or delete a plain attribute)."""
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    # --- the tree -------------------------------------------------------------------

    def named_children(self):
        """named_children()

        Iterate over (name, module) of the direct sub-modules."""
        return iter(self._modules.items())

    def children(self):
        """children()

        Iterate over the direct sub-modules."""
        return iter(self._modules.values())

    def modules(self):
        """modules()

        Iterate over this module and every module below it."""
        yield self
        for child in self._modules.values():
            yield from child.modules()

    def named_parameters(self, prefix=""):
        """named_parameters(prefix='')

        Iterate over (dotted name, array) of every parameter, this module's first,
        then each child's in registration order: ``('0.weight', W)``."""
        for name, p in self._parameters.items():
            yield prefix + name, p
        for cname, child in self._modules.items():
            yield from child.named_parameters(prefix + cname + ".")

    def parameters(self):
        """parameters()

        Iterate over every parameter array of the module and its children."""
        for _, p in self.named_parameters():
            yield p

    # --- devices ----------------------------------------------------------------------

    def to(self, device=None):
        """to(device)

        Move every parameter to ``device`` (a Device or a string such as 'gpu:0'), in
        place, and return the module itself, so ``net = net.to(try_gpu())`` works.
        Parameters already there are left as they are (no copy)."""
        if device is None:
            raise TypeError("to() needs a device, e.g. net.to(gpuarr.try_gpu())")
        dev = _core.Device(device)
        for m in self.modules():
            for name, p in list(m._parameters.items()):
                m._parameters[name] = p.to(dev)
        return self

    def cpu(self):
        """cpu()

        ``to(gpuarr.cpu())``."""
        return self.to(_core.cpu())

    def cuda(self, i=0):
        """cuda(i=0)

        ``to(gpuarr.gpu(i))``."""
        return self.to(_core.gpu(i))

    # --- parameters in and out ------------------------------------------------------

    def state_dict(self):
        """state_dict()

        An ordered dict from dotted parameter names to the parameter arrays themselves
        (on their devices, no copy). ``gpuarr.save(path, net.state_dict())`` writes
        them to a file."""
        return OrderedDict(self.named_parameters())

    def load_state_dict(self, state_dict, strict=True):
        """load_state_dict(state_dict, strict=True)

        Copy the arrays of ``state_dict`` (gpuarr or NumPy arrays, from any device)
        into the parameters, which keep their device, dtype and identity. Shapes must
        match; with ``strict`` the keys must match exactly. Returns
        ``(missing_keys, unexpected_keys)``."""
        import numpy as np

        own = dict(self.named_parameters())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(f"missing keys {missing}")
            if unexpected:
                parts.append(f"unexpected keys {unexpected}")
            raise KeyError(f"load_state_dict for {type(self).__name__}: "
                           + " and ".join(parts) + " (pass strict=False to load the rest)")
        for key, param in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            shape = tuple(value.shape) if hasattr(value, "shape") else np.shape(value)
            if shape != tuple(param.shape):
                raise ValueError(f"load_state_dict: {key!r} has shape {shape} in the "
                                 f"state dict, but the parameter has shape {param.shape}")
        for key, param in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Array):
                from ._creation import asarray

                value = asarray(np.asarray(value), dtype=param.dtype, device=_core.cpu())
            elif value.dtype != param.dtype:
                value = value.astype(param.dtype)
            value.copyto(param)
        return IncompatibleKeys(missing, unexpected)

    # --- running ------------------------------------------------------------------------

    def forward(self, *inputs):
        """forward(*inputs)

        The computation of the module; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *inputs, **kwargs):
        """__call__(*inputs, **kwargs)

        ``net(X)`` is ``net.forward(X)``; it runs on the inputs' device."""
        return self.forward(*inputs, **kwargs)

    def extra_repr(self):
        """extra_repr()

        The text inside the parentheses of this module's repr."""
        return ""

    def __repr__(self):
        """__repr__()

        The module and its children, one per line, as PyTorch prints them."""
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ")
                 for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


class Linear(Module):
    """Linear(in_features, out_features, bias=True, device=None, dtype=None)

    ``y = x @ weight.T + bias`` with ``weight`` of shape (out_features, in_features)
    and ``bias`` of shape (out_features,), both drawn from U(-1/sqrt(in_features),
    1/sqrt(in_features)) on ``device`` (default: the default device) as PyTorch
    does. ``dtype`` defaults to float32."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        from . import random

        in_features, out_features = int(in_features), int(out_features)
        if in_features <= 0 or out_features <= 0:
            raise ValueError(f"Linear({in_features}, {out_features}): feature counts "
                             "must be positive")
        self.in_features = in_features
        self.out_features = out_features
        dtype = "float32" if dtype is None else dtype
        k = 1.0 / math.sqrt(in_features)
        self.weight = random.uniform(-k, k, size=(out_features, in_features), dtype=dtype,
                                     device=device)
        if bias:
            self.bias = random.uniform(-k, k, size=(out_features,), dtype=dtype,
                                       device=self.weight.device)
        else:
            object.__setattr__(self, "bias", None)

    def forward(self, x):
        """forward(x)

        ``x @ weight.T + bias``, computed on x's device (which must be the
        parameters' device)."""
        y = x @ self.weight.T
        if self.bias is not None:
            y = y + self.bias
        return y

    def extra_repr(self):
        """extra_repr()

        ``in_features=..., out_features=..., bias=...`` for the repr."""
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class ReLU(Module):
    """ReLU()

    ``gpuarr.maximum(x, 0)``, elementwise, on x's device."""

    def forward(self, x):
        """forward(x)

        max(x, 0) elementwise."""
        from . import maximum

        return maximum(x, 0)


class Sequential(Module):
    """Sequential(*modules)

    The modules applied one after another. Index it (``net[0]``, ``net[-1]``,
    ``net[1:]``), take ``len(net)``, iterate over it, and append with ``add``."""

    def __init__(self, *modules):
        super().__init__()
        for m in modules:
            self.add(m)

    def add(self, *modules):
        """add(*modules)

        Append modules (Gluon's ``net.add(...)``); returns the net."""
        for m in modules:
            if not isinstance(m, Module):
                raise TypeError(f"Sequential holds Modules, got {type(m).__name__}")
            self._modules[str(len(self._modules))] = m
        return self

    def __getitem__(self, i):
        """__getitem__(i)

        ``net[i]`` is the i-th module (negative indices count from the end);
        ``net[a:b]`` is a new Sequential of those modules (the same objects)."""
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return Sequential(*mods[i])
        try:
            return mods[i]
        except IndexError:
            raise IndexError(f"index {i} is out of range for a Sequential of "
                             f"{len(mods)} modules") from None

    def __len__(self):
        """__len__()

        The number of modules."""
        return len(self._modules)

    def __iter__(self):
        """__iter__()

        Iterate over the modules in order."""
        return iter(list(self._modules.values()))

    def forward(self, x):
        """forward(x)

        Each module in turn, the output of one the input of the next."""
        for m in self._modules.values():
            x = m(x)
        return x
