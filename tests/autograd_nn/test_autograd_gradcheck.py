"""Every differentiable operation against finite differences, in float64, on every
device; and the same gradients on a GPU as on the CPU.

Each case is a function of float64 arrays (made from NumPy inputs drawn in the
operation's domain, away from its kinks). The gradient autograd gives for
sum(f(x) * w), w fixed and random, must match the central differences
(f(x + eps) - f(x - eps)) / 2 eps of the same sum element by element; on a GPU it must
also match the CPU's gradient. Shapes are tiny: the emulated CUDA mode runs every
kernel on fibers."""
import numpy as np
import pytest

import gpuarr
import gpuarr.nn.functional as F
from gpuarr import autograd

EPS = 1e-6


def _u(lo, hi):
    return ("uniform", lo, hi)


STD = _u(-2.0, 2.0)
POS = _u(0.5, 2.0)
UNIT = _u(-0.8, 0.8)


class Case:
    def __init__(self, name, fn, *specs, consts=None):
        self.name = name
        self.fn = fn  # fn(c, *xs): c is the dict of constants on the device
        self.specs = specs  # per input: (shape, domain)
        self.consts = consts or {}

    def __repr__(self):
        return self.name


def _draw(spec, rng):
    shape, (kind, lo, hi) = spec
    x = rng.uniform(lo, hi, size=shape)
    return x


def _distinct(shape, rng):
    """Values far apart (no ties for max/min/maximum, no kinks for abs)."""
    n = int(np.prod(shape))
    v = (rng.permutation(n) - n / 2.0 + 0.5) * 0.37
    return ("values", v.reshape(shape))


def _const(name, c):
    return c[name]


UNARY = {
    "negative": STD, "positive": STD, "abs": _u(0.3, 2.0), "sqrt": POS, "square": STD,
    "reciprocal": POS, "exp": STD, "expm1": STD, "exp2": STD, "log": POS, "log1p": POS,
    "log2": POS, "log10": POS, "sin": STD, "cos": STD, "tan": UNIT, "asin": UNIT,
    "acos": UNIT, "atan": STD, "sinh": STD, "cosh": STD, "tanh": STD, "asinh": STD,
    "acosh": _u(1.5, 3.0), "atanh": UNIT, "conj": STD, "real": STD,
}
BINARY = {
    "add": (STD, STD), "subtract": (STD, STD), "multiply": (STD, STD),
    "divide": (STD, POS), "pow": (POS, STD), "remainder": (_u(0.1, 0.9), _u(1.1, 2.0)),
    "atan2": (STD, POS), "hypot": (STD, STD), "copysign": (_u(0.3, 2.0), STD),
    "logaddexp": (STD, STD),
}

# gpuarr.special's formulas (PyTorch's), in the domains where each is smooth;
# tests/core/test_special.py checks the same gradients against SciPy's values
SPECIAL_UNARY = {
    "erf": STD, "erfc": STD, "erfinv": UNIT, "erfcx": _u(-1.0, 3.0), "ndtr": STD,
    "ndtri": _u(0.1, 0.9), "log_ndtr": _u(-4.0, 2.0), "expit": STD, "logit": _u(0.1, 0.9),
    "entr": _u(0.2, 2.0), "gammaln": _u(0.5, 4.0), "i0": STD, "i0e": _u(0.3, 2.0),
    "i1": STD, "i1e": _u(0.3, 2.0), "sinc": _u(0.2, 0.8), "digamma": _u(0.5, 4.0),
    "loggamma": _u(0.5, 4.0),
    "j0": STD, "j1": STD, "y0": POS, "y1": POS, "k0": POS, "k0e": POS, "k1": POS,
    "k1e": POS,
}
SPECIAL_BINARY = {  # only the operands PyTorch differentiates vary: the others are fixed
    "xlogy": (STD, POS), "xlog1py": (STD, POS),
    "gammainc": (POS, POS), "gammaincc": (POS, POS), "zeta": (POS, POS),
}


def _cases():
    cs = []
    for name, dom in SPECIAL_UNARY.items():
        cs.append(Case(name, lambda c, x, f=getattr(gpuarr.special, name): f(x),
                       ((2, 3), dom)))
    for name, (d1, d2) in SPECIAL_BINARY.items():
        f = getattr(gpuarr.special, name)
        if name.startswith("gammainc"):  # no gradient in a (PyTorch has none either)
            cs.append(Case(name, lambda c, x, f=f: f(c["a"], x), ((2, 3), d2),
                           consts={"a": np.array([[0.7, 1.5, 3.0]])}))
        elif name == "zeta":  # in q only (PyTorch has none in x either)
            cs.append(Case(name, lambda c, q, f=f: f(c["x"], q), ((2, 3), d2),
                           consts={"x": np.array([[1.5, 2.0, 4.5]])}))
        else:
            cs.append(Case(name, lambda c, x, y, f=f: f(x, y), ((2, 3), d1), ((2, 3), d2)))
    for name, dom in UNARY.items():
        cs.append(Case(name, lambda c, x, f=getattr(gpuarr, name): f(x), ((2, 3), dom)))
    for name, (d1, d2) in BINARY.items():
        f = getattr(gpuarr, name)
        cs.append(Case(name, lambda c, x, y, f=f: f(x, y), ((2, 3), d1), ((2, 3), d2)))
        cs.append(Case(name + "-broadcast", lambda c, x, y, f=f: f(x, y), ((2, 3), d1),
                       ((3,), d2)))
        cs.append(Case(name + "-broadcast-col", lambda c, x, y, f=f: f(x, y), ((2, 1), d1),
                       ((1, 3), d2)))
    cs += [
        Case("maximum", lambda c, x, y: gpuarr.maximum(x, y), ((2, 3), STD), ((2, 3), STD)),
        Case("minimum", lambda c, x, y: gpuarr.minimum(x, y), ((2, 3), STD), ((3,), STD)),
        # operators, and Python scalars on either side
        Case("x+y", lambda c, x, y: x + y, ((2, 3), STD), ((3,), STD)),
        Case("x-y", lambda c, x, y: x - y, ((2, 3), STD), ((2, 1), STD)),
        Case("x*y", lambda c, x, y: x * y, ((2, 3), STD), ((2, 3), STD)),
        Case("x/y", lambda c, x, y: x / y, ((2, 3), STD), ((2, 3), POS)),
        Case("x**y", lambda c, x, y: x ** y, ((2, 3), POS), ((2, 3), STD)),
        Case("x%y", lambda c, x, y: x % y, ((2, 3), _u(0.1, 0.9)), ((2, 3), _u(1.1, 2.0))),
        Case("-x", lambda c, x: -x, ((2, 3), STD)),
        Case("+x", lambda c, x: +x, ((2, 3), STD)),
        Case("abs(x)", lambda c, x: abs(x), ((2, 3), _u(0.3, 2.0))),
        Case("x*2", lambda c, x: x * 2.0, ((2, 3), STD)),
        Case("2-x", lambda c, x: 2.0 - x, ((2, 3), STD)),
        Case("1/x", lambda c, x: 1.0 / x, ((2, 3), POS)),
        Case("x**3", lambda c, x: x ** 3, ((2, 3), STD)),
        Case("x**0", lambda c, x: x ** 0.0, ((2, 3), STD)),
        Case("2**x", lambda c, x: 2.0 ** x, ((2, 3), STD)),
        Case("x**0.5", lambda c, x: x ** 0.5, ((2, 3), POS)),
        Case("x*x", lambda c, x: x * x, ((2, 3), STD)),  # one input, two edges
        Case("where", lambda c, x, y: gpuarr.where(c["mask"], x, y), ((2, 3), STD),
             ((3,), STD), consts={"mask": np.array([[True, False, True],
                                                    [False, False, True]])}),
        Case("where-scalar", lambda c, x: gpuarr.where(c["mask"], x, 0.5), ((2, 3), STD),
             consts={"mask": np.array([True, False, True])}),
        Case("clip", lambda c, x: gpuarr.clip(x, -0.5, 0.7),
             ((2, 3), ("values", np.array([[-1.2, -0.3, 0.1], [0.4, 0.9, 1.5]])))),
        Case("clip-arrays", lambda c, x, lo, hi: gpuarr.clip(x, lo, hi),
             ((2, 3), ("values", np.array([[-1.2, -0.3, 0.1], [0.4, 0.9, 1.5]]))),
             ((3,), ("values", np.array([-0.5, -0.8, 0.2]))),
             ((2, 1), ("values", np.array([[0.6], [1.0]])))),
        Case("clip-min", lambda c, x: gpuarr.clip(x, min=0.0),
             ((2, 3), ("values", np.array([[-1.2, -0.3, 0.1], [0.4, 0.9, 1.5]])))),
        Case("x.clip", lambda c, x: x.clip(max=0.2),
             ((2, 3), ("values", np.array([[-1.2, -0.3, 0.1], [0.4, 0.9, 1.5]])))),
        Case("astype", lambda c, x: gpuarr.astype(x, gpuarr.float64), ((2, 3), STD)),
        # reductions
        Case("sum", lambda c, x: gpuarr.sum(x), ((2, 3), STD)),
        Case("sum-axis", lambda c, x: gpuarr.sum(x, axis=1), ((2, 3), STD)),
        Case("sum-keepdims", lambda c, x: x.sum(axis=0, keepdims=True), ((2, 3), STD)),
        Case("sum-axes", lambda c, x: gpuarr.sum(x, axis=(0, 2)), ((2, 3, 2), STD)),
        Case("sum-0d", lambda c, x: gpuarr.sum(x), ((), STD)),
        Case("mean", lambda c, x: gpuarr.mean(x, axis=-1), ((2, 3), STD)),
        Case("mean-all", lambda c, x: x.mean(), ((2, 3), STD)),
        Case("prod", lambda c, x: gpuarr.prod(x, axis=1), ((2, 3), STD)),
        Case("prod-zero", lambda c, x: gpuarr.prod(x),
             ((2, 3), ("values", np.array([[0.0, 1.5, -0.7], [1.2, 0.8, 2.0]])))),
        Case("prod-axes-keep", lambda c, x: gpuarr.prod(x, axis=(0, 2), keepdims=True),
             ((2, 2, 2), STD)),
        Case("max", lambda c, x: gpuarr.max(x, axis=0), _distinct_spec((2, 3))),
        Case("max-all", lambda c, x: x.max(), _distinct_spec((2, 3))),
        Case("min", lambda c, x: gpuarr.min(x, axis=1, keepdims=True), _distinct_spec((2, 3))),
        Case("var", lambda c, x: gpuarr.var(x, axis=1), ((2, 3), STD)),
        Case("var-ddof", lambda c, x: gpuarr.var(x, correction=1), ((2, 3), STD)),
        Case("std", lambda c, x: gpuarr.std(x, axis=0, keepdims=True), ((2, 3), STD)),
        Case("std-ddof", lambda c, x: x.std(ddof=1), ((2, 3), STD)),
        Case("logsumexp", lambda c, x: gpuarr.logsumexp(x, axis=1), ((2, 3), STD)),
        Case("logsumexp-all", lambda c, x: gpuarr.logsumexp(x, keepdims=True), ((2, 3), STD)),
        Case("cumulative_sum", lambda c, x: gpuarr.cumulative_sum(x, axis=1), ((2, 3), STD)),
        Case("cumulative_sum-initial", lambda c, x: gpuarr.cumulative_sum(
            x, axis=0, include_initial=True), ((2, 3), STD)),
        Case("vector_norm", lambda c, x: gpuarr.linalg.vector_norm(x, axis=1), ((2, 3), STD)),
        Case("vector_norm-1", lambda c, x: gpuarr.linalg.vector_norm(x, ord=1),
             ((2, 3), _u(0.2, 2.0))),
        Case("vector_norm-inf", lambda c, x: gpuarr.linalg.vector_norm(
            x, ord=float("inf"), axis=0), _distinct_spec((2, 3))),
        Case("vector_norm-3", lambda c, x: gpuarr.linalg.vector_norm(x, ord=3), ((2, 3), STD)),
        # products
        Case("matmul", lambda c, x, y: x @ y, ((2, 3), STD), ((3, 4), STD)),
        Case("matmul-fn", lambda c, x, y: gpuarr.matmul(x, y), ((2, 3), STD), ((3, 2), STD)),
        Case("matmul-vec-mat", lambda c, x, y: x @ y, ((3,), STD), ((3, 2), STD)),
        Case("matmul-mat-vec", lambda c, x, y: x @ y, ((2, 3), STD), ((3,), STD)),
        Case("matmul-vec-vec", lambda c, x, y: x @ y, ((3,), STD), ((3,), STD)),
        Case("matmul-batch", lambda c, x, y: x @ y, ((2, 2, 3), STD), ((3, 2), STD)),
        Case("matmul-batch-broadcast", lambda c, x, y: x @ y, ((2, 1, 2, 3), STD),
             ((3, 3, 2), STD)),
        Case("matmul-vec-batch", lambda c, x, y: x @ y, ((3,), STD), ((2, 3, 2), STD)),
        Case("tensordot", lambda c, x, y: gpuarr.tensordot(x, y, axes=1), ((2, 3), STD),
             ((3, 2), STD)),
        Case("tensordot-2", lambda c, x, y: gpuarr.tensordot(x, y), ((2, 3, 2), STD),
             ((3, 2, 2), STD)),
        Case("tensordot-lists", lambda c, x, y: gpuarr.tensordot(x, y, axes=([0, 2], [2, 0])),
             ((2, 3, 2), STD), ((2, 4, 2), STD)),
        Case("vecdot", lambda c, x, y: gpuarr.vecdot(x, y), ((2, 3), STD), ((3,), STD)),
        Case("vecdot-axis0", lambda c, x, y: gpuarr.vecdot(x, y, axis=0), ((2, 3), STD),
             ((2, 3), STD)),
        # shapes
        Case("reshape", lambda c, x: gpuarr.reshape(x, (3, 2)), ((2, 3), STD)),
        Case("x.reshape", lambda c, x: x.reshape(6) * x.reshape(6)[::-1], ((2, 3), STD)),
        Case("permute_dims", lambda c, x: gpuarr.permute_dims(x, (2, 0, 1)), ((2, 3, 2), STD)),
        Case(".T", lambda c, x: x.T @ x, ((2, 3), STD)),
        Case(".mT", lambda c, x: x.mT, ((2, 2, 3), STD)),
        Case("expand_dims", lambda c, x: gpuarr.expand_dims(x, axis=1), ((2, 3), STD)),
        Case("squeeze", lambda c, x: gpuarr.squeeze(x, axis=1), ((2, 1, 3), STD)),
        Case("broadcast_to", lambda c, x: gpuarr.broadcast_to(x, (2, 2, 3)), ((2, 1, 3), STD)),
        Case("concat", lambda c, x, y: gpuarr.concat([x, y, x], axis=1), ((2, 3), STD),
             ((2, 1), STD)),
        Case("concat-none", lambda c, x, y: gpuarr.concat([x, y], axis=None), ((2, 3), STD),
             ((3,), STD)),
        Case("stack", lambda c, x, y: gpuarr.stack([x, y], axis=1), ((2, 3), STD),
             ((2, 3), STD)),
        Case("flip", lambda c, x: gpuarr.flip(x), ((2, 3), STD)),
        Case("flip-axis", lambda c, x: gpuarr.flip(x, axis=1), ((2, 3), STD)),
        Case("moveaxis", lambda c, x: gpuarr.moveaxis(x, 0, -1), ((2, 3, 2), STD)),
        Case("swapaxes", lambda c, x: gpuarr.swapaxes(x, 0, 1), ((2, 3), STD)),
        Case("ravel", lambda c, x: x.T.ravel(), ((2, 3), STD)),
        Case("flatten", lambda c, x: x.flatten(), ((2, 3), STD)),
        # indexing
        Case("x[1:, ::2]", lambda c, x: x[1:, ::2], ((3, 3), STD)),
        Case("x[0]", lambda c, x: x[0], ((2, 3), STD)),
        Case("x[..., None]", lambda c, x: x[..., None, 1], ((2, 3), STD)),
        Case("x[-1, 2]", lambda c, x: x[-1, 2], ((2, 3), STD)),
        Case("x[idx]", lambda c, x: x[c["idx"]], ((4,), STD),
             consts={"idx": np.array([2, 0, 2, 3, 2])}),  # repeated indices add up
        Case("x[idx, idx]", lambda c, x: x[c["i"], c["j"]], ((2, 3), STD),
             consts={"i": np.array([0, 1, 1, 0]), "j": np.array([2, 0, 0, 2])}),
        Case("x[:, idx]", lambda c, x: x[:, c["idx"]], ((2, 3), STD),
             consts={"idx": np.array([[1, 1], [0, 2]])}),
        Case("x[list]", lambda c, x: x[[1, 1, 0]], ((2, 3), STD)),
        Case("x[mask]", lambda c, x: x[c["mask"]], ((2, 3), STD),
             consts={"mask": np.array([[True, False, True], [False, True, True]])}),
        Case("x[rowmask]", lambda c, x: x[c["mask"]], ((3, 2), STD),
             consts={"mask": np.array([True, False, True])}),
        Case("x[:, mask]", lambda c, x: x[:, c["mask"]], ((2, 3), STD),
             consts={"mask": np.array([True, False, True])}),
        Case("x[..., mask, None]", lambda c, x: x[..., c["mask"], None], ((2, 2, 3), STD),
             consts={"mask": np.array([[True, False, True], [False, True, True]])}),
        Case("x[nomask]", lambda c, x: x[c["mask"]] * 2.0, ((2, 3), STD),
             consts={"mask": np.zeros((2, 3), bool)}),
        Case("take", lambda c, x: gpuarr.take(x, c["idx"], axis=1), ((2, 3), STD),
             consts={"idx": np.array([2, 2, 0])}),
        Case("take-flat", lambda c, x: gpuarr.take(x, c["idx"]), ((2, 3), STD),
             consts={"idx": np.array([5, 0, 5])}),
        # moves between devices on one device (the cross-device cases are below)
        Case("copyto-self", lambda c, x: x.copyto(x.device), ((2, 3), STD)),
        Case("copy", lambda c, x: gpuarr.copy(x) * x, ((2, 3), STD)),
        # NumPy's functions on gpuarr arrays record as gpuarr's
        Case("np.exp", lambda c, x: np.exp(x), ((2, 3), STD)),
        Case("np.sum", lambda c, x: np.sum(x * x, axis=0), ((2, 3), STD)),
        Case("np.matmul", lambda c, x, y: np.matmul(x, y), ((2, 3), STD), ((3, 2), STD)),
        # nn.functional's composites that record one node each; matmul of a transposed
        # operand, which computes its gradient in the operand's layout
        Case("relu", lambda c, x: F.relu(x), _distinct_spec((2, 3))),
        Case("log_softmax", lambda c, x: F.log_softmax(x, dim=1), ((2, 3), STD)),
        Case("log_softmax-dim0", lambda c, x: F.log_softmax(x, dim=0), ((2, 3), STD)),
        Case("nll_loss", lambda c, x: F.cross_entropy(x, c["t"]), ((3, 4), STD),
             consts={"t": np.array([0, 3, 3])}),
        Case("nll_loss-weighted-sum", lambda c, x: F.cross_entropy(
            x, c["t"], c["w"], ignore_index=1, reduction="sum"), ((3, 4), STD),
             consts={"t": np.array([2, 1, 0]), "w": np.array([0.5, 2.0, 1.0, 3.0])}),
        Case("nll_loss-none", lambda c, x: F.cross_entropy(x, c["t"], reduction="none"),
             ((3, 4), STD), consts={"t": np.array([1, 0, 3])}),
        Case("nll_loss-one", lambda c, x: F.cross_entropy(x, c["t"], reduction="none"),
             ((4,), STD), consts={"t": np.array(2)}),
        Case("matmul-transposed", lambda c, x, w: x @ w.T, ((2, 3), STD), ((4, 3), STD)),
        Case("matmul-transposed-left", lambda c, w, y: w.T @ y, ((3, 2), STD),
             ((3, 4), STD)),
        # a small network: the ops a training step uses, together
        Case("mlp", lambda c, x, w1, w2: gpuarr.mean(gpuarr.logsumexp(
            gpuarr.maximum(x @ w1, 0.0) @ w2, axis=1)), ((4, 3), STD),
            ((3, 5), _u(0.1, 1.0)), ((5, 2), STD)),
    ]
    return cs


def _distinct_spec(shape):
    rng = np.random.default_rng(7)
    return (shape, _distinct(shape, rng))


CASES = _cases()


def _inputs(case, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dom in case.specs:
        if dom[0] == "values":
            out.append(np.array(dom[1], dtype=np.float64).reshape(shape))
        else:
            out.append(rng.uniform(dom[1], dom[2], size=shape))
    return out


def _gradients(case, device, xs_np, w):
    c = {k: gpuarr.asarray(v, device=device) for k, v in case.consts.items()}
    xs = [gpuarr.asarray(a, device=device, requires_grad=True) for a in xs_np]
    out = case.fn(c, *xs)
    assert out.requires_grad and out.grad_fn is not None, case.name
    assert out.device == device
    (out * gpuarr.asarray(w, device=device)).sum().backward()
    for x in xs:
        assert x.grad is not None and x.grad.device == device
        assert x.grad.shape == x.shape and x.grad.dtype == gpuarr.float64
    return [x.grad.numpy() for x in xs]


def _numeric(case, device, xs_np, w):
    c = {k: gpuarr.asarray(v, device=device) for k, v in case.consts.items()}

    def f(arrays):
        with gpuarr.no_grad():
            out = case.fn(c, *[gpuarr.asarray(a, device=device) for a in arrays])
        return float((out.numpy() * w).sum())

    grads = []
    for k, a in enumerate(xs_np):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi = [v.copy() for v in xs_np]
            lo = [v.copy() for v in xs_np]
            hi[k][idx] += EPS
            lo[k][idx] -= EPS
            g[idx] = (f(hi) - f(lo)) / (2 * EPS)
        grads.append(g)
    return grads


def _weights(case, device, xs_np):
    c = {k: gpuarr.asarray(v, device=device) for k, v in case.consts.items()}
    with gpuarr.no_grad():
        shape = case.fn(c, *[gpuarr.asarray(a, device=device) for a in xs_np]).shape
    return np.random.default_rng(1).uniform(0.5, 1.5, size=shape)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_gradient_matches_finite_differences(case, device):
    xs_np = _inputs(case)
    w = _weights(case, device, xs_np)
    analytic = _gradients(case, device, xs_np, w)
    numeric = _numeric(case, device, xs_np, w)
    for k, (a, n) in enumerate(zip(analytic, numeric)):
        np.testing.assert_allclose(a, n, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{case.name}: input {k}")
    if device != gpuarr.cpu():  # the same gradient as on the CPU, in float64
        on_cpu = _gradients(case, gpuarr.cpu(), xs_np, w)
        for k, (a, b) in enumerate(zip(analytic, on_cpu)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13,
                                       err_msg=f"{case.name}: input {k}, {device} vs cpu")


def test_every_primitive_of_the_table_has_a_case():
    names = {c.name.split("-")[0] for c in CASES}
    covered = {"x+y": "add", "-x": "negative", ".T": "permute_dims", "x.reshape": "reshape",
               "x[idx]": "getitem", "copyto": "to", "flip": "flip",
               "copy": "copy", "cumulative_sum": "cumsum"}
    names |= {covered.get(n, n) for n in names}
    missing = {name for name in autograd._F if name not in names}
    assert not missing, f"formulas without a gradient check: {sorted(missing)}"
