"""gpuarr.compat.d2l: the book's own library, as far as its "GPUs" section uses it.

    from gpuarr.compat.d2l import torch as d2l        # for: from d2l import torch as d2l
    from gpuarr.compat.d2l import mxnet as d2l        # ... mxnet, tensorflow, jax

Each edition's import cell opens with ``from d2l import <framework> as d2l``, and the
section's last cells extend d2l's classes (``@d2l.add_to_class(d2l.Trainer)``) with
device support: ``Trainer.__init__`` picks ``min(num_gpus, d2l.num_gpus())`` GPUs,
``prepare_batch`` moves each batch there with ``d2l.to``, ``prepare_model`` moves the
model (MXNet: ``collect_params().reset_ctx`` and ``set_scratch_params_device``). Each
module here holds those names over the edition's gpuarr.compat shim and nothing else:
the book's plotting, data sets and training loops are outside the GPU chapter, and a
name outside it raises AttributeError naming gpuarr's spelling.

As in the pip package (whose ``#@save`` cells are the section's), the classes are the
library's final form: the Trainer already has the section's device support, and the
section's cells replace its methods with the same code.
"""
from .._shim import outside

__getattr__ = outside("d2l", __name__)
