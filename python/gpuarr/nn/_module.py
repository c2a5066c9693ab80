"""Module and Parameter: a model is a tree of modules whose leaves hold parameters
(trained) and buffers (state that moves with the model but is not trained).

``gpuarr.Array`` is one C type that cannot be subclassed (docs/DESIGN.md), so
``Parameter`` is not a subclass of it: ``Parameter(x)`` returns a plain Array, a new
leaf that shares x's memory and requires grad, and remembers it (a weak reference).
``isinstance(p, nn.Parameter)`` is True exactly for arrays that ``Parameter()`` returned,
while they live, whatever their ``requires_grad`` became since (a frozen parameter is
still a parameter). ``type(p)`` is ``gpuarr.Array``.
"""
import weakref
from collections import OrderedDict, namedtuple

import numpy as np

from .. import _core
from .._capture import _guard as _capture_guard, _recording as _capture_recording
from .._core import Array
from .._creation import asarray, empty
from .._inspection import isdtype
from ..autograd import _clear_grads, no_grad

__all__ = ["Parameter", "Module"]

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])

# id(array) -> weak reference to it, for every array Parameter() returned and that is
# alive. The callback drops the entry when the array dies, before its id can be reused.
_PARAMETERS = {}


def _forget(key):
    return lambda _ref: _PARAMETERS.pop(key, None)


def _is_parameter(obj):
    ref = _PARAMETERS.get(id(obj))
    return ref is not None and ref() is obj


# id(parameter) -> (weak reference to it, the device it was moved to) for parameters
# that Module.to() replaced by a copy on another device: an optimizer made before the
# move still holds them, and would silently train nothing (optim asks moved_to()).
_MOVED = {}


def _forget_moved(key):
    return lambda _ref: _MOVED.pop(key, None)


def moved_to(p):
    """The device that ``Module.to()`` moved parameter ``p`` to (replacing it by a new
    parameter there), or None when it was not replaced."""
    entry = _MOVED.get(id(p))
    return entry[1] if entry is not None and entry[0]() is p else None


def _trainable_dtype(dtype):
    return isdtype(dtype, ("real floating", "complex floating"))


class _ParameterType(type):
    """The metaclass that makes ``isinstance(x, Parameter)`` ask the registry."""

    def __instancecheck__(cls, obj):
        return _is_parameter(obj)


class Parameter(metaclass=_ParameterType):
    """Parameter(data=None, requires_grad=True)

    Mark an array as a parameter of a model: returns a new leaf Array that shares
    ``data``'s memory (``data`` itself is not changed) and has ``requires_grad`` set,
    as PyTorch's ``nn.Parameter`` does. Assigning it to a Module attribute registers
    it; ``isinstance(p, nn.Parameter)`` is True for it (the returned object is a plain
    ``gpuarr.Array``: the Array type cannot be subclassed). Integer and bool arrays
    need ``requires_grad=False``. ``data=None`` gives an empty float32 array."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty((0,))
        if not isinstance(data, Array):
            raise TypeError(f"Parameter() takes a gpuarr array, got {type(data).__name__} "
                            "(make one with gpuarr.asarray(...))")
        p = data.detach()
        if p is data:  # a new object, so data keeps its own requires_grad
            p = data[...]
        p.requires_grad_(bool(requires_grad))
        key = id(p)
        _PARAMETERS[key] = weakref.ref(p, _forget(key))
        return p


def _unique(pairs):
    """(name, array) pairs with each array once (a parameter shared by two modules)."""
    seen = set()
    for name, value in pairs:
        if id(value) not in seen:
            seen.add(id(value))
            yield name, value


class Module:
    """Module()

    Base class of layers and models. Assigning an Array to an attribute registers a
    parameter (a plain Array x becomes ``nn.Parameter(x)``; integer and bool arrays do
    not require grad), assigning a Module registers a child;
    ``register_buffer(name, x)`` registers state that moves and is saved with the model
    but is not trained. Subclasses define ``forward(*inputs)``; calling the module
    calls it. ``training`` says whether the module is in training mode (``train()``,
    ``eval()``)."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # --- registration through attributes --------------------------------------

    def _check_init(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before "
                "assigning parameters, buffers or sub-modules")

    def _registries(self):
        return (self._parameters, self._buffers, self._modules)

    def _unregister(self, name):
        for d in self._registries():
            d.pop(name, None)
        self._non_persistent_buffers.discard(name)
        self.__dict__.pop(name, None)

    def __setattr__(self, name, value):
        """__setattr__(name, value)

        Assigning an Array registers a parameter (``nn.Parameter(value)`` unless it is
        one already), or replaces the buffer of that name; assigning a Module registers
        a child; assigning None removes either. Other values are plain attributes."""
        if isinstance(value, Module):
            self._check_init()
            self._unregister(name)
            self._modules[name] = value
        elif isinstance(value, Array):
            self._check_init()
            if name in self._buffers:
                self._buffers[name] = value
                return
            if not isinstance(value, Parameter):
                value = Parameter(value, requires_grad=_trainable_dtype(value.dtype))
            self._unregister(name)
            self._parameters[name] = value
        elif "_parameters" in self.__dict__ and any(name in d for d in self._registries()):
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} to {name!r}: it holds a "
                    "parameter, buffer or module (use an Array, a Module or None)")
            self._unregister(name)
            object.__setattr__(self, name, None)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """__getattr__(name)

        A registered parameter, buffer or child module by its attribute name."""
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name):
        """__delattr__(name)

        Unregister a parameter, buffer or child module (or delete a plain attribute)."""
        if any(name in d for d in self._registries()):
            self._unregister(name)
        else:
            object.__delattr__(self, name)

    def register_buffer(self, name, tensor, persistent=True):
        """register_buffer(name, tensor, persistent=True)

        Register ``tensor`` (an Array, or None) as the buffer ``name``: state of the
        module that ``to()`` / ``cuda()`` / ``cpu()`` move with the parameters and that
        ``state_dict()`` holds (unless ``persistent=False``), but that is not a
        parameter and is not trained, such as a loss's class weights. Read it as
        ``self.<name>``; assigning an Array to that name later replaces it."""
        self._check_init()
        if not isinstance(name, str):
            raise TypeError(f"a buffer name is a str, got {type(name).__name__}")
        if not name or "." in name:
            raise KeyError(f"buffer name {name!r} must be a non-empty name without '.'")
        if tensor is not None and not isinstance(tensor, Array):
            raise TypeError(f"register_buffer({name!r}, ...) takes a gpuarr array or None, "
                            f"got {type(tensor).__name__}")
        if name in self._parameters or name in self._modules:
            raise KeyError(f"attribute {name!r} already holds a parameter or module")
        if name in self.__dict__:
            raise KeyError(f"attribute {name!r} already exists")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def register_parameter(self, name, param):
        """register_parameter(name, param)

        Register ``param`` (an ``nn.Parameter``, or None for an absent one such as
        ``Linear(bias=False)``'s bias) under ``name``."""
        self._check_init()
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter({name!r}, ...) takes an nn.Parameter or "
                            f"None, got {type(param).__name__} (wrap it: nn.Parameter(x))")
        self._unregister(name)
        self._parameters[name] = param

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
        for _, m in self.named_modules():
            yield m

    def named_modules(self, prefix=""):
        """named_modules(prefix='')

        Iterate over (dotted name, module) of this module ('') and every module below
        it, each once."""
        seen = set()

        def walk(module, name):
            if id(module) in seen:
                return
            seen.add(id(module))
            yield name, module
            for cname, child in module._modules.items():
                yield from walk(child, f"{name}.{cname}" if name else cname)

        yield from walk(self, prefix)

    def _named_members(self, registry, prefix, recurse):
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        pairs = ((f"{mname}.{k}" if mname else k, v)
                 for mname, m in modules for k, v in getattr(m, registry).items()
                 if v is not None)
        return _unique(pairs)

    def named_parameters(self, prefix="", recurse=True):
        """named_parameters(prefix='', recurse=True)

        Iterate over (dotted name, parameter) of every parameter, this module's
        first, then each child's in registration order: ``('0.weight', W)``. A
        parameter shared by two modules comes once."""
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse=True):
        """parameters(recurse=True)

        Iterate over every parameter of the module and its children (what an
        optimizer takes: ``gpuarr.optim.SGD(net.parameters(), lr=0.1)``)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True):
        """named_buffers(prefix='', recurse=True)

        Iterate over (dotted name, buffer) of every buffer, in the order of
        ``named_parameters``."""
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse=True):
        """buffers(recurse=True)

        Iterate over every buffer of the module and its children."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        """apply(fn)

        Call ``fn(m)`` on every sub-module, then on this module (d2l's
        ``net.apply(init_weights)``); returns the module."""
        for child in self._modules.values():
            child.apply(fn)
        fn(self)
        return self

    # --- modes and gradients ----------------------------------------------------------

    def train(self, mode=True):
        """train(mode=True)

        Set training mode (``training``) on this module and every module below it
        (Dropout drops only in training mode); returns the module."""
        if not isinstance(mode, bool):
            raise TypeError(f"train(mode) takes a bool, got {type(mode).__name__}")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        """eval()

        ``train(False)``: evaluation mode (Dropout passes its input through)."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """requires_grad_(requires_grad=True)

        Set ``requires_grad`` of every parameter (False freezes them); returns the
        module."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """zero_grad(set_to_none=True)

        Clear the gradients of every parameter: ``p.grad = None`` (the default, as in
        PyTorch), or with ``set_to_none=False`` fill existing gradients with zeros in
        place, on their devices."""
        _clear_grads(self.parameters(), set_to_none)

    # --- devices ----------------------------------------------------------------------

    def to(self, *args, device=None, dtype=None):
        """to(*args, device=None, dtype=None)

        Move every parameter, its gradient and every buffer to ``device`` (a Device or
        a string such as 'gpu:0') and/or convert the floating ones to ``dtype``
        (integer buffers keep theirs), in PyTorch's forms: ``net.to(try_gpu())``,
        ``net.to(gpuarr.float16)``, ``net.to(gpu(0), gpuarr.float16)``, keywords
        ``device=`` / ``dtype=``. Returns the module itself, so
        ``net = net.to(try_gpu())`` works. A changed parameter is a new Parameter (an
        Array cannot change device or dtype), so do this before giving its
        parameters to an optimizer; arrays already right are left as they are (no
        copy, the same objects)."""
        from .._array_to import _split_to_args

        device, dtype = _split_to_args(args, device, dtype, "Module.to")
        if device is None and dtype is None:
            raise TypeError("to() needs a device or a dtype, e.g. net.to(gpuarr.try_gpu()) "
                            "or net.to(gpuarr.float16)")
        dev = _core.Device(device) if device is not None else None
        dt = _core.DType(dtype) if dtype is not None else None
        if dt is not None and not _trainable_dtype(dt):
            raise TypeError(f"Module.to: {dt} is not a floating dtype; parameters are "
                            f"trained in floating point (float16, float32, float64)")

        def convert(a):
            if dev is not None and a.device != dev:
                a = a.to(dev)
            if dt is not None and _trainable_dtype(a.dtype) and a.dtype != dt:
                a = a.astype(dt)
            return a

        moved = {}  # a parameter shared by two modules changes once, and stays shared
        with no_grad():
            for m in self.modules():
                for name, p in list(m._parameters.items()):
                    if p is None:
                        continue
                    if id(p) not in moved:
                        c = convert(p)
                        if c is p:
                            continue
                        q = Parameter(c, requires_grad=p.requires_grad)
                        if p.grad is not None:
                            q.grad = convert(p.grad)
                        moved[id(p)] = q
                        _MOVED[id(p)] = (weakref.ref(p, _forget_moved(id(p))), q.device)
                    m._parameters[name] = moved[id(p)]
                for name, b in list(m._buffers.items()):
                    if b is not None:
                        m._buffers[name] = convert(b)
        return self

    def half(self):
        """half()

        ``to(gpuarr.float16)``: floating parameters and buffers in half precision."""
        return self.to(dtype=_core.float16)

    def float(self):
        """float()

        ``to(gpuarr.float32)``."""
        return self.to(dtype=_core.float32)

    def double(self):
        """double()

        ``to(gpuarr.float64)``."""
        return self.to(dtype=_core.float64)

    def cpu(self):
        """cpu()

        ``to(gpuarr.cpu())``."""
        return self.to(_core.cpu())

    def cuda(self, device=None):
        """cuda(device=None)

        ``to(gpuarr.gpu(device))`` (PyTorch's ``criterion.cuda()``, ``net.cuda(1)``);
        without ``device``, the current GPU (``gpuarr.cuda.current_device()``), as in
        PyTorch."""
        from .._current_device import current_device

        return self.to(_core.gpu(current_device() if device is None else device))

    # --- parameters in and out ------------------------------------------------------

    def _state_items(self):
        """(dotted name, array, is_parameter) for every entry of the state dict: each
        module's parameters, then its persistent buffers, then its children's."""
        for mname, m in self.named_modules():
            dot = mname + "." if mname else ""
            for k, v in m._parameters.items():
                if v is not None:
                    yield dot + k, v
            for k, v in m._buffers.items():
                if v is not None and k not in m._non_persistent_buffers:
                    yield dot + k, v

    def state_dict(self, keep_vars=False):
        """state_dict(keep_vars=False)

        An ordered dict from dotted names to the parameters and persistent buffers,
        on their devices and sharing their memory (no copy); detached from the graph
        unless ``keep_vars``. ``gpuarr.save(path, net.state_dict())`` writes them to a
        file."""
        return OrderedDict((k, v if keep_vars else v.detach())
                           for k, v in self._state_items())

    def load_state_dict(self, state_dict, strict=True):
        """load_state_dict(state_dict, strict=True)

        Copy the arrays of ``state_dict`` (gpuarr or NumPy arrays, from any device)
        into the parameters and buffers, which keep their device, dtype and identity.
        Shapes must match; with ``strict`` the keys must match exactly. Returns
        ``(missing_keys, unexpected_keys)``."""
        own = dict(self._state_items())
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
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            shape = tuple(value.shape) if hasattr(value, "shape") else np.shape(value)
            if shape != tuple(target.shape):
                raise ValueError(f"load_state_dict: {key!r} has shape {shape} in the "
                                 f"state dict, but the module's has shape {target.shape}")
        with no_grad():
            for key, target in own.items():
                if key not in state_dict:
                    continue
                value = state_dict[key]
                if not isinstance(value, Array):
                    value = asarray(np.asarray(value), dtype=target.dtype,
                                    device=_core.cpu())
                elif value.dtype != target.dtype:
                    value = value.astype(target.dtype)
                value.copyto(target)
        return IncompatibleKeys(missing, unexpected)

    # --- running ------------------------------------------------------------------------

    def forward(self, *inputs):
        """forward(*inputs)

        The computation of the module; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *inputs, **kwargs):
        """__call__(*inputs, **kwargs)

        ``net(X)`` is ``net.forward(X)``; it runs on the inputs' device."""
        if _capture_recording():  # a replay records again if these change
            _capture_guard(self._capture_token)
        return self.forward(*inputs, **kwargs)

    def _capture_token(self):
        """What a captured step's replay checks first: the mode, and which arrays are
        this module's parameters and buffers (one assigned anew, or moved by .to(),
        would not be read by the recorded plan)."""
        return (self.training, tuple(map(id, self._parameters.values())),
                tuple(map(id, self._buffers.values())))

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
