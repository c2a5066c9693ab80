"""The layers: Linear, the activations, Flatten, Dropout and Sequential. Each
``forward`` is the function of the same name in gpuarr.nn.functional."""
import math

from .. import random
from . import functional as F
from ._module import Module, Parameter

__all__ = ["Linear", "ReLU", "Sigmoid", "Tanh", "Flatten", "Dropout", "Sequential"]


class Linear(Module):
    """Linear(in_features, out_features, bias=True, device=None, dtype=None)

    ``y = x @ weight.T + bias`` with ``weight`` of shape (out_features, in_features)
    and ``bias`` of shape (out_features,), both Parameters drawn from
    U(-1/sqrt(in_features), 1/sqrt(in_features)) on ``device`` (default: the default
    device) as PyTorch does. ``dtype`` defaults to float32."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        in_features, out_features = int(in_features), int(out_features)
        if in_features <= 0 or out_features <= 0:
            raise ValueError(f"Linear({in_features}, {out_features}): feature counts "
                             "must be positive")
        self.in_features = in_features
        self.out_features = out_features
        dtype = "float32" if dtype is None else dtype
        k = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(random.uniform(-k, k, size=(out_features, in_features),
                                               dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(random.uniform(-k, k, size=(out_features,), dtype=dtype,
                                                 device=self.weight.device))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        """forward(x)

        ``x @ weight.T + bias``, computed on x's device (which must be the
        parameters' device)."""
        return F.linear(x, self.weight, self.bias)

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
        return F.relu(x)


class Sigmoid(Module):
    """Sigmoid()

    ``1 / (1 + exp(-x))``, elementwise, on x's device (computed without overflow:
    ``nn.functional.sigmoid``)."""

    def forward(self, x):
        """forward(x)

        The logistic function elementwise."""
        return F.sigmoid(x)


class Tanh(Module):
    """Tanh()

    ``gpuarr.tanh(x)``, elementwise, on x's device."""

    def forward(self, x):
        """forward(x)

        tanh elementwise."""
        return F.tanh(x)


class Flatten(Module):
    """Flatten(start_dim=1, end_dim=-1)

    Merge the axes start_dim..end_dim into one, keeping the batch axis by default:
    (N, 1, 28, 28) becomes (N, 784)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = int(start_dim)
        self.end_dim = int(end_dim)

    def forward(self, x):
        """forward(x)

        ``nn.functional.flatten(x, start_dim, end_dim)``."""
        return F.flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self):
        """extra_repr()

        ``start_dim=..., end_dim=...`` for the repr."""
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Module):
    """Dropout(p=0.5)

    In training mode (``net.train()``, the default) zero each element with
    probability ``p`` and scale the others by ``1 / (1 - p)``; in evaluation mode
    (``net.eval()``) pass the input through. The mask is drawn on the input's device."""

    def __init__(self, p=0.5):
        super().__init__()
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be between 0 and 1, got {p}")
        self.p = p

    def forward(self, x):
        """forward(x)

        ``nn.functional.dropout(x, p, training=self.training)``."""
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        """extra_repr()

        ``p=...`` for the repr."""
        return f"p={self.p}"


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
