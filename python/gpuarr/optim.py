"""gpuarr.optim: SGD and Adam, updating parameters in place where they live.

An optimizer holds the parameters it was given (``net.parameters()``: move the model
to its device first) in parameter groups, each with its own hyperparameters. ``step()``
updates each parameter that has a gradient from ``p.grad``, in place (the same Array
object, under ``gpuarr.no_grad()``), on the parameter's own device; the state it keeps
(momentum buffers, Adam's moments) is made there too, so a model spread over several
GPUs is updated on each. A step reads nothing back and waits for nothing: the
hyperparameters and Adam's step count are Python numbers, which travel to the device
inside each operation, as every Python scalar does.

    >>> opt = gpuarr.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    >>> loss = loss_fn(net(X), y)
    >>> opt.zero_grad()
    >>> loss.backward()
    >>> opt.step()
"""
import math

from ._capture import _before_replay, _guard, _paused, _recording
from ._core import Array
from ._creation import empty, zeros_like
from ._fuse import fuse
from .autograd import _clear_grads, no_grad
from .nn._module import moved_to

# The update rules as fused chains (gpuarr.fuse): each a single pass over its arrays,
# where the operators made a temporary per operation; the arithmetic, its order and
# its rounding are those of the operator forms in the comments (bitwise the same).
_add_scaled = fuse(lambda g, x, s: g + s * x)                       # g + s * x
_momentum = fuse(lambda buf, g, mom, damp: buf * mom + (1.0 - damp) * g)
#                                             buf *= mom; buf += (1 - damp) * g
_descend = fuse(lambda p, g, lr: p - lr * g)                        # p -= lr * g
_adam_moment = fuse(lambda m, g, b: m * b + (1.0 - b) * g)          # m *= b; m += (1-b) g
_adam_moment2 = fuse(lambda v, g, b: v * b + (1.0 - b) * (g * g))   # v *= b; v += (1-b) g g
_adam_update = fuse(lambda p, m, v, step, c, eps: p - step * (m / (v.sqrt() / c + eps)))
#                                             p -= step * (m / (sqrt(v) / c + eps))

__all__ = ["Optimizer", "SGD", "Adam"]

_REQUIRED = object()


class _StateByParameter:
    """``optimizer.state[p]``: the state dict of parameter ``p``, found by identity
    (gpuarr arrays compare elementwise and cannot be dict keys)."""

    def __init__(self):
        self._d = {}

    def __getitem__(self, p):
        entry = self._d.get(id(p))
        if entry is None or entry[0] is not p:
            entry = self._d[id(p)] = (p, {})
        return entry[1]

    def __contains__(self, p):
        entry = self._d.get(id(p))
        return entry is not None and entry[0] is p

    def __len__(self):
        return len(self._d)

    def __iter__(self):
        return (p for p, _ in self._d.values())

    def items(self):
        return iter(self._d.values())

    def clear(self):
        self._d.clear()


def _check_params(params, where):
    if isinstance(params, Array):
        raise TypeError(f"{where}: params must be an iterable of arrays (e.g. "
                        "net.parameters() or [w, b]), got a single array: wrap it in a "
                        "list")
    params = list(params)
    for p in params:
        if not isinstance(p, Array):
            raise TypeError(f"{where}: params must be gpuarr arrays, got "
                            f"{type(p).__name__}")
        if not p.is_leaf:
            raise ValueError(f"{where}: cannot optimize an array that is the result of "
                             f"a recorded computation (grad_fn={type(p.grad_fn).__name__});"
                             " optimize the leaves it was computed from")
    return params


class Optimizer:
    """Optimizer(params, defaults)

    Base class: keeps ``param_groups`` (a list of dicts with 'params' and the
    hyperparameters) and ``state`` (per parameter), and implements ``zero_grad``,
    ``add_param_group``, ``state_dict`` and ``load_state_dict``. Subclasses define
    ``step()``."""

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = _StateByParameter()
        self.param_groups = []
        if isinstance(params, Array):
            _check_params(params, type(self).__name__)  # raises: one array, not a list
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list (did the "
                             "model's parameters() iterator run out already?)")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """add_param_group(param_group)

        Add a dict ``{'params': [...], 'lr': ..., ...}``; hyperparameters it does not
        set take the optimizer's defaults. A parameter may belong to one group only."""
        if not isinstance(param_group, dict):
            raise TypeError(f"a parameter group is a dict with 'params', got "
                            f"{type(param_group).__name__}")
        group = dict(param_group)
        group["params"] = _check_params(group.get("params", []), type(self).__name__)
        for k, v in self.defaults.items():
            if v is _REQUIRED and k not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {k}")
            group.setdefault(k, v)
        unknown = set(group) - set(self.defaults) - {"params"}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown hyperparameters "
                            f"{sorted(unknown)} in a parameter group")
        self._check_hyper(group)
        taken = {id(p) for g in self.param_groups for p in g["params"]}
        ids = [id(p) for p in group["params"]]
        if len(set(ids)) != len(ids) or taken & set(ids):
            raise ValueError("some parameters appear more than once (in one group or in "
                             "several); an optimizer updates each parameter once per step")
        self.param_groups.append(group)

    def _check_hyper(self, group):
        pass

    def zero_grad(self, set_to_none=True):
        """zero_grad(set_to_none=True)

        Clear the gradients of every parameter: ``p.grad = None`` (the default, as in
        PyTorch), or with ``set_to_none=False`` fill existing gradients with zeros in
        place, on their devices."""
        _clear_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    def _hyper_token(self):
        """The hyperparameters of every group: a captured step's replay compares them
        with the recording's (a learning-rate schedule records the step again)."""
        return tuple(tuple((k, v) for k, v in g.items() if k != "params")
                     for g in self.param_groups)

    def _with_grad(self):
        """(group, parameter, gradient) for each parameter that has a gradient."""
        for g in self.param_groups:
            for p in g["params"]:
                grad = p.grad
                if grad is not None:
                    yield g, p, grad
                elif moved_to(p) is not None:
                    # the model trains its new parameters; this optimizer would never
                    # see a gradient, and the model would silently not learn
                    raise RuntimeError(
                        f"{type(self).__name__} holds a parameter of a model that was "
                        f"moved to {moved_to(p)!r} after the optimizer was made: moving a "
                        "model makes new parameter arrays on the device (an array cannot "
                        f"change device), so this optimizer would update the old ones on "
                        f"{p.device!r} and the model would not learn. Make the optimizer "
                        "after moving the model: net.to(device), then "
                        f"optim.{type(self).__name__}(net.parameters(), ...)")

    def step(self):
        """step()

        Update every parameter that has a gradient; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} has no step()")

    def state_dict(self):
        """state_dict()

        ``{'state': {i: {...}}, 'param_groups': [{..., 'params': [i, ...]}]}``: the
        hyperparameters of each group and the state of each parameter, parameters
        named by their position over all groups (as PyTorch does). The state's arrays
        are the optimizer's own, on their devices (no copy)."""
        index, groups = {}, []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = []
            for p in g["params"]:
                index[id(p)] = len(index)
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """load_state_dict(state_dict)

        Restore hyperparameters and state saved by ``state_dict()`` (of an optimizer
        over parameters of the same shapes, in the same order); state arrays are copied
        to each parameter's device and dtype."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                len(a["params"]) != len(b["params"])
                for a, b in zip(groups, self.param_groups)):
            raise ValueError("load_state_dict: the saved optimizer has a different number "
                             "of parameter groups or of parameters in a group")
        params = [p for g in self.param_groups for p in g["params"]]
        saved_ids = [i for g in groups for i in g["params"]]
        by_saved = dict(zip(saved_ids, params))
        self.state.clear()
        for i, s in state_dict["state"].items():
            p = by_saved[i]
            mine = self.state[p]
            for k, v in s.items():
                if isinstance(v, Array):
                    if tuple(v.shape) != tuple(p.shape) and v.ndim:
                        raise ValueError(f"load_state_dict: state {k!r} of parameter {i} "
                                         f"has shape {tuple(v.shape)}, the parameter "
                                         f"{tuple(p.shape)}")
                    v = v.to(p.device).astype(p.dtype, copy=True)
                mine[k] = v
        for g, saved in zip(self.param_groups, groups):
            g.update({k: v for k, v in saved.items() if k != "params"})

    def __repr__(self):
        """__repr__()

        The optimizer and each group's hyperparameters."""
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params")
        return "\n".join(lines) + "\n)"


def _nonneg(name, value):
    if not value >= 0.0:
        raise ValueError(f"invalid {name}: {value} (it must be >= 0)")


class SGD(Optimizer):
    """SGD(params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=False)

    Stochastic gradient descent, as PyTorch defines it: with ``g = p.grad +
    weight_decay * p``, a momentum buffer ``b = momentum * b + (1 - dampening) * g``
    (``b = g`` at the first step), ``g = g + momentum * b`` with ``nesterov`` or ``g =
    b`` without, then ``p -= lr * g``; plain ``p -= lr * g`` when momentum is 0. The
    buffer lives on the parameter's device."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def _check_hyper(self, g):
        for k in ("lr", "momentum", "weight_decay"):
            _nonneg(k, g[k])
        if g["nesterov"] and (g["momentum"] <= 0 or g["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def step(self):
        """step()

        One update of every parameter that has a gradient, in place on its device."""
        _guard(self._hyper_token)
        with no_grad():
            for g, p, grad in self._with_grad():
                lr, mom, wd = g["lr"], g["momentum"], g["weight_decay"]
                if wd:
                    grad = _add_scaled(grad, p, wd)
                if mom:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = grad.copy()
                    else:
                        _momentum(buf, grad, mom, g["dampening"], out=buf)
                    grad = _add_scaled(grad, buf, mom) if g["nesterov"] else buf
                _descend(p, grad, lr, out=p)


class Adam(Optimizer):
    """Adam(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0)

    Adam as PyTorch computes it: with ``g = p.grad + weight_decay * p`` and step t,
    ``m = b1 * m + (1 - b1) * g``, ``v = b2 * v + (1 - b2) * g * g``, then
    ``p -= lr / (1 - b1**t) * m / (sqrt(v) / sqrt(1 - b2**t) + eps)``. The moments
    live on the parameter's device; t is a Python int (``state[p]['step']``). In a
    captured step the two bias corrections reach the update as 0-d arrays on the device,
    written before each replay (the same values as the Python numbers, so the same
    bits)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def _check_hyper(self, g):
        for k in ("lr", "eps", "weight_decay"):
            _nonneg(k, g[k])
        betas = tuple(g["betas"])
        if len(betas) != 2 or not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"invalid betas {g['betas']}: two numbers in [0, 1)")
        g["betas"] = betas

    def _advance(self, on_device=True):
        """Each parameter's step count and bias corrections for this step, as Python
        numbers; with ``on_device``, also written into 0-d arrays on the parameter's
        device: what a captured step's replay must redo in Python (gpuarr.capture runs
        this before each replay; the update that reads the arrays is in the plan)."""
        out = []
        for g, p, _ in self._with_grad():
            b1, b2 = g["betas"]
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
            state["step"] += 1
            t = state["step"]
            step_size, bias2_sqrt = g["lr"] / (1.0 - b1 ** t), math.sqrt(1.0 - b2 ** t)
            if on_device:
                if "step_size" not in state:
                    state["step_size"] = empty((), dtype=p.dtype, device=p.device)
                    state["bias2_sqrt"] = empty((), dtype=p.dtype, device=p.device)
                # rounded to the parameter's dtype as the Python number operand is
                state["step_size"][...] = step_size
                state["bias2_sqrt"][...] = bias2_sqrt
                step_size, bias2_sqrt = state["step_size"], state["bias2_sqrt"]
            out.append((step_size, bias2_sqrt))
        return out

    def step(self):
        """step()

        One update of every parameter that has a gradient, in place on its device."""
        _guard(self._hyper_token)
        with no_grad():
            recording = _recording()
            if recording:  # replays write the corrections, the plan reads them
                _before_replay(self._advance)
            with _paused():
                corrections = self._advance(on_device=recording)
            for (g, p, grad), (step_size, bias2_sqrt) in zip(self._with_grad(),
                                                             corrections):
                b1, b2 = g["betas"]
                state = self.state[p]
                if g["weight_decay"]:
                    grad = _add_scaled(grad, p, g["weight_decay"])
                m, v = state["exp_avg"], state["exp_avg_sq"]
                _adam_moment(m, grad, b1, out=m)
                _adam_moment2(v, grad, b2, out=v)
                _adam_update(p, m, v, step_size, bias2_sqrt, g["eps"], out=p)
