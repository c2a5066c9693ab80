"""gpuarr.nn.functional: the layers and losses of gpuarr.nn as functions
(``import gpuarr.nn.functional as F``, as with PyTorch).

Each function runs on its inputs' device, made of gpuarr operations only, so autograd
differentiates it and nothing crosses to the host: no value is read back, and checks
of values that need one (a class index out of range) are the indexing's own, deferred
on a GPU like every index error (docs/DESIGN.md, "Deferred index errors").
"""
import re as _re

from .. import _core, random
from .._core import Array, DeviceMismatchError
from .. import exp, log, where
from .. import max as _max
from .. import tanh as _tanh
from .._fuse import fuse
from .._inspection import isdtype
from .._reduce import _core_no_grad

__all__ = [
    "linear", "relu", "sigmoid", "tanh", "flatten", "dropout", "softmax", "log_softmax",
    "mse_loss", "cross_entropy",
]

_REDUCTIONS = ("mean", "sum", "none")
_RELU = _core.autograd_ops["relu"]
_LOG_SOFTMAX = _core.autograd_ops["log_softmax"]
_NLL_LOSS = _core.autograd_ops["nll_loss"]


def _array(x, what, fn):
    if not isinstance(x, Array):
        raise TypeError(f"{fn}: {what} must be a gpuarr array, got {type(x).__name__} "
                        "(make one with gpuarr.asarray(..., device=...))")
    return x


def _same_device(x, other, what, fn, fix):
    if other.device != x.device:
        raise DeviceMismatchError(
            f"{fn}: {what} is on {other.device!r} but the input is on {x.device!r}: "
            f"{fix}")


def _same_dtype(x, weight, fn):
    """A layer computes in its parameters' dtype: promoting the input instead (int64
    with float32 gives float64) would give an answer in a dtype nobody asked for."""
    if isinstance(weight, Array) and x.dtype != weight.dtype:
        raise TypeError(
            f"{fn}: the input is {x.dtype} but the layer's weight is {weight.dtype}; "
            f"convert the input (x.to(gpuarr.{weight.dtype}), or x.float() for "
            f"float32) or the layer (net.to(gpuarr.{x.dtype}), net.half(), "
            f"net.double())")


def _reduce(losses, reduction, fn):
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses


def _check_reduction(reduction, fn):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")


def linear(input, weight, bias=None):
    """linear(input, weight, bias=None)

    ``input @ weight.T + bias``: ``weight`` has shape (out_features, in_features),
    ``bias`` (out_features,). The input must have the weight's dtype: an int64 or
    float16 input to a float32 layer is a TypeError that names both and the fix (as
    in PyTorch), never a silent promotion to another dtype."""
    x = _array(input, "input", "linear")
    _same_dtype(x, weight, "linear")
    if bias is not None and isinstance(bias, Array) and bias.dtype != weight.dtype:
        raise TypeError(f"linear: the bias is {bias.dtype} but the weight is "
                        f"{weight.dtype}; give them one dtype (net.to({weight.dtype}))")
    y = x @ weight.T
    if bias is not None:
        y = y + bias
    return y


def relu(input):
    """relu(input)

    ``max(input, 0)`` elementwise. Its gradient is the incoming one where the result
    is above 0 and 0 elsewhere, 0 included (PyTorch's and MXNet's rule), in two
    operations: one node of its own rather than ``maximum``'s, whose rule for ties
    halves the gradient and costs five."""
    x = _array(input, "input", "relu")
    with _core_no_grad():
        r = _core.maximum(x, 0)
    return _core._ag_record(_RELU, r, (x,), ())


def sigmoid(input):
    """sigmoid(input)

    ``1 / (1 + exp(-input))`` elementwise, computed from ``z = exp(-|input|)`` (never
    above 1) as ``1 / (1 + z)`` or ``z / (1 + z)``: no overflow for large ``|input|``
    and full relative precision for very negative inputs, in the value and in its
    gradient."""

    return _sigmoid(_array(input, "input", "sigmoid"))


# The activations' and losses' elementwise chains run through gpuarr.fuse: one pass
# over memory (one kernel on a GPU) where autograd does not record them (inference,
# no_grad, evaluation); while it records, the same operations unfused, one node each.
# Fused or not, the same bits (tests/core/test_fuse.py).
@fuse
def _sigmoid(x):
    positive = x >= 0
    # -|x| through where, not abs: abs's derivative at 0 is 0, which would make the
    # gradient at x = 0 vanish (it is 1/4)
    z = exp(where(positive, -x, x))
    r = 1 / (1 + z)
    return where(positive, r, z * r)


def _squared_error(x, t):
    d = x - t
    return d * d


# reduction -> the loss: a final full sum is made as the chain is on the CPU (no
# temporary of the batch's size)
_mse = {r: fuse(lambda x, t, r=r: _reduce(_squared_error(x, t), r, "mse_loss"))
        for r in _REDUCTIONS}


def tanh(input):
    """tanh(input)

    The hyperbolic tangent, elementwise."""

    return _tanh(_array(input, "input", "tanh"))


def flatten(input, start_dim=0, end_dim=-1):
    """flatten(input, start_dim=0, end_dim=-1)

    ``input`` with the axes start_dim..end_dim (inclusive) merged into one: a view
    when the memory allows. ``nn.Flatten()`` keeps the batch axis (start_dim=1)."""
    x = _array(input, "input", "flatten")
    nd = max(x.ndim, 1)
    s = start_dim + nd if start_dim < 0 else start_dim
    e = end_dim + nd if end_dim < 0 else end_dim
    if not (0 <= s < nd and 0 <= e < nd):
        raise IndexError(f"flatten: start_dim={start_dim}, end_dim={end_dim} are out of "
                         f"range for an array with {x.ndim} axes")
    if s > e:
        raise ValueError(f"flatten: start_dim ({start_dim}) comes after end_dim "
                         f"({end_dim})")
    shape = tuple(x.shape) or (1,)
    merged = 1
    for n in shape[s:e + 1]:
        merged *= n
    return x.reshape(shape[:s] + (merged,) + shape[e + 1:])


def dropout(input, p=0.5, training=True):
    """dropout(input, p=0.5, training=True)

    In training, zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)`` (so the expected value is unchanged); otherwise return ``input``.
    The random numbers are drawn on the input's device (``gpuarr.random``: the same
    seed gives the same mask on every device)."""
    x = _array(input, "input", "dropout")
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be between 0 and 1, got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0
    keep = random.uniform(size=x.shape, dtype=_float_dtype(x), device=x.device) >= p
    return x * keep * (1.0 / (1.0 - p))


def _float_dtype(x):

    if isdtype(x.dtype, "real floating"):
        return x.dtype
    return _core.float32


def _check_dim(x, dim, fn):
    nd = x.ndim
    if not -nd <= dim < nd:
        raise IndexError(f"{fn}: dim={dim} is out of range for an array with {nd} axes")
    return dim % nd


def log_softmax(input, dim):
    """log_softmax(input, dim)

    ``input - logsumexp(input, dim)``, computed stably: the maximum along ``dim`` is
    subtracted before ``exp`` (so nothing overflows) and added back after ``log``."""

    x = _array(input, "input", "log_softmax")
    dim = _check_dim(x, dim, "log_softmax")
    # One node (LogSoftmaxBackward: g - softmax * sum(g)), not the five of its
    # operations: the backward pass of a classifier's loss is then two nodes.
    with _core_no_grad():
        shifted = x - _max(x, axis=dim, keepdims=True)
        r = shifted - log(exp(shifted).sum(axis=dim, keepdims=True))
    return _core._ag_record(_LOG_SOFTMAX, r, (x,), (dim,))


def softmax(input, dim):
    """softmax(input, dim)

    ``exp(input) / sum(exp(input), dim)``, with the maximum along ``dim`` subtracted
    first so nothing overflows."""

    x = _array(input, "input", "softmax")
    dim = _check_dim(x, dim, "softmax")
    e = exp(x - _max(x.detach(), axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def mse_loss(input, target, reduction="mean"):
    """mse_loss(input, target, reduction='mean')

    ``(input - target) ** 2``, averaged ('mean'), summed ('sum') or per element
    ('none'). The shapes must be equal: a (n, 1) prediction against (n,) labels would
    broadcast to (n, n) and give a wrong loss, so it is an error here (reshape one)."""
    _check_reduction(reduction, "mse_loss")
    x = _array(input, "input", "mse_loss")
    t = _array(target, "target", "mse_loss")
    if tuple(x.shape) != tuple(t.shape):
        raise ValueError(
            f"mse_loss: input has shape {tuple(x.shape)} and target {tuple(t.shape)}; "
            "they must be equal (broadcasting them would compare every prediction with "
            "every label): reshape one, e.g. target.reshape(input.shape)")
    _same_device(x, t, "the target", "mse_loss",
                 "move each batch to the model's device once, as prepare_batch does")
    return _mse[reduction](x, t)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """cross_entropy(input, target, weight=None, ignore_index=-100, reduction='mean')

    The cross-entropy loss of logits ``input`` (shape (N, C), or (C,) for one
    example) against ``target``: class indices (an integer array of shape (N,) or
    ()), or class probabilities (a float array of the input's shape). Computed with a
    stable log-softmax on the input's device. ``weight`` (shape (C,)) weighs each
    class; targets equal to ``ignore_index`` count for nothing. 'mean' divides by the
    total weight of the counted targets, as PyTorch does ('sum' and 'none' as their
    names say). A class index outside 0..C-1 raises IndexError ("target class -1 is
    out of range for 5 classes"; on a GPU at the next wait, as every index error
    does)."""
    return _cross_entropy(input, target, weight, ignore_index, reduction, None)


def _class_error(e, C):
    """cross_entropy's IndexError for a bad class, from the gather's ("index -6 is out
    of bounds for axis 0 with size 5", a negative class moved below -C)."""
    m = _re.match(r"index (-?\d+) is out of bounds", str(e))
    if m is None:
        return e
    i = int(m.group(1))
    return IndexError(f"cross_entropy: target class {i + C if i < 0 else i} is out of "
                      f"range for {C} classes (class indices run from 0 to {C - 1}; "
                      f"ignore_index marks a target to skip)")


def _cross_entropy(input, target, weight, ignore_index, reduction, weight_fix):
    """cross_entropy, with the fix a misplaced ``weight`` error suggests (a loss module
    names its buffer and ``criterion.to(...)``)."""

    _check_reduction(reduction, "cross_entropy")
    x = _array(input, "input", "cross_entropy")
    t = _array(target, "target", "cross_entropy")
    if x.ndim not in (1, 2):
        raise ValueError(f"cross_entropy: input must have shape (N, C) or (C,), got "
                         f"{tuple(x.shape)} (flatten the other axes first)")
    if not isdtype(x.dtype, "real floating"):
        raise TypeError(f"cross_entropy: input must hold floating-point logits, got "
                        f"{x.dtype}")
    _same_device(x, t, "the target", "cross_entropy",
                 "move each batch (features and labels) to the model's device once, as "
                 "prepare_batch does")
    C = x.shape[-1]
    if weight is not None:
        _array(weight, "weight", "cross_entropy")
        if tuple(weight.shape) != (C,):
            raise ValueError(f"cross_entropy: weight must have shape ({C},), one per "
                             f"class, got {tuple(weight.shape)}")
        _same_device(x, weight, "weight", "cross_entropy",
                     weight_fix or f"move it with weight.to({x.device!r}) once")
    batched = x.ndim == 2
    logp = log_softmax(x if batched else x.reshape((1, C)), dim=1)

    if isdtype(t.dtype, "real floating"):  # class probabilities
        if tuple(t.shape) != tuple(x.shape):
            raise ValueError(f"cross_entropy: probability targets must have the input's "
                             f"shape {tuple(x.shape)}, got {tuple(t.shape)}")
        tp = t if batched else t.reshape((1, C))
        if weight is not None:
            tp = tp * weight
        losses = -(tp * logp).sum(axis=1)
        losses = losses if batched else losses.reshape(())
        return _reduce(losses, reduction, "cross_entropy")

    if not isdtype(t.dtype, "integral"):
        raise TypeError(f"cross_entropy: target must hold class indices (an integer "
                        f"array) or class probabilities (floats), got {t.dtype}")
    expected = (x.shape[0],) if batched else ()
    if tuple(t.shape) != expected:
        raise ValueError(f"cross_entropy: input of shape {tuple(x.shape)} needs class "
                         f"indices of shape {expected}, got {tuple(t.shape)}")
    t = t if batched else t.reshape((1,))
    counted = t != ignore_index
    # Ignored rows pick class 0 and are weighted 0. Every other index is checked by a
    # gather from arange(C): one out of 0..C-1 is its IndexError (deferred on a GPU);
    # a negative one is moved below -C first (the error names it minus C), as it
    # would otherwise count from the end. The class's log-probability is then picked
    # with a one-hot mask rather than a gather: the mask's gradient is one multiply,
    # a gather's a scatter-add (a sort and a dozen operations per step).
    # The class weights are constants (PyTorch has no gradient for them either), and
    # the loss is one node (NllLossBackward: the negated weighted one-hot times g).
    # A GPU reports a bad class after the call returned, at some later read: the
    # gathers' failures are named in the loss's terms (_index_error_terms); the CPU
    # (and GPUARR_SYNC_CHECKS=1) raises at the gather, and is renamed here.
    with _core_no_grad():
        classes = _core._arange(True, t.dtype, x.device, 0.0, float(C), 1.0, 0, C, 1)
        _core._index_error_terms("cross_entropy", "target class", "classes")
        try:
            safe = classes[where(counted, where(t < 0, t - C, t), 0)]
            # the weights are gathered by t % C, in range whatever t holds: a gather by
            # `safe` would read the garbage a failed check leaves and fail a second
            # time (the loss depends on `safe`'s failure through the one-hot anyway)
            w = counted.astype(x.dtype) if weight is None else \
                where(counted, weight[where(counted, t % C, 0)], 0)
        except IndexError as e:
            raise _class_error(e, C) from None
        finally:
            _core._index_error_terms()
        neg_weights = (safe[:, None] == classes).astype(x.dtype) * -w[:, None]
        losses = (logp * neg_weights).sum(axis=1)
        total = w.sum()
        r = losses.sum() / total if reduction == "mean" else \
            losses.sum() if reduction == "sum" else losses
    r = _core._ag_record(_NLL_LOSS, r, (logp,), (neg_weights, reduction, total))
    return r if batched or reduction != "none" else r.reshape(())
