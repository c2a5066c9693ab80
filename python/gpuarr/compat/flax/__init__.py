"""gpuarr.compat.flax: the Flax layers of the JAX edition of the GPU chapter, on gpuarr.

    from gpuarr.compat.flax import linen as nn        # for: from flax import linen as nn

Flax is its own library beside JAX, so its shim is its own module beside
gpuarr.compat.jax (whose arrays, keys and devices it uses). It covers what the
chapter's JAX cells build: ``nn.Sequential([nn.Dense(1)])``, ``params = net.init(key,
x)``, ``net.apply(params, x)``; ``jax.tree_util.tree_map`` and ``jax.device_put`` of
the parameter tree are gpuarr.compat.jax's. A name outside the chapter raises
AttributeError naming gpuarr's spelling.
"""
from .._shim import outside
from . import linen

__getattr__ = outside("flax", __name__)
