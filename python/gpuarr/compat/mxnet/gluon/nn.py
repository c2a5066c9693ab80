"""``mxnet.gluon.nn`` over gpuarr: ``Sequential`` with ``add`` and
``initialize(ctx=)``, and ``Dense``, whose input size is read at its first call.

Parameters are gpuarr arrays with ``attach_grad()`` (MXNet's autograd spelling);
``layer.weight`` is a ``Parameter`` whose ``data()`` is the array, as in Gluon."""
import gpuarr

from ..._shim import outside, unwrap
from .. import init as _init
from .._ndarray import NDArray, context

__getattr__ = outside("gluon.nn", __name__)


class Parameter:
    """Parameter(name, shape)

    A Gluon parameter: ``data()`` (its array on its context), ``grad()``,
    ``list_ctx()``; made by ``initialize``."""

    def __init__(self, name, shape):
        self.name, self.shape, self._array = name, tuple(shape), None
        self._ctx = None  # set by reset_ctx before the parameter is made

    def _make(self, init, device):
        self._array = init(self.shape, self._ctx or device)
        self._array.attach_grad()

    def reset_ctx(self, ctx):
        """reset_ctx(ctx)

        Move the parameter to context `ctx` (one made later is made there)."""
        self._ctx = context(ctx)
        if self._array is not None:
            self._array = self._array.to(self._ctx).detach()
            self._array.attach_grad()

    def data(self, ctx=None):
        """data(ctx=None)

        The parameter's array (on its one context)."""
        if self._array is None:
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized: call "
                               f"net.initialize(ctx=...) and then net(X) first")
        return NDArray(self._array)

    def grad(self, ctx=None):
        """grad(ctx=None)

        The parameter's gradient."""
        return NDArray(self.data()._a.grad)

    def list_ctx(self):
        """list_ctx()

        The contexts the parameter lives on (one here)."""
        return [self.data().ctx]

    def set_data(self, data):
        """set_data(data)

        Replace the parameter's values (on its context)."""
        self.data()._a[...] = unwrap(data)


class ParameterDict(dict):
    """{name: Parameter}, with ``reset_ctx(ctx)`` over all of them."""

    def reset_ctx(self, ctx):
        """reset_ctx(ctx)

        Move every parameter to context `ctx`."""
        for p in self.values():
            p.reset_ctx(ctx)


class Block:
    """Block()

    A Gluon block: ``initialize(init=None, ctx=None)``, ``collect_params()``,
    called on arrays."""

    def __init__(self):
        self._children = []
        self._init, self._ctx = None, None

    def initialize(self, init=None, ctx=None, force_reinit=False):
        """initialize(init=None, ctx=None, force_reinit=False)

        Choose the initializer and the context (default: CPU) of every parameter;
        layers whose input size is not known yet make theirs at their first call."""
        for b in [self] + self._blocks():
            b._init = init or _init.Uniform()
            b._ctx = context(ctx)
            b._made()

    def _blocks(self):
        out = []
        for c in self._children:
            out += [c] + c._blocks()
        return out

    def _made(self):
        """Make the parameters whose shape is known (a hook)."""

    def collect_params(self):
        """collect_params()

        {name: Parameter} of this block and its children (a ParameterDict)."""
        out = ParameterDict()
        for i, b in enumerate([self] + self._blocks()):
            for name, p in vars(b).items():
                if isinstance(p, Parameter):
                    out[f"{type(b).__name__.lower()}{i}_{name}"] = p
        return out

    def __call__(self, x):
        return NDArray(self.forward(unwrap(x))) if not isinstance(x, NDArray) \
            else type(x)(self.forward(unwrap(x)))


class Sequential(Block):
    """Sequential()

    Blocks run in order; ``add(*blocks)`` appends, ``net[i]`` is the i-th."""

    def add(self, *blocks):
        """add(*blocks)

        Append blocks."""
        self._children.extend(blocks)

    def __getitem__(self, i):
        return self._children[i]

    def __len__(self):
        return len(self._children)

    def forward(self, x):
        """forward(x)

        Each block on the output of the one before."""
        for b in self._children:
            x = b.forward(x)
        return x


class Dense(Block):
    """Dense(units, activation=None, use_bias=True, flatten=True, in_units=0)

    ``x @ weight.T + bias`` with ``weight`` of shape (units, in_units); an input of more
    or fewer than 2 axes is reshaped to (first axis, the rest), as Gluon's flatten does
    (so a (3,) input is 3 rows of 1). ``in_units=0`` is read from the first input."""

    def __init__(self, units, activation=None, use_bias=True, flatten=True, in_units=0):
        super().__init__()
        if activation not in (None, "relu"):
            raise ValueError(f"Dense: activation {activation!r} is outside the GPU "
                             f"chapter: use None or 'relu'")
        self.units, self.activation, self.flatten = int(units), activation, flatten
        self.weight = Parameter("weight", (self.units, int(in_units)))
        self.bias = Parameter("bias", (self.units,)) if use_bias else None

    def _made(self):
        if self.weight.shape[1] and self._init is not None:
            self.weight._make(self._init, self._ctx)
            if self.bias is not None:
                self.bias._make(_init.Zero(), self._ctx)

    def forward(self, x):
        """forward(x)

        The layer on x (an array on the parameters' context)."""
        if self._init is None:
            raise RuntimeError("Dense: call net.initialize(ctx=...) before net(X)")
        if self.flatten and x.ndim != 2:
            x = x.reshape(x.shape[0], -1)
        if self.weight._array is None:
            self.weight.shape = (self.units, x.shape[-1])
            self._made()
        y = x @ self.weight._array.T
        if self.bias is not None:
            y = y + self.bias._array
        return gpuarr.maximum(y, 0) if self.activation == "relu" else y
