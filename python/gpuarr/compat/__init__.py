"""gpuarr.compat: one import line per edition of the GPU chapter.

Each edition of *Dive into Deep Learning*'s "GPUs" chapter runs on gpuarr with its
import line changed:

    import gpuarr.compat.torch as torch                       # PyTorch
    from gpuarr.compat.mxnet import np, npx, nd, gluon, autograd, init   # MXNet
    import gpuarr.compat.tensorflow as tf                     # TensorFlow
    import gpuarr.compat.jax as jax                           # JAX
    import gpuarr.compat.jax.numpy as jnp
    from gpuarr.compat.flax import linen as nn                # JAX edition's Flax
    from gpuarr.compat.d2l import torch as d2l                # the book's library

Each module is thin: every name is a line or two over gpuarr's own API, and covers
what the chapter's cells (and the PyTorch notes that teach the same lesson) use. A
name outside the chapter raises an AttributeError that names gpuarr's spelling.
Where a framework's rules differ from gpuarr's, the shim follows the framework and
says so in its docstring (TensorFlow copies across devices implicitly; JAX arrays are
immutable). Nothing is imported here: each shim loads on its own import.
"""
