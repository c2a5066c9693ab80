"""``flax.linen`` over gpuarr: the layers of the JAX edition's GPU chapter.

    from gpuarr.compat.flax import linen as nn
    net = nn.Sequential([nn.Dense(1)])
    params = net.init(jax.random.PRNGKey(0), x)      # {'params': {'layers_0': {...}}}
    net.apply(params, x)

Flax's rule is followed: a module holds no parameters; ``init`` returns them as a tree
of dicts and ``apply`` takes them, so the same key gives the same parameters. The
leaves are gpuarr.compat.jax arrays (``leaf.device()``), and ``jax.device_put(params,
d)`` / ``jax.tree_util.tree_map`` work on the tree.

Where gpuarr differs from JAX, and what this shim does: JAX makes arrays "uncommitted"
on its default device and runs an operation where its committed operands are; gpuarr
has only committed arrays. So ``init`` makes the parameters on the device of its input
(the chapter's input is on the default device, so they land where JAX puts them), and
``apply`` with parameters and input on two devices raises DeviceMismatchError, as JAX
does for arrays committed to two devices. Nothing is copied implicitly.
"""
import math
import zlib

import gpuarr
from gpuarr import special
from gpuarr.nn import functional as _F

from .._shim import outside, unwrap
from ..jax._array import Array
from ..jax.devices import default_device

__getattr__ = outside("nn", __name__)

# lecun_normal, Flax's default kernel init: a normal truncated to two standard
# deviations, divided by that truncated distribution's own standard deviation so the
# kernel's variance is exactly 1 / fan_in.
_TRUNCATION = 2.0
_TRUNCATED_STD = 0.87962566103423978


def _key(rngs):
    """The key `init` draws parameters with: a key, or {'params': key}."""
    if isinstance(rngs, dict):
        if "params" not in rngs:
            raise ValueError("init: the rngs dict needs a 'params' key, as in "
                             "net.init({'params': jax.random.PRNGKey(0)}, x)")
        rngs = rngs["params"]
    if not (isinstance(rngs, tuple) and len(rngs) == 2 and rngs[0] == "key"):
        raise TypeError(f"init takes a PRNG key first, as in "
                        f"net.init(jax.random.PRNGKey(0), x); got {type(rngs).__name__}")
    return rngs


def _seed(key, path):
    """The seed of the parameter at `path` (such as 'layers_0/kernel'): Flax folds the
    module's path into the key, so each parameter draws its own values and the same
    key always gives the same tree. crc32, not hash(): str hashes change per process."""
    return zlib.crc32(f"{key[1]}/{path}".encode())


def _lecun_normal(seed, shape, dtype, device):
    """A kernel of `shape` = (fan_in, features), drawn on `device`.

    Written here because gpuarr has no truncated normal: a uniform draw between the
    normal CDF's values at -2 and 2, sent through its inverse (special.ndtri), is a
    normal truncated to [-2, 2], drawn on the device like any other draw."""
    edge = 0.5 * math.erfc(_TRUNCATION / math.sqrt(2.0))          # ndtr(-2)
    gpuarr.random.seed(seed)
    u = gpuarr.random.uniform(edge, 1.0 - edge, size=shape, dtype=gpuarr.float32,
                              device=device)
    scale = math.sqrt(1.0 / shape[0]) / _TRUNCATED_STD
    return (special.ndtri(u) * scale).astype(dtype)


def _input(x):
    """A gpuarr array of a layer's input: a shim array, a gpuarr array, or data (made
    on the default device, as jnp.asarray does)."""
    if isinstance(x, Array):
        return unwrap(x)
    if isinstance(x, gpuarr.Array):
        return x
    return gpuarr.asarray(x, device=default_device())


def _as(a, dtype):
    return a if a.dtype == dtype else a.astype(dtype)


class Module:
    """Module()

    The base of this shim's layers: ``init(key, x)`` makes the parameter tree,
    ``apply(variables, x)`` runs the layer with it. Subclasses define
    ``_init(key, path, x) -> (params, y)`` and ``_forward(params, x) -> y`` over gpuarr
    arrays; ``@nn.compact`` modules of one's own are outside the chapter."""

    def init(self, rngs, x):
        """init(rngs, x)

        {'params': tree}: this module's parameters, drawn with the key `rngs` for
        the input `x`, on x's device."""
        params, _ = self._init(_key(rngs), "", _input(x))
        return {"params": _wrapped(params)}

    def apply(self, variables, x):
        """apply(variables, x)

        This module's output for `x` with the parameters of `variables` (what init
        returned, or a tree moved by jax.device_put)."""
        if not isinstance(variables, dict) or "params" not in variables:
            raise TypeError("apply takes what init returned ({'params': ...}) first, as "
                            "in net.apply(params, x)")
        return Array(self._forward(_unwrapped(variables["params"]), _input(x)))

    def __call__(self, *args, **kwargs):
        raise TypeError(f"a Flax module is run through its parameters: "
                        f"params = net.init(key, x), then net.apply(params, x); "
                        f"{type(self).__name__}(...)(x) works only inside another "
                        f"module's own code, which is outside the chapter")


class Dense(Module):
    """Dense(features, use_bias=True, dtype=None, param_dtype=float32)

    ``x @ kernel + bias`` over x's last axis; kernel (in, features) drawn by
    lecun_normal, bias zeros. The output's dtype is `dtype`, or JAX's promotion of the
    input's and the parameters' (an integer input computes in param_dtype)."""

    def __init__(self, features, use_bias=True, dtype=None, param_dtype=gpuarr.float32):
        if not isinstance(features, int) or features < 1:
            raise ValueError(f"Dense: features must be a positive int, got {features!r}")
        self.features, self.use_bias = features, bool(use_bias)
        self.dtype, self.param_dtype = dtype, param_dtype

    def __repr__(self):
        return f"Dense(features={self.features}, use_bias={self.use_bias})"

    def _init(self, key, path, x):
        if x.ndim < 1:
            raise ValueError("Dense: the input needs at least one axis (its last is the "
                             "features)")
        params = {"kernel": _lecun_normal(_seed(key, path + "kernel"),
                                          (x.shape[-1], self.features), self.param_dtype,
                                          x.device)}
        if self.use_bias:
            params["bias"] = gpuarr.zeros((self.features,), dtype=self.param_dtype,
                                          device=x.device)
        return params, self._forward(params, x)

    def _forward(self, params, x):
        kernel = _param(params, "kernel")
        dtype = self.dtype
        if dtype is None:
            dtype = (kernel.dtype if not gpuarr.isdtype(x.dtype, "real floating")
                     else gpuarr.result_type(x.dtype, kernel.dtype))
        y = gpuarr.matmul(_as(x, dtype), _as(kernel, dtype))
        return y + _as(_param(params, "bias"), dtype) if self.use_bias else y


class Sequential(Module):
    """Sequential(layers)

    The layers (modules, or functions such as nn.relu) one after the other; the
    parameters of the i-th are ``params['params']['layers_i']``, as Flax names them."""

    def __init__(self, layers):
        if not isinstance(layers, (list, tuple)):
            raise TypeError("Sequential takes a list of layers, as in "
                            "nn.Sequential([nn.Dense(1)])")
        self.layers = list(layers)

    def __repr__(self):
        return f"Sequential({self.layers!r})"

    def _init(self, key, path, x):
        params = {}
        for i, layer in enumerate(self.layers):
            if isinstance(layer, Module):
                params[f"layers_{i}"], x = layer._init(key, f"{path}layers_{i}/", x)
            else:
                x = _input(layer(Array(x)))
        return params, x

    def _forward(self, params, x):
        for i, layer in enumerate(self.layers):
            if isinstance(layer, Module):
                x = layer._forward(_param(params, f"layers_{i}"), x)
            else:
                x = _input(layer(Array(x)))
        return x


def relu(x):
    """relu(x)

    max(x, 0), elementwise."""
    return Array(_F.relu(_input(x)))


def _param(params, name):
    if not isinstance(params, dict) or name not in params:
        have = sorted(params) if isinstance(params, dict) else type(params).__name__
        raise KeyError(f"apply: no parameter {name!r} here (found {have}); pass what "
                       f"init returned for this same module")
    return params[name]


def _wrapped(tree):
    return {k: _wrapped(v) if isinstance(v, dict) else Array(v) for k, v in tree.items()}


def _unwrapped(tree):
    return {k: _unwrapped(v) if isinstance(v, dict) else _input(v) for k, v in tree.items()}
