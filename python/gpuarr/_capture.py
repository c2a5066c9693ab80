"""gpuarr.capture: a step of array operations recorded once and replayed without its Python.

    step = gpuarr.capture(train_step)     # train_step(X, y) -> loss
    for X, y in batches:
        loss = step(X, y)                 # loss is the step's output buffer

The contract is PyTorch's CUDA-graph capture (static inputs, static outputs, a warm-up
call before the recording), enforced where it can be:

- **Static inputs.** The first call with a given signature (each array argument's
  shape, dtype and device; every other argument's value) makes the step's own input
  buffers on those devices and copies the arguments into them; later calls copy into
  the same buffers. The function always sees the buffers, never the caller's arrays.
  ``step.inputs`` are those buffers: passing them themselves skips the copy.
- **Static outputs.** The function returns an array, a tuple or list of arrays, or
  None. The step returns its output buffers (detached from autograd), the same
  objects on every call with that signature: the next call overwrites them, so keep a
  value with ``x.copy()``.
- **Warm-up, recording, replays.** The first call with a signature runs the function
  (a warm-up: optimizers make their state, gradients their arrays); the second runs it
  again while recording every operation's device work into a plan; every later call
  copies the arguments in and replays the plan: the same kernels on the same memory
  in the same order, with no Python per operation (``step.plan_replays`` counts
  them). Results are bitwise those of running the function.
- **What re-records.** A call whose signature differs (a new shape, dtype or device,
  or another value of a non-array argument) records anew, with buffers of its own;
  the earlier recordings are kept for their signatures (``step.recordings``). A
  replay first checks the Python values the recording froze that gpuarr can see: an
  optimizer's hyperparameters (a learning-rate schedule), a module's train/eval mode
  and which arrays are its parameters; when one changed, that call records again.
- **What a replay does not repeat: the function's Python.** A value the function
  computes in Python from state of its own (a counter, a closure variable it
  changes, a branch on a Python number) is frozen at the recording: pass such a value
  as an argument (it is part of the signature) or use ``gpuarr.capture(fn,
  replay=False)``, which runs the function on every call under the same rules.
  ``Adam`` advances its step count and writes its bias corrections into device
  arrays before each replay (its own Python, outside the plan).
- **What is refused.** Inside the step, nothing may read an array's value on the
  host: item(), bool() (an ``if`` or ``while`` on an array), float(), int(), numpy(),
  printing, NumPy conversion, the buffer protocol, DLPack, a copy to the host and
  operations whose result's size depends on values (boolean masks, nonzero) raise
  RuntimeError naming the operation. An array argument that requires grad is refused
  (it would be copied, and its graph lost): parameters are used from the step's
  closure. A step that replaces an array it reads instead of updating it in place
  (``self.w = self.w - g`` rather than ``self.w -= g``) is refused when recorded: its
  replays would read the old array.
- **Random numbers advance per call**, as in the uncaptured step: each replay draws
  the generator's next numbers (bitwise the uncaptured sequence).
- **Threads.** Calls from several threads run one at a time (a lock per step). The
  output buffers are the step's: a thread that keeps a result while others call the
  step keeps a copy (``loss.copy()``).
- **Memory.** A plan keeps every array its recording made (the step's temporaries)
  for its replays, as a CUDA graph's memory pool does: a step's plan holds about what
  one uncaptured step allocates (``step.plan_info()``).

On a CUDA GPU (real or emulated) the first replay captures the plan into a CUDA graph
and every replay is one graph launch: no host work per kernel, no host wait
(``plan_info()["graph"]``); its random numbers (dropout) are drawn anew at each
launch, from the generator's state copied to the device first. A plan that copies
from the host or another device, or runs cuSOLVER or cuFFT replays as its recorded
launches in one C loop instead (``plan_info()["graph_reason"]`` says which);
docs/DESIGN.md, "Captured steps". The profiler shows a replay as one record, "capture
replay", and a simulated GPU's modeled clock prices it as one launch.
"""
import contextlib
import functools
import threading

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
    """One signature's buffers, and its plan once recorded."""

    __slots__ = ("inputs", "kw_inputs", "outputs", "kind", "plan", "guards", "hooks")

    def __init__(self, args, kwargs):
        # a buffer per array argument, on the argument's device (the same dtype and
        # shape); other arguments are passed as they are (their value is in the key)
        self.inputs = [a.copy() if isinstance(a, Array) else a for a in args]
        self.kw_inputs = {k: (v.copy() if isinstance(v, Array) else v)
                          for k, v in kwargs.items()}
        self.outputs = None
        self.kind = None
        self.plan = None     # the recorded plan (a capsule), once recorded
        self.guards = ()     # (token function, its value at the recording)
        self.hooks = ()      # what runs before each replay (_before_replay)

    def load(self, args, kwargs):
        """Copy the call's arrays into the input buffers."""
        for buf, a in zip(self.inputs, args):
            if isinstance(a, Array) and a is not buf:
                a.copyto(buf)
        for k, v in kwargs.items():
            if isinstance(v, Array) and v is not self.kw_inputs[k]:
                v.copyto(self.kw_inputs[k])

    def unchanged(self):
        """Do the Python values the recording froze still hold?"""
        for fn, token in self.guards:
            if fn() != token:
                return False
        return True


# This thread's recording: the guards and the before-replay hooks that optimizers and
# modules note while a step records (`_guard`, `_before_replay`).
_state = threading.local()


def _recording():
    """Is this thread recording a captured step?"""
    return getattr(_state, "guards", None) is not None


def _guard(token_fn):
    """While a step records: its replays first compare ``token_fn()`` (hashable, cheap)
    with its value now, and record again when it differs. Optimizers guard their
    hyperparameters, modules their training mode."""
    guards = getattr(_state, "guards", None)
    if guards is not None:
        guards.append((token_fn, token_fn()))


def _before_replay(fn):
    """While a step records: run ``fn()`` before each of its replays, outside the plan
    (an optimizer's per-call values: Adam's step count and bias corrections, written
    into device arrays the plan reads). The recording itself runs ``fn`` under
    ``_paused()``, so that what it writes is not frozen into the plan."""
    hooks = getattr(_state, "hooks", None)
    if hooks is not None:
        hooks.append(fn)


@contextlib.contextmanager
def _paused():
    """Leave the work of the block out of this thread's recording (if any)."""
    if getattr(_state, "guards", None) is None:
        yield
        return
    _core._capture_pause()
    try:
        yield
    finally:
        _core._capture_resume()


class Captured:
    """A function of arrays run as a captured step (see gpuarr.capture)."""

    def __init__(self, fn, replay=True):
        if not callable(fn):
            raise TypeError(f"gpuarr.capture needs a function, got {type(fn).__name__}")
        self.fn = fn
        self._name = getattr(fn, "__qualname__", None) or repr(fn)
        self._replay = bool(replay)
        self._recordings = {}
        self.replays = 0
        self.plan_replays = 0
        # one call at a time: a call's input copies, run and output buffers are one
        # step; a re-entrant lock, so that a step calling itself gets the recorder's
        # own refusal rather than a deadlock
        self._lock = threading.RLock()
        functools.update_wrapper(self, fn, updated=())  # not fn.__dict__: our state

    @property
    def recordings(self):
        """How many signatures have been recorded (each with buffers of its own)."""
        return len(self._recordings)

    @property
    def inputs(self):
        """The last signature's input buffers (None before the first call), PyTorch's
        static inputs: a loop that writes each batch into them (``batch.copyto(buf)``)
        and calls ``step(*step.inputs)`` skips the copy a call makes of arrays that are
        not its buffers."""
        rec = getattr(self, "_last", None)
        return None if rec is None else tuple(rec.inputs)

    @property
    def eager_reason(self):
        """Why the step runs its Python on every call, or None (a step recorded
        once replays its plan: a signature's first two calls run the Python)."""
        return None if self._replay else "gpuarr.capture(fn, replay=False)"

    def plan_info(self):
        """plan_info()

        The last signature's plan: its operations (``ops``), the blocks it holds and
        their bytes (``held``, ``held_bytes``), the random numbers each replay draws
        (``draws``), and ``graph``: True when its replays are one CUDA graph launch,
        False when they run its calls (``graph_reason`` says why), None before the
        first replay; None before it is recorded."""
        rec = getattr(self, "_last", None)
        if rec is None or rec.plan is None:
            return None
        info = _core._plan_info(rec.plan)
        info.pop("orphans")
        info["graph"] = {1: True, -1: False}.get(info["graph"])
        return info

    def _run(self, rec, record):
        """Run the function on the buffers under the host-read refusal (recording its
        device work when ``record``) and copy its results into the output buffers."""
        first = rec.outputs is None
        _core._capture_enter(self._name)
        keep = False
        try:
            if record:
                _core._capture_record_begin(self._name)  # refused inside another
                _state.guards, _state.hooks = [], []
            try:
                result = self.fn(*rec.inputs, **rec.kw_inputs)
                outputs, kind = _as_outputs(result, self._name)
                del result
                self._store(rec, outputs, kind, first)
                del outputs
                keep = True
            finally:
                if record:
                    guards, hooks = _state.guards, _state.hooks
                    _state.guards = _state.hooks = None
                    plan = _core._capture_record_end(keep)
        finally:
            _core._capture_exit()
        if not record or plan is None:
            return
        if _core._plan_info(plan)["orphans"]:
            raise RuntimeError(
                f"gpuarr.capture: {self._name} replaces an array it reads (for example "
                "`self.w = self.w - lr * g` rather than `self.w -= lr * g`, or a state "
                "attribute assigned a new array each call); a replay would read the "
                "old array. Update state in place (-=, x[...] = v, out=), or use "
                "gpuarr.capture(fn, replay=False)")
        rec.plan, rec.guards, rec.hooks = plan, tuple(guards), tuple(hooks)

    def _store(self, rec, outputs, kind, first):
        from .autograd import no_grad  # autograd imports the operations' modules
        with no_grad():
            if first:
                # the step's own copies: a result may be a parameter or an input
                # buffer, which the next call would change under the caller
                rec.outputs = tuple(r.detach().copy() for r in outputs)
                rec.kind = kind
                return
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

    def __call__(self, *args, **kwargs):
        """__call__(*args, **kwargs)

        Run the step for this call's signature: the function on its buffers the first
        and second time (the second recorded), its plan after that; return the output
        buffers. Calls from several threads run one at a time.
        """
        with self._lock:
            return self._call(args, kwargs)

    def _call(self, args, kwargs):
        key = (tuple(_signature_of(a, f"argument {i}") for i, a in enumerate(args)),
               tuple(sorted((k, _signature_of(v, f"argument {k!r}"))
                            for k, v in kwargs.items())))
        rec = self._recordings.get(key)
        if rec is None:
            rec = _Recording(args, kwargs)
            self._run(rec, record=False)  # the warm-up
            self._recordings[key] = rec
            self._last = rec
            return _shaped(rec.outputs, rec.kind)
        self._last = rec
        rec.load(args, kwargs)
        self.replays += 1
        if rec.plan is not None:
            if rec.unchanged():
                for hook in rec.hooks:
                    hook()
                _core._plan_replay(rec.plan)
                self.plan_replays += 1
                return _shaped(rec.outputs, rec.kind)
            rec.plan = None  # a value the recording froze has changed: record again
        self._run(rec, record=self._replay)
        return _shaped(rec.outputs, rec.kind)

    def __repr__(self):
        """__repr__()

        The function's name, its recordings and its replays.
        """
        return (f"<gpuarr.capture of {self._name}: {self.recordings} recording(s), "
                f"{self.replays} replay(s), {self.plan_replays} without Python>")


def capture(fn=None, /, *, replay=True):
    """capture(fn, /, *, replay=True)

    Run ``fn`` (a function of arrays that returns arrays: a training step) as a
    captured step: static input and output buffers per signature, host reads refused
    inside, random numbers advancing per call; from its third call with a signature,
    a replay of the recorded device work without the function's Python (``replay=
    False``: the function runs every call). Usable as a decorator, with or without
    arguments. See the module docstring of gpuarr._capture for the rules."""
    if fn is None:
        return lambda f: Captured(f, replay=replay)
    return Captured(fn, replay=replay)
