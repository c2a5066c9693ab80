"""gpuarr.autograd: reverse-mode automatic differentiation on every device.

PyTorch's spelling and MXNet's both work, under one recording rule: an operation is
recorded when grad mode is on (the default, as in PyTorch) and one of its array
operands requires grad.

    >>> w = gpuarr.ones(3, device=gpuarr.try_gpu(), requires_grad=True)   # PyTorch
    >>> loss = (w * w).sum()
    >>> loss.backward()          # w.grad == 2 * w, computed on w's device
    >>> x = gpuarr.ones(3); x.attach_grad()                                # MXNet
    >>> with gpuarr.autograd.record():
    ...     y = (x * x).sum()
    >>> y.backward()

``gpuarr.no_grad()`` / ``autograd.pause()`` turn grad mode off (context managers and
decorators), ``gpuarr.enable_grad()`` / ``autograd.record()`` on; the mode is per
thread, as in PyTorch. Gradients are computed by gpuarr operations on the arrays'
devices and land on each leaf's device; a backward pass makes no host transfer and
no host wait. Only real floating arrays (float16, float32, float64) are
differentiable.

This module is the Python half of the layer: the table of backward formulas (one
entry per recorded primitive) and the engine that runs them. Recording is in C
(csrc/binding/py_autograd.c): it happens on every forward operation.
"""
import functools as _functools
import math as _math
import threading as _threading

import numpy as _np

from . import _core
from ._core import Array, is_grad_enabled
from ._creation import arange as _arange, asarray as _asarray
from ._sorting import argsort as _argsort

__all__ = ["backward", "grad", "record", "pause", "is_recording", "is_training",
           "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "Node"]

Node = _core.Node


# --- grad mode -----------------------------------------------------------------------

class _GradMode:
    """A context manager and decorator that sets this thread's grad mode for a block
    and puts back the previous mode when it ends."""

    _flag = True

    def __new__(cls, *args, **kwargs):
        # @no_grad (without parentheses) decorates the function directly
        if cls is not set_grad_enabled and len(args) == 1 and not kwargs \
                and callable(args[0]):
            return cls()(args[0])
        return super().__new__(cls)

    def __enter__(self):
        """__enter__()

        Set the grad mode for the block."""
        self._prev = _core._set_grad_enabled(self._flag)
        return None

    def __exit__(self, *exc):
        """__exit__(*exc)

        Put back the grad mode that was current at __enter__."""
        _core._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        """__call__(fn)

        As a decorator: fn runs in this grad mode."""
        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)() if type(self) is not set_grad_enabled \
                    else set_grad_enabled(self._flag, _now=False):
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """no_grad()

    Grad mode off for a block or a function (``with gpuarr.no_grad():`` or
    ``@gpuarr.no_grad()``): nothing is recorded, results do not require grad, and
    parameters may be updated in place. Per thread, as in PyTorch."""

    _flag = False


class enable_grad(_GradMode):
    """enable_grad()

    Grad mode on for a block or a function, also inside ``no_grad()``."""

    _flag = True


class set_grad_enabled(_GradMode):
    """set_grad_enabled(mode)

    Set this thread's grad mode now (``gpuarr.set_grad_enabled(False)``); used in a
    ``with`` statement, the previous mode comes back at its end, as in PyTorch."""

    def __init__(self, mode, *, _now=True):
        self._flag = bool(mode)
        if _now:
            self._prev = _core._set_grad_enabled(self._flag)

    def __enter__(self):
        """__enter__(self)

        The mode was set when the object was made; the block ends by restoring the
        previous one."""
        if not hasattr(self, "_prev"):
            self._prev = _core._set_grad_enabled(self._flag)
        return None

    def __call__(self, fn):
        """__call__(self, fn)

        As a decorator (``@set_grad_enabled(False)``): the mode set when the object
        was made is undone, and fn runs in that mode, as in PyTorch."""
        if hasattr(self, "_prev"):
            _core._set_grad_enabled(self._prev)
            del self._prev
        return super().__call__(fn)


class record:
    """record(train_mode=True)

    MXNet's recording scope: grad mode on for the block (a no-op when it is on
    already, as it is by default). Arrays given ``attach_grad()`` may not be updated
    in place inside it (outside, they may: ``param[:] = param - lr * param.grad``).
    ``train_mode`` is accepted for MXNet's signature (see is_training())."""

    def __init__(self, train_mode=True):
        self._train = bool(train_mode)

    def __enter__(self):
        """__enter__(self)

        Grad mode on (and MXNet's recording and train mode) for the block."""
        self._prev = _core._set_grad_enabled(True)
        _core._record_depth(1)
        _modes().append(self._train)
        return None

    def __exit__(self, *exc):
        """__exit__(self, *exc)

        Back to the grad mode that was current at __enter__."""
        _modes().pop()
        _core._record_depth(-1)
        _core._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        """__call__(self, fn)

        As a decorator: fn runs inside record()."""
        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record(self._train):
                return fn(*args, **kwargs)
        return wrapper


_train_modes = _threading.local()


def _modes():
    """This thread's stack of record() train modes (MXNet's is_training)."""
    try:
        return _train_modes.stack
    except AttributeError:
        _train_modes.stack = []
        return _train_modes.stack


class pause(_GradMode):
    """pause(train_mode=False)

    MXNet's name for no_grad(): nothing is recorded in the block."""

    _flag = False

    def __init__(self, train_mode=False):
        pass


def is_recording():
    """is_recording()

    Are operations on arrays that require grad recorded now? The same as
    is_grad_enabled(): by the one recording rule this is True outside record() too,
    unless no_grad()/pause() turned it off."""
    return is_grad_enabled()


def is_training():
    """is_training()

    MXNet's train mode: True inside ``record()`` (unless ``record(train_mode=False)``),
    False elsewhere."""
    modes = _modes()
    return bool(modes) and modes[-1]


# --- helpers the formulas share --------------------------------------------------------

_SUM = _core.reduce_ops["sum"]
_CUMSUM, _CUMPROD = _core.scan_ops["cumsum"], _core.scan_ops["cumprod"]
_LN2, _LN10 = _math.log(2.0), _math.log(10.0)
_where, _sign, _abs, _exp, _log = _core.where, _core.sign, _core.abs, _core.exp, _core.log
_sqrt, _cos, _sin = _core.sqrt, _core.cos, _core.sin
_TWO_OVER_SQRTPI = 2.0 / _math.sqrt(_math.pi)
_SQRT2PI = _math.sqrt(2.0 * _math.pi)


def _axes(mask, ndim):
    return tuple(i for i in range(ndim) if mask >> i & 1)


def _sum(x, axes, keepdims=False):
    return _core._reduce(x, _SUM, axes, keepdims)


def _sum_to(g, shape):
    """g summed over the axes that broadcasting added or stretched, to `shape`."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = _sum(g, axes, True)
    return _core._reshape(g, shape, None) if g.shape != shape else g


def _unreduce(g, x, mask, keepdims):
    """The gradient of a reduction over `mask`, shaped for broadcasting against x."""
    if keepdims or x.ndim == 0:
        return g
    shape = tuple(1 if mask >> i & 1 else n for i, n in enumerate(x.shape))
    return _core._reshape(g, shape, None)


def _count(x, mask):
    n = 1
    for i in _axes(mask, x.ndim):
        n *= x.shape[i]
    return n


def _zeros_like(x):
    return _core.zeros(x.shape, dtype=x.dtype, device=x.device)


def _arange_like(x):
    """x's flat positions, shaped as x, on its device (int64)."""
    return _core._reshape(_arange(x.size, dtype=_core.int64, device=x.device), x.shape,
                          None)


def _index_add(size, pos, vals):
    """A flat array of `size` zeros with vals[k] added at pos[k] for every k, repeated
    positions summed: the gradient of a gather. Made of device operations only (no
    host wait, deterministic): sort the positions, sum each run of equal ones by
    differences of a float64 running sum, and write each run's total to its position
    (the repeated writes of one position all write that total)."""
    out = _core.zeros(size, dtype=vals.dtype, device=vals.device)
    k = pos.size
    if k == 0:
        return out
    order = _argsort(pos, stable=True)
    ps = _core._take(pos, order)
    cs = _core._scan(_core._take(vals, order), _CUMSUM, 0, _core.float64, False)
    last = _core.ones(k, dtype=_core.bool, device=pos.device)
    last[:-1] = _core.not_equal(ps[1:], ps[:-1])  # the last element of each run
    e = _core.astype(last, _core.int64)
    run = _core.subtract(_core._scan(e, _CUMSUM, 0, None, False), e)
    ends = _core.zeros(k + 1, dtype=_core.int64, device=pos.device)
    # ends[run] = position of the run's last element (all other elements: slot k)
    ends[_where(last, run, k)] = _core._reshape(_arange_like(pos), (k,), None)
    total = _core.subtract(_core._take(cs, _core._take(ends, run)),
                           _where(_core.greater(run, 0),
                                  _core._take(cs, _core._take(
                                      ends, _core.maximum(_core.subtract(run, 1), 0))),
                                  0.0))
    out[ps] = _core.astype(total, vals.dtype)
    return out


def _is_int_index(k):
    if isinstance(k, Array):
        return k.dtype != _core.bool
    if isinstance(k, _np.ndarray):
        return k.dtype != _np.bool_
    if isinstance(k, (list, tuple)):
        return True
    return False


def _bool_mask(key):
    """The boolean mask when the key is one boolean gpuarr array (x[mask]), else None."""
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    if isinstance(key, Array) and key.dtype == _core.bool and key.ndim > 0:
        return key
    return None


def _getitem_grad(g, x, key):
    mask = _bool_mask(key)
    if mask is not None:
        # x[mask] holds the selected elements in order: element j of the flat mask
        # takes g[cumsum(mask)[j] - 1]. Device operations only (no count read back).
        if g.size == 0:
            return _core.zeros(x.shape, dtype=g.dtype, device=g.device)
        mf = _core._reshape(mask, (-1,), None)
        g2 = _core._reshape(g, (g.shape[0], -1), None)
        idx = _core.subtract(_core._scan(_core.astype(mf, _core.int64), _CUMSUM, 0,
                                         None, False), 1)
        idx = _core.clip(idx, 0, g2.shape[0] - 1)
        picked = _core._take(g2, idx, 0)
        out = _where(_core._reshape(mf, (-1, 1), None), picked, 0)
        return _core._reshape(_core.astype(out, g.dtype), x.shape, None)
    keys = key if isinstance(key, tuple) else (key,)
    masked = _mask_as_indices(g, x, keys)
    if masked is not None:  # one boolean mask among slices: its True positions
        pos = _arange_like(x)[masked]
        out = _core.zeros(x.size, dtype=g.dtype, device=g.device)
        out[_core._reshape(pos, (-1,), None)] = _core._reshape(g, (-1,), None)
        return _core._reshape(out, x.shape, None)
    if any(_is_int_index(k) for k in keys):
        pos = _arange_like(x)[key]
        flat = _index_add(x.size, _core._reshape(pos, (-1,), None),
                          _core._reshape(g, (-1,), None))
        return _core._reshape(flat, x.shape, None)
    out = _core.zeros(x.shape, dtype=g.dtype, device=g.device)
    out[key] = g
    return out


def _mask_as_indices(g, x, keys):
    """A key of one boolean gpuarr mask among slices, None and Ellipsis, with the mask
    replaced by the integer arrays of its True positions (NumPy's rule: a mask is
    nonzero(mask)), made on the device without reading the count back: the count is
    the length of g's axis where the mask's elements went. None for other keys."""
    where = [i for i, k in enumerate(keys) if isinstance(k, Array) and k.dtype == _core.bool]
    if len(where) != 1 or not all(k is None or k is Ellipsis or isinstance(k, slice)
                                  for i, k in enumerate(keys) if i != where[0]):
        return None
    m = keys[where[0]]
    consumed = sum(1 for k in keys if k is not None and k is not Ellipsis) - 1 + m.ndim
    axis = 0
    for k in keys[:where[0]]:
        axis += x.ndim - consumed if k is Ellipsis else 1
    count = g.shape[axis]
    mf = _core._reshape(m, (-1,), None)
    rank = _core.subtract(_core._scan(_core.astype(mf, _core.int64), _CUMSUM, 0, None,
                                      False), 1)
    flat = _core.zeros(count + 1, dtype=_core.int64, device=x.device)
    # flat[rank of each True element] = its position; the False ones go to slot count
    flat[_where(mf, rank, count)] = _core._reshape(_arange_like(mf), (-1,), None)
    flat = flat[:count]
    ids = []
    for n in reversed(m.shape):  # unravel the flat positions over the mask's axes
        ids.append(_core.remainder(flat, n))
        flat = _core.floor_divide(flat, n)
    return keys[:where[0]] + tuple(reversed(ids)) + keys[where[0] + 1:]


def _take_grad(g, x, indices, axis=None, host=False):
    pos = _core._take(_arange_like(x), indices, axis, host)
    flat = _index_add(x.size, _core._reshape(pos, (-1,), None),
                      _core._reshape(g, (-1,), None))
    return _core._reshape(flat, x.shape, None)


def _matmul_grad(g, a, b, which):
    """d(a @ b) for operand `which`, with NumPy's rules for 1-d operands and batch
    broadcasting (the batch axes are summed back to the operand's shape)."""
    if a.ndim == 2 and b.ndim == 2:  # a layer's product: no reshapes, no batch axes
        if which == 0:
            return _mT(_core.matmul(b, _mT(g))) if _transposed_matrix(a) else \
                _core.matmul(g, _mT(b))
        return _mT(_core.matmul(_mT(g), a)) if _transposed_matrix(b) else \
            _core.matmul(_mT(a), g)
    a2 = _core._reshape(a, (1,) + a.shape, None) if a.ndim == 1 else a
    b2 = _core._reshape(b, b.shape + (1,), None) if b.ndim == 1 else b
    gshape = g.shape
    if a.ndim == 1:
        gshape = gshape[:-1] + (1,) + gshape[-1:] if b.ndim > 1 else (1,)
    if b.ndim == 1:
        gshape = gshape + (1,)
    if a.ndim == 1 and b.ndim == 1:
        gshape = (1, 1)
    g2 = _core._reshape(g, gshape, None)
    # An operand that is a transposed matrix (weight.T in x @ weight.T) gets its
    # gradient in its own layout, the transpose of the product taken the other way
    # round (BLAS reads either layout at the same speed), so that its leaf's .grad is
    # C-ordered like the leaf: an F-ordered one makes the optimizer's update walk
    # memory across the grain (3-4x slower for a 256 x 784 weight), as PyTorch avoids
    if which == 0:
        if _transposed_matrix(a) and b2.ndim == 2:
            return _mT(_core.matmul(b2, _mT(g2)))
        r = _core.matmul(g2, _mT(b2))
        return _core._reshape(_sum_to(r, a2.shape), a.shape, None)
    if _transposed_matrix(b) and a2.ndim == 2:
        return _mT(_core.matmul(_mT(g2), a2))
    r = _core.matmul(_mT(a2), g2)
    return _core._reshape(_sum_to(r, b2.shape), b.shape, None)


def _transposed_matrix(x):
    """Is x a 2-d array laid out column by column (the .T of a C-ordered matrix)?"""
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        return False
    s0, s1 = x.strides
    return s0 == x.itemsize and s1 == x.itemsize * x.shape[0]


def _mT(x):
    n = x.ndim
    return _core._permute_dims(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _tensordot_grad(g, a, b, la, lb, which):
    la = [i % a.ndim for i in la]
    lb = [i % b.ndim for i in lb]
    fa = [i for i in range(a.ndim) if i not in la]
    fb = [i for i in range(b.ndim) if i not in lb]
    nfa = len(fa)
    # tensordot keeps the axes it does not contract in their order: g is (fa..., fb...)
    if which == 0:
        # g . b over fb -> (fa..., b's contracted axes ascending), as a's axes:
        r = _core._tensordot(g, b, list(range(nfa, g.ndim)), fb)
        return _core._permute_dims(r, _inverse(fa + [la[lb.index(j)] for j in sorted(lb)]))
    r = _core._tensordot(a, g, fa, list(range(nfa)))  # (a's contracted ascending, fb...)
    return _core._permute_dims(r, _inverse([lb[la.index(i)] for i in sorted(la)] + fb))


def _vecdot_grad(g, other, axis):
    ax = axis if axis < 0 else axis - (g.ndim + 1)
    return _core.multiply(_core._expand_dims(g, (ax % (g.ndim + 1),)), _core.conj(other))


def _prod_grad(g, x, mask, keepdims):
    """d prod / dx_i = the product of the other elements: exclusive running products
    from both ends (correct with zeros, unlike prod / x)."""
    red = _axes(mask, x.ndim)
    kept = tuple(i for i in range(x.ndim) if i not in red)
    n = _count(x, mask)
    if n == 0 or x.size == 0:
        return _zeros_like(x)
    perm = kept + red
    xp = _core._permute_dims(x, perm)
    kshape = tuple(x.shape[i] for i in kept)
    xr = _core._reshape(xp, kshape + (n,), None)
    ax = len(kshape)
    left = _core._scan(xr, _CUMPROD, ax, None, True)
    right = _core._flip(_core._scan(_core._flip(xr, (ax,)), _CUMPROD, ax, None, True),
                        (ax,))
    cut = (slice(None),) * ax
    others = _core.multiply(left[cut + (slice(0, n),)], right[cut + (slice(1, n + 1),)])
    gk = _core._reshape(_unreduce(g, x, mask, keepdims), kshape + (1,), None)
    d = _core.multiply(others, gk)
    d = _core._reshape(d, kshape + tuple(x.shape[i] for i in red), None)
    return _core._permute_dims(d, _inverse(perm))


def _extreme_grad(g, x, r, mask, keepdims):
    """max/min: the gradient goes to the elements equal to the result, shared evenly
    among ties (PyTorch's amax/amin rule)."""
    hit = _core.astype(_core.equal(x, _unreduce(r, x, mask, keepdims)), g.dtype)
    share = _core.divide(hit, _sum(hit, _axes(mask, x.ndim), True))
    return _core.multiply(share, _unreduce(g, x, mask, keepdims))


def _var_grad(g, x, mask, keepdims, corr):
    mean = _core._stat(x, "mean", _axes(mask, x.ndim), True, 0.0)
    dof = _count(x, mask) - corr
    scale = 2.0 / dof if dof > 0 else float("nan")
    return _core.multiply(_unreduce(g, x, mask, keepdims),
                          _core.multiply(_core.subtract(x, mean), scale))


def _std_grad(g, x, r, mask, keepdims, corr):
    gv = _core.divide(_unreduce(g, x, mask, keepdims),
                      _core.multiply(_unreduce(r, x, mask, keepdims), 2.0))
    gv = _where(_core.equal(_unreduce(r, x, mask, keepdims), 0), 0.0, gv)
    return _var_grad(gv, x, mask, True, corr)  # gv has x's dimensions already


def _norm_grad(g, x, r, mask, keepdims, ord):
    gu, ru = _unreduce(g, x, mask, keepdims), _unreduce(r, x, mask, keepdims)
    if ord == 0:
        return _zeros_like(x)
    if ord == 1:
        return _core.multiply(gu, _sign(x))
    if _math.isinf(ord):
        hit = _core.astype(_core.equal(_abs(x), ru), x.dtype)
        count = _sum(hit, _axes(mask, x.ndim), True)
        return _core.multiply(_core.multiply(gu, _sign(x)), _core.divide(hit, count))
    if ord == 2:
        d = _core.divide(x, ru)
    else:
        d = _core.divide(_core.multiply(_sign(x), _core.pow(_abs(x), ord - 1)),
                         _core.pow(ru, ord - 1))
    return _core.multiply(gu, _where(_core.equal(ru, 0), 0.0, d))


def _cumsum_grad(g, axis, include_initial):
    if include_initial:
        g = g[(slice(None),) * axis + (slice(1, None),)]
    return _core._flip(_core._scan(_core._flip(g, (axis,)), _CUMSUM, axis, None, False),
                       (axis,))


def _concat_grad(i, g, xs, axis):
    ax = axis % g.ndim
    off = sum(x.shape[ax] for x in xs[:i])
    return g[(slice(None),) * ax + (slice(off, off + xs[i].shape[ax]),)]


# An operand may be a Python scalar (x ** 3, 2.0 ** x): the formulas combine operands
# with Python's operators, which compute scalar with scalar on the host and anything
# with an array on the array's device.

def _pow_base(g, a, b, r):
    if not isinstance(b, Array):
        return g * 0.0 if b == 0 else g * (b * a ** (b - 1))
    return g * _where(b == 0, 0.0, b * a ** (b - 1))


def _pow_exponent(g, a, b, r):
    if not isinstance(a, Array):
        return g * r * _math.log(a) if a > 0 else g * _where(b >= 0, 0.0, r * _math.nan)
    return g * _where((a == 0) & (b >= 0), 0.0, r * _log(a))


def _nll_grad(g, neg_weights, reduction, total):
    """d nll_loss / d logp: the negated one-hot class weights (N, C) times g, per row
    for reduction 'none', over the total weight for 'mean'."""
    if reduction == "none":
        g = _core._reshape(g, g.shape + (1,), None)
    elif reduction == "mean":
        g = _core.divide(g, total)
    return _core.multiply(neg_weights, g)


def _no_formula(name, operand):
    """The gradient a formula table entry does not have (PyTorch has none either)."""
    raise NotImplementedError(
        f"the derivative of {name} with respect to {operand} is not implemented (as in "
        f"PyTorch): detach {operand} (or make it a constant) to differentiate the rest")


def _half_where(g, lose, tie):
    """g, halved where tie, zero where lose (maximum/minimum's rule for ties)."""
    return _where(lose, 0.0, _where(tie, _core.multiply(g, 0.5), g))


# --- the table of backward formulas ------------------------------------------------------
#
# name: (PyTorch-style node name, what the formulas read, formulas). Each formula
# gives the gradient of one operand from g (the gradient of the result) and
# (operands..., r = the result, c = the other arguments), as PyTorch's
# derivatives.yaml does; the engine calls only those of operands that require grad,
# then sums broadcast axes away and casts to the operand's dtype. "reads" names the
# operands (digits) and the result ("r") the formulas read, whose in-place
# modification before backward is an error. A primitive missing here is not
# differentiable: its result does not require grad.

_F = {
    # elementwise
    "negative": ("NegBackward", "", (lambda g, a, r, c: _core.negative(g),)),
    "positive": ("PositiveBackward", "", (lambda g, a, r, c: g,)),
    "copy": ("CloneBackward", "", (lambda g, a, r, c: g,)),
    "conj": ("ConjBackward", "", (lambda g, a, r, c: g,)),
    "real": ("RealBackward", "", (lambda g, a, r, c: g,)),
    "abs": ("AbsBackward", "0", (lambda g, a, r, c: _core.multiply(g, _sign(a)),)),
    "sqrt": ("SqrtBackward", "r", (lambda g, a, r, c: _core.divide(g, _core.multiply(r, 2)),)),
    "square": ("PowBackward", "0", (lambda g, a, r, c: _core.multiply(g, _core.multiply(a, 2)),)),
    "reciprocal": ("ReciprocalBackward", "r",
                   (lambda g, a, r, c: _core.negative(_core.multiply(g, _core.multiply(r, r))),)),
    "exp": ("ExpBackward", "r", (lambda g, a, r, c: _core.multiply(g, r),)),
    "expm1": ("Expm1Backward", "r", (lambda g, a, r, c: _core.multiply(g, _core.add(r, 1)),)),
    "exp2": ("Exp2Backward", "r", (lambda g, a, r, c: _core.multiply(g, _core.multiply(r, _LN2)),)),
    "log": ("LogBackward", "0", (lambda g, a, r, c: _core.divide(g, a),)),
    "log1p": ("Log1PBackward", "0", (lambda g, a, r, c: _core.divide(g, _core.add(a, 1)),)),
    "log2": ("Log2Backward", "0", (lambda g, a, r, c: _core.divide(g, _core.multiply(a, _LN2)),)),
    "log10": ("Log10Backward", "0", (lambda g, a, r, c: _core.divide(g, _core.multiply(a, _LN10)),)),
    "sin": ("SinBackward", "0", (lambda g, a, r, c: _core.multiply(g, _cos(a)),)),
    "cos": ("CosBackward", "0", (lambda g, a, r, c: _core.negative(_core.multiply(g, _sin(a))),)),
    "tan": ("TanBackward", "r",
            (lambda g, a, r, c: _core.multiply(g, _core.add(_core.multiply(r, r), 1)),)),
    "asin": ("AsinBackward", "0", (lambda g, a, r, c: _core.divide(
        g, _sqrt(_core.subtract(1, _core.multiply(a, a)))),)),
    "acos": ("AcosBackward", "0", (lambda g, a, r, c: _core.negative(_core.divide(
        g, _sqrt(_core.subtract(1, _core.multiply(a, a))))),)),
    "atan": ("AtanBackward", "0",
             (lambda g, a, r, c: _core.divide(g, _core.add(_core.multiply(a, a), 1)),)),
    "sinh": ("SinhBackward", "0", (lambda g, a, r, c: _core.multiply(g, _core.cosh(a)),)),
    "cosh": ("CoshBackward", "0", (lambda g, a, r, c: _core.multiply(g, _core.sinh(a)),)),
    "tanh": ("TanhBackward", "r",
             (lambda g, a, r, c: _core.multiply(g, _core.subtract(1, _core.multiply(r, r))),)),
    "asinh": ("AsinhBackward", "0", (lambda g, a, r, c: _core.divide(
        g, _sqrt(_core.add(_core.multiply(a, a), 1))),)),
    "acosh": ("AcoshBackward", "0", (lambda g, a, r, c: _core.divide(
        g, _sqrt(_core.multiply(_core.subtract(a, 1), _core.add(a, 1)))),)),
    "atanh": ("AtanhBackward", "0", (lambda g, a, r, c: _core.divide(
        g, _core.subtract(1, _core.multiply(a, a))),)),
    "add": ("AddBackward", "", (lambda g, a, b, r, c: g, lambda g, a, b, r, c: g)),
    "subtract": ("SubBackward", "", (lambda g, a, b, r, c: g,
                                     lambda g, a, b, r, c: _core.negative(g))),
    "multiply": ("MulBackward", "01", (lambda g, a, b, r, c: _core.multiply(g, b),
                                       lambda g, a, b, r, c: _core.multiply(g, a))),
    "divide": ("DivBackward", "1r", (
        lambda g, a, b, r, c: _core.divide(g, b),
        lambda g, a, b, r, c: _core.negative(_core.divide(_core.multiply(g, r), b)))),
    "pow": ("PowBackward", "01r", (lambda g, a, b, r, c: _pow_base(g, a, b, r),
                                   lambda g, a, b, r, c: _pow_exponent(g, a, b, r))),
    "remainder": ("RemainderBackward", "01", (
        lambda g, a, b, r, c: g,
        lambda g, a, b, r, c: _core.negative(_core.multiply(g, _core.floor_divide(a, b))))),
    "atan2": ("Atan2Backward", "01", (lambda g, a, b, r, c: g * b / (a * a + b * b),
                                      lambda g, a, b, r, c: -g * a / (a * a + b * b))),
    "hypot": ("HypotBackward", "01r", (
        lambda g, a, b, r, c: _core.multiply(g, _where(_core.equal(r, 0), 0.0,
                                                       _core.divide(a, r))),
        lambda g, a, b, r, c: _core.multiply(g, _where(_core.equal(r, 0), 0.0,
                                                       _core.divide(b, r))))),
    "copysign": ("CopysignBackward", "0r", (
        lambda g, a, b, r, c: _core.multiply(g, _core.multiply(_sign(a), _sign(r))),
        lambda g, a, b, r, c: _core.multiply(g, 0.0))),
    "logaddexp": ("LogaddexpBackward", "01r", (
        lambda g, a, b, r, c: _core.multiply(g, _exp(_core.subtract(a, r))),
        lambda g, a, b, r, c: _core.multiply(g, _exp(_core.subtract(b, r))))),
    # gpuarr.special: the formulas of PyTorch's torch.special (betainc and the inverses
    # have none in PyTorch: not differentiable here either)
    "erf": ("ErfBackward", "0", (lambda g, a, r, c: _core.multiply(g, _core.multiply(
        _exp(_core.negative(_core.multiply(a, a))), _TWO_OVER_SQRTPI)),)),
    "erfc": ("ErfcBackward", "0", (lambda g, a, r, c: _core.multiply(g, _core.multiply(
        _exp(_core.negative(_core.multiply(a, a))), -_TWO_OVER_SQRTPI)),)),
    "erfinv": ("ErfinvBackward", "r", (lambda g, a, r, c: _core.multiply(g, _core.multiply(
        _exp(_core.multiply(r, r)), 0.5 * _math.sqrt(_math.pi))),)),
    "erfcx": ("SpecialErfcxBackward", "0r", (lambda g, a, r, c: _core.multiply(
        g, _core.subtract(_core.multiply(_core.multiply(a, r), 2.0), _TWO_OVER_SQRTPI)),)),
    "ndtr": ("SpecialNdtrBackward", "0", (lambda g, a, r, c: _core.multiply(g, _core.divide(
        _exp(_core.multiply(_core.multiply(a, a), -0.5)), _SQRT2PI)),)),
    "ndtri": ("SpecialNdtriBackward", "r", (lambda g, a, r, c: _core.multiply(g, _core.multiply(
        _exp(_core.multiply(_core.multiply(r, r), 0.5)), _SQRT2PI)),)),
    "log_ndtr": ("SpecialLogNdtrBackward", "0r", (lambda g, a, r, c: _core.multiply(
        g, _core.divide(_exp(_core.subtract(_core.multiply(_core.multiply(a, a), -0.5), r)),
                        _SQRT2PI)),)),
    "expit": ("SigmoidBackward", "r", (lambda g, a, r, c: _core.multiply(
        g, _core.multiply(r, _core.subtract(1, r))),)),
    "logit": ("LogitBackward", "0", (lambda g, a, r, c: _core.divide(
        g, _core.multiply(a, _core.subtract(1, a))),)),
    "xlogy": ("XlogyBackward", "01", (
        lambda g, a, b, r, c: _core.multiply(g, _core.xlogy(_core.not_equal(a, 0), b)),
        lambda g, a, b, r, c: _core.multiply(g, _core.divide(a, b)))),
    "xlog1py": ("SpecialXlog1pyBackward", "01", (
        lambda g, a, b, r, c: _core.multiply(g, _core.xlog1py(_core.not_equal(a, 0), b)),
        lambda g, a, b, r, c: _core.multiply(g, _core.divide(a, _core.add(b, 1))))),
    "entr": ("SpecialEntrBackward", "0", (lambda g, a, r, c: _core.multiply(
        g, _core.negative(_core.add(_log(a), 1))),)),
    "gammaln": ("LgammaBackward", "0", (lambda g, a, r, c: _core.multiply(
        g, _core.digamma(a)),)),
    "loggamma": ("LgammaBackward", "0", (lambda g, a, r, c: _core.multiply(
        g, _core.digamma(a)),)),
    # trigamma(x) = polygamma(1, x) = zeta(2, x)
    "digamma": ("DigammaBackward", "0", (lambda g, a, r, c: _core.multiply(
        g, _core.zeta(2.0, a)),)),
    # d/dq zeta(x, q) = -x zeta(x + 1, q); PyTorch has none in x
    "zeta": ("SpecialZetaBackward", "01", (
        lambda g, x, q, r, c: _no_formula("zeta", "x"),
        lambda g, x, q, r, c: _core.multiply(g, _core.negative(_core.multiply(
            x, _core.zeta(_core.add(x, 1.0), q)))))),
    "i0": ("I0Backward", "0", (lambda g, a, r, c: _core.multiply(g, _core.i1(a)),)),
    "i0e": ("SpecialI0EBackward", "0r", (lambda g, a, r, c: _core.multiply(
        g, _core.subtract(_core.i1e(a), _core.multiply(_sign(a), r))),)),
    "i1": ("SpecialI1Backward", "0r", (lambda g, a, r, c: _core.multiply(g, _where(
        _core.equal(a, 0), 0.5, _core.subtract(_core.i0(a), _core.divide(r, a)))),)),
    "i1e": ("SpecialI1EBackward", "0r", (lambda g, a, r, c: _core.multiply(g, _where(
        _core.equal(a, 0), 0.5, _core.subtract(_core.i0e(a), _core.multiply(
            r, _core.add(_sign(a), _core.reciprocal(a)))))),)),
    "sinc": ("SincBackward", "0r", (lambda g, a, r, c: _core.multiply(g, _where(
        _core.equal(a, 0), 0.0, _core.divide(_core.subtract(
            _cos(_core.multiply(a, _math.pi)), r), a))),)),
    "gammainc": ("IgammaBackward", "01", (lambda g, a, x, r, c: _no_formula("gammainc", "a"),
                                          lambda g, a, x, r, c: _core.multiply(
        g, _exp(_core.subtract(_core.subtract(_core.xlogy(_core.subtract(a, 1), x), x),
                               _core.gammaln(a)))))),
    "gammaincc": ("IgammacBackward", "01", (lambda g, a, x, r, c: _no_formula("gammaincc", "a"),
                                            lambda g, a, x, r, c: _core.negative(
        _core.multiply(g, _exp(_core.subtract(_core.subtract(
            _core.xlogy(_core.subtract(a, 1), x), x), _core.gammaln(a))))))),
    # Bessel J, Y, K of orders 0 and 1: PyTorch has these functions (bessel_j0, ...,
    # scaled_modified_bessel_k1) but marks them non-differentiable; their derivatives
    # are the textbook recurrences (A&S 9.1.28, 9.6.27), so gpuarr has them:
    # J0' = -J1, J1' = J0 - J1/x (1/2 at 0), Y likewise, K0' = -K1,
    # K1' = -K0 - K1/x, and the scaled forms add the factor's derivative
    "j0": ("SpecialBesselJ0Backward", "0", (lambda g, a, r, c: _core.negative(
        _core.multiply(g, _core.j1(a))),)),
    "j1": ("SpecialBesselJ1Backward", "0r", (lambda g, a, r, c: _core.multiply(g, _where(
        _core.equal(a, 0), 0.5, _core.subtract(_core.j0(a), _core.divide(r, a)))),)),
    "y0": ("SpecialBesselY0Backward", "0", (lambda g, a, r, c: _core.negative(
        _core.multiply(g, _core.y1(a))),)),
    "y1": ("SpecialBesselY1Backward", "0r", (lambda g, a, r, c: _core.multiply(
        g, _core.subtract(_core.y0(a), _core.divide(r, a))),)),
    "k0": ("SpecialModifiedBesselK0Backward", "0", (lambda g, a, r, c: _core.negative(
        _core.multiply(g, _core.k1(a))),)),
    "k1": ("SpecialModifiedBesselK1Backward", "0r", (lambda g, a, r, c: _core.negative(
        _core.multiply(g, _core.add(_core.k0(a), _core.divide(r, a)))),)),
    "k0e": ("SpecialScaledModifiedBesselK0Backward", "0r", (lambda g, a, r, c: _core.multiply(
        g, _core.subtract(r, _core.k1e(a))),)),
    "k1e": ("SpecialScaledModifiedBesselK1Backward", "0r", (lambda g, a, r, c: _core.multiply(
        g, _core.subtract(_core.multiply(r, _core.subtract(1, _core.reciprocal(a))),
                          _core.k0e(a))),)),
    "maximum": ("MaximumBackward", "01", (
        lambda g, a, b, r, c: _half_where(g, _core.less(a, b), _core.equal(a, b)),
        lambda g, a, b, r, c: _half_where(g, _core.greater(a, b), _core.equal(a, b)))),
    "minimum": ("MinimumBackward", "01", (
        lambda g, a, b, r, c: _half_where(g, _core.greater(a, b), _core.equal(a, b)),
        lambda g, a, b, r, c: _half_where(g, _core.less(a, b), _core.equal(a, b)))),
    # F.relu, PyTorch's and MXNet's rule: no gradient where the result is 0 (maximum's
    # tie rule would give half); NaN passes g on, as PyTorch's threshold_backward
    "relu": ("ReluBackward", "r", (lambda g, a, r, c: _where(_core.less_equal(r, 0), 0.0, g),)),
    # nn.functional's composites, recorded as one node each as PyTorch's are; c = (dim,)
    # and (-(one-hot class weights), reduction, total weight)
    "log_softmax": ("LogSoftmaxBackward", "r", (lambda g, a, r, c: _core.subtract(
        g, _core.multiply(_exp(r), _sum(g, (c[0],), True))),)),
    "nll_loss": ("NllLossBackward", "", (lambda g, a, r, c: _nll_grad(g, *c),)),
    "where": ("WhereBackward", "0", (
        None,
        lambda g, cond, a, b, r, c: _where(cond, g, 0.0),
        lambda g, cond, a, b, r, c: _where(cond, 0.0, g))),
    "clip": ("ClampBackward", "012", (
        lambda g, x, lo, hi, r, c: _where(_core.logical_and(
            _core.greater_equal(x, lo), _core.less_equal(x, hi)), g, 0.0),
        lambda g, x, lo, hi, r, c: _where(_core.less(x, lo), g, 0.0),
        lambda g, x, lo, hi, r, c: _where(_core.greater(x, hi), g, 0.0))),
    "astype": ("ToCopyBackward", "", (lambda g, a, r, c: g,)),
    "to": ("ToCopyBackward", "", (lambda g, a, r, c: g.to(a.device),)),
    # reductions; c = (axis mask, keepdims[, correction or ord])
    "sum": ("SumBackward", "", (lambda g, a, r, c: _core._broadcast_to(
        _unreduce(g, a, c[0], c[1]), a.shape),)),
    "mean": ("MeanBackward", "", (lambda g, a, r, c: _core._broadcast_to(_core.divide(
        _unreduce(g, a, c[0], c[1]), max(_count(a, c[0]), 1)), a.shape),)),
    "prod": ("ProdBackward", "0", (lambda g, a, r, c: _prod_grad(g, a, c[0], c[1]),)),
    "max": ("AmaxBackward", "0r", (lambda g, a, r, c: _extreme_grad(g, a, r, c[0], c[1]),)),
    "min": ("AminBackward", "0r", (lambda g, a, r, c: _extreme_grad(g, a, r, c[0], c[1]),)),
    "var": ("VarBackward", "0", (lambda g, a, r, c: _var_grad(g, a, c[0], c[1], c[2]),)),
    "std": ("StdBackward", "0r", (lambda g, a, r, c: _std_grad(g, a, r, c[0], c[1], c[2]),)),
    "logsumexp": ("LogsumexpBackward", "0r", (lambda g, a, r, c: _core.multiply(
        _unreduce(g, a, c[0], c[1]), _exp(_core.subtract(a, _unreduce(r, a, c[0], c[1])))),)),
    "vector_norm": ("LinalgVectorNormBackward", "0r",
                    (lambda g, a, r, c: _norm_grad(g, a, r, c[0], c[1], c[2]),)),
    "cumsum": ("CumsumBackward", "", (lambda g, a, r, c: _cumsum_grad(g, c[0], c[1]),)),
    # products
    "matmul": ("MatmulBackward", "01", (lambda g, a, b, r, c: _matmul_grad(g, a, b, 0),
                                        lambda g, a, b, r, c: _matmul_grad(g, a, b, 1))),
    "tensordot": ("TensordotBackward", "01", (
        lambda g, a, b, r, c: _tensordot_grad(g, a, b, c[0], c[1], 0),
        lambda g, a, b, r, c: _tensordot_grad(g, a, b, c[0], c[1], 1))),
    "vecdot": ("LinalgVecdotBackward", "01", (
        lambda g, a, b, r, c: _vecdot_grad(g, b, c[0]),
        lambda g, a, b, r, c: _vecdot_grad(g, a, c[0]))),
    # shapes and indexing; c = the call's other arguments
    "reshape": ("ViewBackward", "", (lambda g, a, r, c: _core._reshape(g, a.shape, None),)),
    "squeeze": ("SqueezeBackward", "", (lambda g, a, r, c: _core._reshape(g, a.shape, None),)),
    "expand_dims": ("UnsqueezeBackward",
                    "", (lambda g, a, r, c: _core._reshape(g, a.shape, None),)),
    "permute_dims": ("PermuteBackward", "", (lambda g, a, r, c: _core._permute_dims(
        g, _inverse([i % a.ndim for i in c[0]])),)),
    "flip": ("FlipBackward", "", (lambda g, a, r, c: _core._flip(g, c[0] if c else None),)),
    "broadcast_to": ("ExpandBackward", "", (lambda g, a, r, c: g,)),
    "getitem": ("IndexBackward", "", (lambda g, a, r, c: _getitem_grad(g, a, c[0]),)),
    "take": ("TakeBackward", "", (lambda g, a, r, c: _take_grad(g, a, *c),)),
    "concat": ("CatBackward", "", _concat_grad),  # one formula for every operand
}


def _register():
    ops = _core.autograd_ops
    for name, (torch_name, reads, _) in _F.items():
        saves = 0
        for ch in reads:
            saves |= 1 << 31 if ch == "r" else 1 << int(ch)
        _core._ag_register(ops[name], torch_name, saves)
    return {ops[name]: entry[2] for name, entry in _F.items()}


_FORMULAS = _register()
_TO = _core.autograd_ops["to"]


# --- the engine ---------------------------------------------------------------------------

def _fit(g, x):
    """A formula's gradient for operand x: broadcast axes summed away, x's dtype."""
    if g.shape != x.shape:
        g = _sum_to(g, x.shape)
    if g.dtype != x.dtype:
        g = _core.astype(g, x.dtype)
    return g


def _accumulate(leaf, g, owned, written):
    """Add g into leaf.grad (replace it for MXNet's grad_req 'write', the first time in
    this pass). g is stored itself when nothing else sees its memory (`owned`), else
    copied, so two leaves never share a gradient array."""
    old = leaf.grad
    replace = old is None or (leaf.grad_req == "write" and id(leaf) not in written)
    written.add(id(leaf))
    if replace:
        if old is not None and old._writeable and old.shape == g.shape:
            old[...] = g  # MXNet's grad buffer keeps its identity
        else:
            leaf.grad = g if owned else _core._copy(g)
    elif old._writeable:
        old += g
    else:
        leaf.grad = _core.add(old, g)


def _clear_grads(params, set_to_none=True):
    """Module.zero_grad and Optimizer.zero_grad: each parameter's gradient becomes
    None (PyTorch's default), or with set_to_none=False is filled with zeros in place
    on its device."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            with no_grad():
                p.grad[...] = 0


def _check_root(y, i):
    if not isinstance(y, Array):
        raise TypeError(f"backward: element {i} is a {type(y).__name__}, not a "
                        "gpuarr.Array")
    if not y.requires_grad:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                           "have a grad_fn: it was not computed from an array that "
                           "requires grad with grad mode on (requires_grad=True or "
                           "attach_grad(), and not under no_grad()/pause())")


def _root_grad(y, g, i):
    if g is None:
        if y.size != 1:
            raise RuntimeError(f"grad can be implicitly created only for scalar outputs "
                               f"(element {i} has shape {y.shape}): pass gradient=, an "
                               "array of its shape, e.g. y.backward(gpuarr.ones_like(y))")
        return _core.ones(y.shape, dtype=y.dtype, device=y.device)
    if not isinstance(g, Array):
        g = _asarray(g, dtype=y.dtype, device=y.device)
    if g.shape != y.shape:
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} "
                           f"and output[{i}] has a shape of {y.shape}")
    if g.device != y.device:
        raise _core.DeviceMismatchError(
            f"the gradient for element {i} is on {g.device} but the array is on "
            f"{y.device}: move it with g.to(y.device)")
    if g.dtype != y.dtype:
        g = _core.astype(g, y.dtype)
    return g


class _Ready:
    """The nodes whose gradients are complete, in the order their work is queued.

    Any order is correct; this one keeps several devices busy at once. A node whose
    gradient is a copy to another device is one task on each device's in-order queue
    (docs/DESIGN.md, "Ordering"), so where it is queued decides what each device waits
    for. A copy that hands a gradient on to more nodes on another device (the
    backward of DataParallel's gather, or of a model split over two devices) is queued
    first, so the other device can start. A copy of a gradient that only goes into a
    leaf's ``.grad`` (the backward of DataParallel's parameter copies) is queued last,
    once nothing else is ready: queued earlier, its half on the leaf's device would
    make that device wait there for the other device's whole backward pass before
    doing its own (measured on two simulated GPUs: the replicas' backward passes ran
    one after the other)."""

    __slots__ = ("first", "normal", "last")

    def __init__(self):
        self.first, self.normal, self.last = [], [], []

    def __bool__(self):
        return bool(self.first or self.normal or self.last)

    def push(self, node, g):
        if node._op == _TO and g is not None:
            x = node._edges()[0][1]
            if x.device != g.device:
                (self.first if x.grad_fn is not None else self.last).append(node)
                return
        self.normal.append(node)

    def pop(self):
        return (self.first or self.normal or self.last).pop()


def _run(roots, grads, retain_graph, capture=None):
    """Propagate grads from roots (arrays) back through their recorded graph.

    Kahn's algorithm over the nodes reachable from the roots: a node runs once every
    consumer has sent its gradient. With `capture` (a dict id(array) -> None), the
    gradients of those arrays are collected there instead of being accumulated
    into leaves."""
    deps = {}
    stack = []
    for y in roots:
        fn = y.grad_fn
        if fn is not None and fn not in deps:
            deps[fn] = 0
            stack.append(fn)
    while stack:  # count each node's consumers within the graph
        node = stack.pop()
        for _, x in node._edges():
            fn = x.grad_fn
            if fn is None:
                continue
            if fn in deps:
                deps[fn] += 1
            else:
                deps[fn] = 1
                stack.append(fn)
    given = {id(g) for g in grads}  # the caller's arrays: never stored in a leaf
    written = set()
    pending = {}
    with no_grad():
        for y, g in zip(roots, grads):
            if capture is not None and id(y) in capture:
                capture[id(y)] = g if capture[id(y)] is None else \
                    _core.add(capture[id(y)], g)
            fn = y.grad_fn
            if fn is None:  # a leaf as a root: its own gradient
                if capture is None:
                    _accumulate(y, g, False, written)
                continue
            pending[fn] = g if fn not in pending else _core.add(pending[fn], g)
        ready = _Ready()
        for fn, n in deps.items():
            if n == 0:
                ready.push(fn, pending.get(fn))
        while ready:
            node = ready.pop()
            out = _node_grads(node, pending.pop(node, None))
            if not retain_graph:
                node._release()
            # gradients for other nodes first: an array kept for a node is not
            # stored into a leaf as well (given), which an in-place += would change
            leaves = []
            for x, gi in out:
                if capture is not None and id(x) in capture and gi is not None:
                    capture[id(x)] = gi if capture[id(x)] is None else \
                        _core.add(capture[id(x)], gi)
                fn = x.grad_fn
                if fn is None:
                    leaves.append((x, gi))
                    continue
                if gi is not None:
                    pending[fn] = gi if fn not in pending else _core.add(pending[fn], gi)
                    given.add(id(gi))
                deps[fn] -= 1
                if deps[fn] == 0:
                    ready.push(fn, pending.get(fn))
            if capture is None:
                for x, gi in leaves:
                    if gi is not None:
                        owned = (gi._storage_refs == 1 and gi._writeable
                                 and id(gi) not in given)
                        _accumulate(x, gi, owned, written)
                        given.add(id(gi))
            # drop this node's gradients now: the next node may be the only other
            # holder of one's memory (a weight's gradient through weight.T), which
            # it can then store in the leaf without a copy
            out = leaves = x = gi = None


def _node_grads(node, g):
    """[(operand, its gradient or None), ...] for the operands of `node` that require
    grad, from g, the gradient of its result (None: nothing reached it)."""
    edges = node._edges()
    if g is None:
        return [(x, None) for _, x in edges]
    inputs, r, c = node._unpack()
    formulas = _FORMULAS[node._op]
    if callable(formulas):  # one formula for every operand (concat)
        return [(x, _fit(formulas(i, g, inputs, *c), x)) for i, x in edges]
    return [(x, _fit(formulas[i](g, *inputs, r, c), x)) for i, x in edges]


def _as_list(v, what):
    if isinstance(v, Array):
        return [v]
    if v is None:
        return None
    try:
        return list(v)
    except TypeError:
        raise TypeError(f"{what} must be an Array or a sequence of Arrays, not "
                        f"{type(v).__name__}") from None


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             inputs=None):
    """backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None)

    Accumulate into the ``.grad`` of every leaf the gradient of ``tensors`` (an array
    or a sequence), weighted by ``grad_tensors`` (default: 1 for one-element
    arrays). The graph is freed afterwards unless ``retain_graph``; a second pass
    through a freed graph raises RuntimeError. Runs on the arrays' devices: no host
    transfer, no host wait."""
    if create_graph:
        raise NotImplementedError("create_graph=True (gradients of gradients) is not "
                                  "supported by gpuarr's autograd")
    if inputs is not None:
        raise NotImplementedError("backward(inputs=...) is not supported: use "
                                  "gpuarr.autograd.grad(outputs, inputs)")
    roots = _as_list(tensors, "tensors")
    gs = _as_list(grad_tensors, "grad_tensors")
    if gs is None:
        gs = [None] * len(roots)
    if len(gs) != len(roots):
        raise ValueError(f"grad_tensors has {len(gs)} elements but tensors has "
                         f"{len(roots)}")
    for i, y in enumerate(roots):
        _check_root(y, i)
    grads = [_root_grad(y, g, i) for i, (y, g) in enumerate(zip(roots, gs))]
    _run(roots, grads, bool(retain_graph))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False)

    The gradients of ``outputs`` with respect to each of ``inputs`` (a tuple, in
    their order), without touching any ``.grad``. An input the outputs do not
    depend on raises unless ``allow_unused`` (then its gradient is None)."""
    if create_graph:
        raise NotImplementedError("create_graph=True (gradients of gradients) is not "
                                  "supported by gpuarr's autograd")
    roots = _as_list(outputs, "outputs")
    xs = _as_list(inputs, "inputs")
    gs = _as_list(grad_outputs, "grad_outputs") or [None] * len(roots)
    for i, y in enumerate(roots):
        _check_root(y, i)
    for i, x in enumerate(xs):
        if not isinstance(x, Array) or not x.requires_grad:
            raise RuntimeError(f"One of the differentiated arrays (input {i}) does not "
                               "require grad")
    capture = {id(x): None for x in xs}
    grads = [_root_grad(y, g, i) for i, (y, g) in enumerate(zip(roots, gs))]
    _run(roots, grads, bool(retain_graph), capture)
    result = []
    for i, x in enumerate(xs):
        g = capture[id(x)]
        if g is None and not allow_unused:
            raise RuntimeError(f"One of the differentiated arrays (input {i}) appears to "
                               "not have been used in the graph. Set allow_unused=True "
                               "if this is the desired behavior.")
        result.append(g)
    return tuple(result)


# --- Array methods ------------------------------------------------------------------------

from ._methods import method as _method  # noqa: E402


@_method("backward")
def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """backward(gradient=None, retain_graph=None, create_graph=False, inputs=None)

    Accumulate the gradient of this array into the ``.grad`` of every leaf it was
    computed from (see gpuarr.autograd.backward). ``gradient`` weights a result with
    more than one element; the graph is freed afterwards unless ``retain_graph``."""
    backward(self, None if gradient is None else [gradient], retain_graph,
             create_graph, inputs)


@_method("attach_grad")
def _attach_grad(self, grad_req="write", stype=None):
    """attach_grad(grad_req='write', stype=None)

    MXNet's way to ask for a gradient: this array requires grad and gets a
    ``.grad`` of zeros on its device now. With ``grad_req='write'`` (MXNet's
    default) each backward pass replaces the gradient; ``'add'`` accumulates it, as
    PyTorch does; ``'null'`` drops it. Such an array may be updated in place outside
    ``autograd.record()``. An array a recorded operation made becomes a leaf of its
    own (its history is cut), as in MXNet."""
    if stype is not None:
        raise NotImplementedError("attach_grad(stype=...): gpuarr has dense arrays only")
    if grad_req == "null":
        self.requires_grad_(False)
        self.grad = None
        return
    if grad_req not in ("write", "add"):
        raise ValueError(f"grad_req must be 'write', 'add' or 'null', not {grad_req!r}")
    _core._attach_grad(self, grad_req == "write")
    self.grad = _core.zeros(self.shape, dtype=self.dtype, device=self.device)
