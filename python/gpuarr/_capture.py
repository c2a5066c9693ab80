"""gpuarr.capture: a step of array operations with fixed buffers and enforced rules.

    step = gpuarr.capture(train_step)     # train_step(X, y) -> loss
    for X, y in batches:
        loss = step(X, y)                 # loss is the step's output buffer

The contract is PyTorch's CUDA-graph capture (static inputs, static outputs), so that
a step written against it can be replayed without its Python:

- **Static inputs.** The first call with a given signature (each array argument's
  shape, dtype and device; every other argument's value) makes the step's own input
  buffers on those devices and copies the arguments into them; later calls copy into
  the same buffers. The function always sees the buffers, never the caller's arrays.
- **Static outputs.** The function returns an array, a tuple or list of arrays, or
  None. The step returns its output buffers (detached from autograd), the same
  objects on every call with that signature: the next call overwrites them, so keep a
  value with ``x.copy()``.
- **What re-records.** A call whose signature differs (a new shape, dtype or device,
  or another value of a non-array argument) records anew, with buffers of its own;
  the earlier recordings are kept for their signatures (``step.recordings``).
- **What is refused.** Inside the step, nothing may read an array's value on the
  host: item(), bool() (an ``if`` or ``while`` on an array), float(), int(), numpy(),
  printing, NumPy conversion, the buffer protocol and DLPack raise RuntimeError naming
  the operation. An array argument that requires grad is refused (it would be copied,
  and its graph lost): parameters are used from the step's closure.
- **Random numbers advance per call**, as in the uncaptured step: each call draws the
  generator's next numbers.

What a call runs today: the function itself, on the step's buffers, under the rules
above (docs/DESIGN.md, "Captured steps"), so its results are bitwise the uncaptured
step's on every device. Replaying a recorded plan without the function's Python
(one CUDA graph launch on a GPU) is the next stage of issue 45 and keeps this
contract.
"""
import functools

from . import _core
from ._core import Array

__all__ = ["Captured", "capture"]


def _signature_of(value, where):
    """What a call's argument contributes to its signature (hashable)."""
    if isinstance(value, Array):
        if value.requires_grad:
            raise TypeError(
                f"gpuarr.capture: {where} requires grad; a captured step copies its "
                "array arguments into buffers of its own, which would drop that "
                "array's graph. Pass data (X, y) as arguments and use parameters from "
                "the step's closure (or pass x.detach())")
        return ("array", tuple(value.shape), value.dtype.name, str(value.device))
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"gpuarr.capture: {where} is a {type(value).__name__}; a captured step "
            "takes arrays and hashable Python values (numbers, strings, tuples), "
            "whose value is part of the step's signature") from None
    return ("value", type(value), value)


def _as_outputs(result, name):
    """The step's results as a tuple of arrays, and how to give them back."""
    if result is None:
        return (), None
    if isinstance(result, Array):
        return (result,), Array
    if isinstance(result, (tuple, list)) and all(isinstance(r, Array) for r in result):
        return tuple(result), type(result)
    raise TypeError(
        f"gpuarr.capture: {name} returned a {type(result).__name__}; a captured step "
        "returns an array, a tuple or list of arrays, or None (a Python number would "
        "be a read of a value inside the step: return the array instead)")


def _shaped(outputs, kind):
    if kind is None:
        return None
    if kind is Array:
        return outputs[0]
    return kind(outputs)


class _Recording:
    """One signature's buffers: the function's inputs and the step's outputs."""

    __slots__ = ("inputs", "kw_inputs", "outputs", "kind")

    def __init__(self, args, kwargs):
        # a buffer per array argument, on the argument's device (the same dtype and
        # shape); other arguments are passed as they are (their value is in the key)
        self.inputs = [a.copy() if isinstance(a, Array) else a for a in args]
        self.kw_inputs = {k: (v.copy() if isinstance(v, Array) else v)
                          for k, v in kwargs.items()}
        self.outputs = None
        self.kind = None

    def load(self, args, kwargs):
        """Copy the call's arrays into the input buffers."""
        for buf, a in zip(self.inputs, args):
            if isinstance(a, Array) and a is not buf:
                a.copyto(buf)
        for k, v in kwargs.items():
            if isinstance(v, Array) and v is not self.kw_inputs[k]:
                v.copyto(self.kw_inputs[k])


class Captured:
    """A function of arrays run as a captured step (see gpuarr.capture)."""

    def __init__(self, fn):
        if not callable(fn):
            raise TypeError(f"gpuarr.capture needs a function, got {type(fn).__name__}")
        self.fn = fn
        self._name = getattr(fn, "__qualname__", None) or repr(fn)
        self._recordings = {}
        self.replays = 0
        functools.update_wrapper(self, fn, updated=())  # not fn.__dict__: our state

    @property
    def recordings(self):
        """How many signatures have been recorded (each with buffers of its own)."""
        return len(self._recordings)

    def __call__(self, *args, **kwargs):
        """__call__(*args, **kwargs)

        Run the step on its buffers for this call's signature (recording them on the
        first call with it) and return its output buffers.
        """
        key = (tuple(_signature_of(a, f"argument {i}") for i, a in enumerate(args)),
               tuple(sorted((k, _signature_of(v, f"argument {k!r}"))
                            for k, v in kwargs.items())))
        rec = self._recordings.get(key)
        first = rec is None
        if first:
            rec = _Recording(args, kwargs)
        else:
            rec.load(args, kwargs)
        _core._capture_enter(self._name)
        try:
            result = self.fn(*rec.inputs, **rec.kw_inputs)
        finally:
            _core._capture_exit()
        outputs, kind = _as_outputs(result, self._name)
        from .autograd import no_grad  # autograd imports the operations' modules
        with no_grad():
            if first:
                # the step's own copies: a result may be a parameter or an input
                # buffer, which the next call would change under the caller
                rec.outputs = tuple(r.detach().copy() for r in outputs)
                rec.kind = kind
                self._recordings[key] = rec
            else:
                if kind is not rec.kind or len(outputs) != len(rec.outputs):
                    raise RuntimeError(
                        f"gpuarr.capture: {self._name} returned {len(outputs)} "
                        f"output(s) as {getattr(kind, '__name__', kind)} where its "
                        f"recording returned {len(rec.outputs)} as "
                        f"{getattr(rec.kind, '__name__', rec.kind)}: a captured step "
                        "must return the same outputs on every call")
                for buf, r in zip(rec.outputs, outputs):
                    if (tuple(r.shape) != tuple(buf.shape) or r.dtype != buf.dtype
                            or r.device != buf.device):
                        raise RuntimeError(
                            f"gpuarr.capture: {self._name} returned an array of shape "
                            f"{tuple(r.shape)}, {r.dtype.name} on {r.device} where its "
                            f"recording returned {tuple(buf.shape)}, {buf.dtype.name} "
                            f"on {buf.device}: a captured step's outputs depend only "
                            "on its signature")
                    r.detach().copyto(buf)
                self.replays += 1
        return _shaped(rec.outputs, rec.kind)

    def __repr__(self):
        """__repr__()

        The function's name, its recordings and its replays.
        """
        return (f"<gpuarr.capture of {self._name}: {self.recordings} recording(s), "
                f"{self.replays} replay(s)>")


def capture(fn, /):
    """capture(fn, /)

    Run ``fn`` (a function of arrays that returns arrays: a training step) as a
    captured step: static input and output buffers per signature, host reads refused
    inside, random numbers advancing per call. Usable as a decorator. See the module
    docstring of gpuarr._capture for the rules."""
    return Captured(fn)
