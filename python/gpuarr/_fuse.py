"""gpuarr.fuse: a chain of elementwise operations in one pass over memory.

``fuse(fn)`` traces ``fn`` once per signature of its arguments (the dtypes and ndim
of its arrays, the kinds of its scalars) with stand-in values that record each
operation instead of running it. Each operation's dtypes are resolved exactly as the
unfused operation resolves them (``_core._ew_resolve``: NumPy 2's promotion, weak
Python scalars), with the casts the unfused operation makes written out as
instructions. The recording becomes a program of at most 32 instructions over 16
registers that the core checks (csrc/ops/ga_fused.c) and a device runs in one pass:
block by block in cache on the CPU (the very inner loops of the unfused operations,
so results are bitwise equal), as one kernel on CUDA, queued on a simulated GPU.

Whatever cannot be traced or run that way runs unfused, giving the same results and
the same errors; ``explain()`` says why (docs/DESIGN.md, "Fused elementwise chains").
"""
import functools
import logging
import operator
import warnings

import numpy as np

from . import _core, _reduce
from ._core import Array

__all__ = ["fuse", "Fused"]

_log = logging.getLogger("gpuarr.fuse")

_MAX_INPUTS = 3        # arrays per program (GA_MAXARGS - 1: one ga_loop)
_MAX_CONSTS = 8        # GA_FUSED_MAXCONSTS
_MAX_REGS = 16         # GA_FUSED_MAXREGS
_MAX_INSTR = 32        # GA_FUSED_MAXINSTR
_REDUCTIONS = ("sum", "max", "min", "mean", "prod")


class _Unfusable(Exception):
    """Raised while tracing: the function does something a program cannot hold."""


class _Retrace(Exception):
    """Raised at a call: this call's scalars do not fit the traced program."""


# --- tracing ---------------------------------------------------------------------

class _Node:
    """One recorded operation: op name, loop dtype, output dtype, source values."""
    __slots__ = ("op", "loop", "dtype", "srcs")

    def __init__(self, op, loop, dtype, srcs):
        self.op, self.loop, self.dtype, self.srcs = op, loop, dtype, srcs


class _Const:
    """A scalar the program reads: a literal of the function (value) or a scalar
    computed from the arguments at each call (scalar: a _Scalar), stored in the
    register dtype of the op that reads it."""
    __slots__ = ("value", "scalar", "dtype")

    def __init__(self, value, scalar, dtype):
        self.value, self.scalar, self.dtype = value, scalar, dtype


class _Trace:
    def __init__(self):
        self.inputs = []   # (arg index, dtype) of each array input, in register order
        self.consts = {}   # (id of the scalar's source, dtype) -> _Const
        self.casts = {}    # (id of value, dtype) -> cast node
        self.nodes = []
        self.probes = {}   # dtype -> 0-d CPU array

    def probe(self, dtype):
        """A 0-d CPU array of `dtype`: what _ew_resolve promotes like a traced value.
        Held by the trace, not the module: a module-level cache of arrays outlived
        the interpreter's finalization in CI's leak check (.ci/run, check_live)."""
        p = self.probes.get(dtype)
        if p is None:
            p = self.probes[dtype] = _core.empty((), dtype=dtype, device=_core.cpu())
        return p

    def node(self, op, loop, dtype, srcs):
        n = _Node(op, loop, dtype, srcs)
        self.nodes.append(n)
        if len(self.nodes) > _MAX_INSTR:
            raise _Unfusable(f"more than {_MAX_INSTR} operations")
        return n

    def cast(self, v, dtype):
        """v (a _Node, an input index or a _Const) as `dtype`."""
        key = (id(v), dtype)
        n = self.casts.get(key)
        if n is None:
            n = self.casts[key] = self.node("copy", dtype, dtype, (v,))
        return n


class _Var:
    """An array value inside a traced function."""
    __slots__ = ("_tr", "_src", "dtype", "ndim")
    __array_priority__ = 1000

    def __init__(self, tr, src, dtype, ndim):
        self._tr, self._src, self.dtype, self.ndim = tr, src, dtype, ndim

    def __bool__(self):
        raise _Unfusable("the function branches on an array's value")

    def __getattr__(self, name):
        if name.startswith("__"):  # protocols other libraries probe for (__array__)
            raise AttributeError(name)
        raise _Unfusable(f"the function uses .{name}, which is not elementwise")

    def __getitem__(self, key):
        raise _Unfusable("the function indexes an array")

    __hash__ = None  # type: ignore[assignment]

    # operators: the same ops the Array operators run (csrc/binding/py_array.c)
    def __add__(self, o): return _apply("add", self, o)
    def __radd__(self, o): return _apply("add", o, self)
    def __sub__(self, o): return _apply("subtract", self, o)
    def __rsub__(self, o): return _apply("subtract", o, self)
    def __mul__(self, o): return _apply("multiply", self, o)
    def __rmul__(self, o): return _apply("multiply", o, self)
    def __truediv__(self, o): return _apply("divide", self, o)
    def __rtruediv__(self, o): return _apply("divide", o, self)
    def __floordiv__(self, o): return _apply("floor_divide", self, o)
    def __rfloordiv__(self, o): return _apply("floor_divide", o, self)
    def __mod__(self, o): return _apply("remainder", self, o)
    def __rmod__(self, o): return _apply("remainder", o, self)
    def __pow__(self, o): return _apply("pow", self, o)
    def __rpow__(self, o): return _apply("pow", o, self)
    def __and__(self, o): return _apply("bitwise_and", self, o)
    def __rand__(self, o): return _apply("bitwise_and", o, self)
    def __or__(self, o): return _apply("bitwise_or", self, o)
    def __ror__(self, o): return _apply("bitwise_or", o, self)
    def __xor__(self, o): return _apply("bitwise_xor", self, o)
    def __rxor__(self, o): return _apply("bitwise_xor", o, self)
    def __lshift__(self, o): return _apply("bitwise_left_shift", self, o)
    def __rlshift__(self, o): return _apply("bitwise_left_shift", o, self)
    def __rshift__(self, o): return _apply("bitwise_right_shift", self, o)
    def __rrshift__(self, o): return _apply("bitwise_right_shift", o, self)
    def __lt__(self, o): return _apply("less", self, o)
    def __le__(self, o): return _apply("less_equal", self, o)
    def __gt__(self, o): return _apply("greater", self, o)
    def __ge__(self, o): return _apply("greater_equal", self, o)
    def __eq__(self, o): return _apply("equal", self, o)
    def __ne__(self, o): return _apply("not_equal", self, o)
    def __neg__(self): return _apply("negative", self)
    def __pos__(self): return _apply("positive", self)
    def __abs__(self): return _apply("abs", self)
    def __invert__(self): return _apply("bitwise_invert", self)

    # the Array methods that are elementwise
    def exp(self): return _apply("exp", self)
    def log(self): return _apply("log", self)
    def sqrt(self): return _apply("sqrt", self)
    def abs(self): return _apply("abs", self)
    def sin(self): return _apply("sin", self)
    def cos(self): return _apply("cos", self)
    def tanh(self): return _apply("tanh", self)
    def conj(self): return _apply("conj", self)

    def astype(self, dtype, /, *, copy=True):
        dtype = _core.DType(dtype)
        return _Var(self._tr, self._tr.cast(self._src, dtype), dtype, self.ndim)

    def clip(self, min=None, max=None):
        return record_call("clip", (self, min, max))

    def _fuse_reduce(self, name, axis=None, keepdims=False, dtype=None):
        return _Reduced(self, name, axis, keepdims, dtype)

    def sum(self, axis=None, dtype=None, keepdims=False):
        return _Reduced(self, "sum", axis, keepdims, dtype)

    def prod(self, axis=None, dtype=None, keepdims=False):
        return _Reduced(self, "prod", axis, keepdims, dtype)

    def mean(self, axis=None, keepdims=False, dtype=None):
        return _Reduced(self, "mean", axis, keepdims, dtype)

    def max(self, axis=None, keepdims=False):
        return _Reduced(self, "max", axis, keepdims, None)

    def min(self, axis=None, keepdims=False):
        return _Reduced(self, "min", axis, keepdims, None)


class _Scalar:
    """A Python scalar inside a traced function that depends on the arguments: an
    argument, or Python arithmetic on arguments and literals (``1.0 - beta``). Its
    value is computed again at each call (`fn(args)`), in Python as the unfused
    function computes it; `value` is the trace's. Anything else done with it (a
    comparison, float(), math.sqrt) would bake one call's value into the program and
    makes the call run unfused."""
    __slots__ = ("fn", "value", "derived")

    def __init__(self, fn, value, derived=False):
        self.fn, self.value, self.derived = fn, value, derived

    def _arith(self, other, op, reflected=False):
        if isinstance(other, _Var):
            return NotImplemented  # the array's reflected operator records it
        if isinstance(other, _Scalar):
            ofn, oval = other.fn, other.value
        elif _is_weak(other):
            ofn, oval = (lambda args, o=other: o), other
        else:
            return NotImplemented
        fn = self.fn
        if reflected:
            return _Scalar(lambda args: op(ofn(args), fn(args)), op(oval, self.value), True)
        return _Scalar(lambda args: op(fn(args), ofn(args)), op(self.value, oval), True)

    def __add__(self, o): return self._arith(o, operator.add)
    def __radd__(self, o): return self._arith(o, operator.add, True)
    def __sub__(self, o): return self._arith(o, operator.sub)
    def __rsub__(self, o): return self._arith(o, operator.sub, True)
    def __mul__(self, o): return self._arith(o, operator.mul)
    def __rmul__(self, o): return self._arith(o, operator.mul, True)
    def __truediv__(self, o): return self._arith(o, operator.truediv)
    def __rtruediv__(self, o): return self._arith(o, operator.truediv, True)
    def __pow__(self, o): return self._arith(o, operator.pow)
    def __rpow__(self, o): return self._arith(o, operator.pow, True)

    def __neg__(self):
        fn = self.fn
        return _Scalar(lambda args: -fn(args), -self.value, True)

    def _refuse(self, *other):
        raise _Unfusable("the function uses a scalar argument's value (a comparison, "
                         "float(), a math function): it would be fixed at the trace")

    __bool__ = __int__ = __float__ = __index__ = __complex__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __floordiv__ = __mod__ = _refuse
    __rfloordiv__ = __rmod__ = __and__ = __or__ = __xor__ = __abs__ = _refuse
    __hash__ = None  # type: ignore[assignment]


class _Reduced:
    """The function's final reduction of a traced value."""
    __slots__ = ("var", "name", "axis", "keepdims", "dtype")

    def __init__(self, var, name, axis, keepdims, dtype):
        self.var, self.name, self.axis, self.keepdims, self.dtype = (
            var, name, axis, keepdims, dtype)

    def _after(self, *a):
        raise _Unfusable("the function goes on after its reduction (only a final "
                         "reduction is fused)")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self._after()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _after
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __bool__ = _after
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __float__ = _after
    __hash__ = None  # type: ignore[assignment]


def _is_weak(o):
    return type(o) in (bool, int, float, complex)


def _operand(tr, o):
    """What _ew_resolve promotes like o, and o's recorded source."""
    if isinstance(o, _Var):
        if o._tr is not tr:
            raise _Unfusable("a value of another trace")
        return tr.probe(o.dtype), o
    if isinstance(o, _Scalar):
        return o.value, o
    if isinstance(o, Array):
        raise _Unfusable("the function uses an array it did not receive as an "
                         "argument (pass it as one)")
    if _is_weak(o) or type(o).__module__ == "numpy" and hasattr(o, "dtype"):
        if getattr(o, "ndim", 0) != 0:
            raise _Unfusable("the function uses a NumPy array (host data)")
        return o, o
    raise _Unfusable(f"an operand of type {type(o).__name__}")


def _apply(op, *operands):
    tr = next(o._tr for o in operands if isinstance(o, _Var))
    probes, srcs = zip(*(_operand(tr, o) for o in operands))
    try:
        loop, out = _core._ew_resolve(op, *probes)
    except Exception as e:  # the unfused call raises it again, to the user
        raise _Unfusable(f"{op}: {e}") from None
    if op == "pow" and loop.kind in "iu" and \
            isinstance(operands[1], _Var):
        raise _Unfusable("an integer power with an array exponent (its signs are "
                         "checked on the host)")
    regs = []
    for i, (o, s) in enumerate(zip(operands, srcs)):
        want = _core.bool if op == "where" and i == 0 else loop
        if isinstance(s, _Var):
            v = s._src
            regs.append(v if s.dtype == want else tr.cast(v, want))
        else:
            key = (id(s) if isinstance(s, _Scalar) else ("lit", type(s), s), want)
            c = tr.consts.get(key)
            if c is None:
                c = tr.consts[key] = _Const(
                    None if isinstance(s, _Scalar) else s,
                    s if isinstance(s, _Scalar) else None, want)
                if len(tr.consts) > _MAX_CONSTS:
                    raise _Unfusable(f"more than {_MAX_CONSTS} scalars")
            regs.append(c)
    ndim = max((o.ndim for o in operands if isinstance(o, _Var)), default=0)
    return _Var(tr, tr.node(op, loop, out, tuple(regs)), out, ndim)


def record_call(name, args):
    """A gpuarr function called with a traced value (gpuarr.exp(v), where(...)):
    recorded. Called by the functions' TypeError paths; None if no value is traced."""
    if not any(isinstance(a, (_Var, _Reduced)) for a in args):
        return None
    if name == "clip":
        x, lo, hi = args
        if lo is None and hi is None:
            return _apply("positive", x) if x.dtype != _core.bool else x.astype(x.dtype)
        if lo is None:
            return _apply("minimum", x, hi)
        if hi is None:
            return _apply("maximum", x, lo)
        return _apply("clip", x, lo, hi)
    if name == "astype":
        return args[0].astype(args[1])
    return _apply(name, *args)


# --- from a trace to a program --------------------------------------------------------

class _Plan:
    """A compiled program, and where its inputs and constants come from."""
    __slots__ = ("prog", "array_args", "consts", "reduce", "text")

    def __call__(self, args, out=None):
        arrays = tuple(args[i] for i in self.array_args)
        consts = tuple(c.value if c.scalar is None else c.scalar.fn(args)
                       for c in self.consts)
        for c, v in zip(self.consts, consts):
            # a computed scalar of another type or integer range than at the trace
            # would resolve differently: the unfused function decides (by value)
            if c.scalar is not None and c.scalar.derived and _key(v) != _key(c.scalar.value):
                raise _Retrace("a scalar computed from the arguments changed its type "
                               "or integer range since the trace")
        r = self.reduce
        if r is not None and r.axis is None and r.dtype is None and \
                r.name in ("sum", "prod", "max", "min", "mean"):
            # a full reduction, made as the result is where the device can (the CPU,
            # simulated GPUs: no full-size temporary); None: program, then reduction
            res = _core._fused_run(self.prog, arrays, consts, None, (r.name, r.keepdims))
            if res is not None:
                return res
        out = _core._fused_run(self.prog, arrays, consts, out)
        if r is not None:
            kw = {"axis": r.axis, "keepdims": r.keepdims}
            if r.dtype is not None:
                kw["dtype"] = r.dtype
            out = getattr(_reduce, r.name)(out, **kw)
        return out


def _compile(tr, result, out_dtype=None):
    """Registers for the recorded values, dead operations dropped; a _Plan. With
    out_dtype, the result is cast to it (same_kind, as an in-place operator casts)."""
    reduce = None
    if isinstance(result, _Reduced):
        reduce, result = result, result.var
        if reduce.name not in _REDUCTIONS:
            raise _Unfusable(f"a final {reduce.name}")
        if out_dtype is not None:
            raise _Unfusable("out= with a final reduction")
    if not isinstance(result, _Var):
        raise _Unfusable("the function returns something other than one array")
    if not isinstance(result._src, _Node):
        raise _Unfusable("the function returns one of its arguments unchanged")
    if out_dtype is not None and out_dtype != result.dtype:
        if not np.can_cast(result.dtype.dtype, out_dtype.dtype, "same_kind"):
            raise _Unfusable(f"a {result.dtype} result cannot be written into a "
                             f"{out_dtype} out (same_kind casting)")
        result = _Var(tr, tr.cast(result._src, out_dtype), out_dtype, result.ndim)
    if not tr.inputs:
        raise _Unfusable("no array argument")
    # the operations the result needs, in order
    live = set()
    stack = [result._src]
    while stack:
        n = stack.pop()
        if id(n) in live:
            continue
        live.add(id(n))
        stack.extend(s for s in n.srcs if isinstance(s, _Node))
    nodes = [n for n in tr.nodes if id(n) in live]
    used_inputs = sorted({s for n in nodes for s in n.srcs if isinstance(s, int)})
    consts = []
    for n in nodes:
        for s in n.srcs:
            if isinstance(s, _Const) and all(s is not c for c in consts):
                consts.append(s)
    if len(used_inputs) > _MAX_INPUTS:
        raise _Unfusable(f"more than {_MAX_INPUTS} array arguments")
    if not used_inputs:
        raise _Unfusable("the result does not depend on an array argument")
    reg = {}
    dtypes = []
    for k in used_inputs:
        reg[("in", k)] = len(dtypes)
        dtypes.append(tr.inputs[k][1])
    for c in consts:
        reg[id(c)] = len(dtypes)
        dtypes.append(c.dtype)
    last_use = {}
    for i, n in enumerate(nodes):
        for s in n.srcs:
            if isinstance(s, _Node):
                last_use[id(s)] = i
    free = []  # temporaries whose value is dead, reused by dtype
    instrs = []

    def src_reg(s):
        return reg[("in", s)] if isinstance(s, int) else reg[id(s)]

    for i, n in enumerate(nodes):
        # the result's register is written by the last instruction only: out= may be
        # one of the inputs, read in the same block before the result is written
        r = next((r for r in free if dtypes[r] == n.dtype), None) \
            if i < len(nodes) - 1 else None
        if r is None:
            r = len(dtypes)
            dtypes.append(n.dtype)
            if len(dtypes) > _MAX_REGS:
                raise _Unfusable(f"more than {_MAX_REGS} registers")
        else:
            free.remove(r)
        srcs = [src_reg(s) for s in n.srcs]
        instrs.append((n.op, n.loop, r, *(srcs + [-1] * (3 - len(srcs)))))
        reg[id(n)] = r
        for s in set(id(s) for s in n.srcs if isinstance(s, _Node)):
            if last_use[s] == i:
                free.append(reg[s])
    plan = _Plan()
    plan.prog = _core._fused_compile(len(used_inputs), len(consts), tuple(dtypes),
                                     tuple(instrs), reg[id(result._src)])
    plan.array_args = tuple(tr.inputs[k][0] for k in used_inputs)
    plan.consts = tuple(consts)
    if reduce is not None:
        reduce.var = None  # the plan keeps the reduction's arguments, not the trace
    plan.reduce = reduce
    lines = [f"fused: {len(instrs)} operations on {len(used_inputs)} array(s) in one "
             f"pass" + (f", then {reduce.name}" if reduce is not None else "")]
    for op, loop, d, *s in instrs:
        srcs = ", ".join(f"r{x}" for x in s if x >= 0)
        lines.append(f"  r{d} = {op}[{loop}]({srcs})"
                     + ("  <- result" if (op, loop, d, *s) == instrs[-1] else ""))
    plan.text = "\n".join(lines)
    return plan


def _int_fits(v):
    """Which integer dtypes hold v: NEP 50 resolves a Python int by that alone."""
    return tuple(lo <= v <= hi for lo, hi in (
        (-2**7, 2**7 - 1), (-2**15, 2**15 - 1), (-2**31, 2**31 - 1), (-2**63, 2**63 - 1),
        (0, 2**8 - 1), (0, 2**16 - 1), (0, 2**32 - 1), (0, 2**64 - 1)))


def _key(a):
    """What the program traced for these arguments depends on."""
    if isinstance(a, Array):
        return (Array, a.dtype, a.ndim)
    t = type(a)
    if t is int:
        return (int, _int_fits(a))
    if t in (bool, float, complex):
        return (t,)
    if t.__module__ == "numpy" and getattr(a, "ndim", None) == 0:
        return (t, a.dtype)
    try:
        hash(a)
    except TypeError:
        return None
    return ("value", t, a)


class Fused:
    """A function whose elementwise chain runs fused (see gpuarr.fuse)."""

    def __init__(self, fn, explain=False):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._explain = explain
        self._plans = {}
        self._warned = set()

    def _plan(self, args, out=None):
        """The _Plan for these arguments, or the reason there is none (a str)."""
        key = tuple(_key(a) for a in args)
        if any(k is None for k in key):
            return "an argument that is neither an array nor a scalar nor hashable"
        if out is not None:
            if not isinstance(out, Array):
                return "out is not a gpuarr array"
            key += (("out", out.dtype),)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._trace(args, None if out is None else out.dtype)
        return plan

    def _trace(self, args, out_dtype=None):
        tr = _Trace()
        stand_ins = []
        for i, a in enumerate(args):
            if isinstance(a, Array):
                stand_ins.append(_Var(tr, len(tr.inputs), a.dtype, a.ndim))
                tr.inputs.append((i, a.dtype))
            elif _is_weak(a) or type(a).__module__ == "numpy":
                stand_ins.append(_Scalar(lambda args, i=i: args[i], a))
            else:
                stand_ins.append(a)
        try:
            return _compile(tr, self._fn(*stand_ins), out_dtype)
        except _Unfusable as e:
            return str(e)
        except Exception as e:  # noqa: BLE001 - the unfused call shows it to the user
            return f"tracing raised {type(e).__name__}: {e}"

    def __call__(self, *args, out=None):
        """__call__(*args, out=None)

        The function's result for these arguments, fused when it can be. With ``out``
        (an array of the result's shape on the same device), the result is written
        into it, cast as an in-place operator casts (same_kind), and out is returned:
        ``step(p, g, lr, out=p)`` updates p in place. out may be one of the arguments
        itself, not a view that overlaps one otherwise."""
        if _core.is_grad_enabled() and any(
                isinstance(a, Array) and a.requires_grad for a in (*args, out)):
            return self._unfused(args, out, "autograd records the unfused operations")
        plan = self._plan(args, out)
        if isinstance(plan, str):
            return self._unfused(args, out, plan)
        try:
            return plan(args, out)
        except Exception as e:  # noqa: BLE001 - the unfused call raises it, or runs
            return self._unfused(args, out, f"{type(e).__name__}: {e}")

    def _unfused(self, args, out, reason):
        _log.debug("%s runs unfused: %s", self.__name__, reason)
        if self._explain and reason not in self._warned:
            self._warned.add(reason)
            warnings.warn(f"gpuarr.fuse: {self.__name__} runs unfused: {reason}",
                          stacklevel=3)
        r = self._fn(*args)
        if out is None:
            return r
        _core.copy(r, out=out)
        return out

    def explain(self, *args, out=None):
        """explain(*args, out=None)

        What a call with these arguments runs: the fused program, one instruction per
        line, or why it runs unfused. Runs nothing."""
        if _core.is_grad_enabled() and any(
                isinstance(a, Array) and a.requires_grad for a in (*args, out)):
            return "unfused: autograd records the unfused operations"
        plan = self._plan(args, out)
        return f"unfused: {plan}" if isinstance(plan, str) else plan.text


def fuse(fn=None, /, *, explain=False):
    """fuse(fn=None, /, *, explain=False)

    ``fn`` with its chain of elementwise operations (arithmetic, comparisons, math
    functions, ``where``, ``clip``, ``astype``) and an optional final ``sum``,
    ``mean``, ``max``, ``min`` or ``prod`` run as one pass over memory on the
    arrays' device: no full-size temporaries on the CPU, one kernel on a GPU (plus
    one for the reduction). A decorator (``@gpuarr.fuse``, ``@gpuarr.fuse(explain=
    True)``) or a call (``gpuarr.fuse(fn)``). The fused function takes ``fn``'s
    positional arguments and ``out=``: an array to write the result into (in
    place when it is one of the arguments: ``step(p, g, lr, out=p)``).

    Results, dtypes, broadcasting and errors are those of ``fn`` run unfused (on
    the CPU bitwise so). ``fn`` is traced once per signature of its arguments
    (array dtypes and ndim, scalar kinds); what cannot be fused (indexing, reading
    values, more than 3 array arguments or 32 operations, autograd recording)
    runs unfused. ``f.explain(*args)`` says which, and why; with ``explain=True``
    each reason is also given once as a warning."""
    if fn is None:
        return lambda f: Fused(f, explain=explain)
    return Fused(fn, explain=explain)
