"""gpuarr.fuse: fused chains give the unfused chain's results bit for bit, in one
operation (one kernel on CUDA), on every device; what cannot be fused runs unfused
with its reason, and raises what the unfused chain raises."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuarr
from conftest import needs_cuda_devices, to_numpy
from gpuarr.testing import count_kernels, count_work

# the rows of bench/bench_cpu.py's fused table, and what training steps are made of
CHAINS = {
    "exp_mul": (lambda z, y: (z + 2).exp() * y, 2),
    "fma": (lambda a, b, c: a * b + c, 3),
    "hypot": (lambda x, y: gpuarr.sqrt(x * x + y * y), 2),
    "leaky_relu": (lambda x: gpuarr.where(x > 0, x, 0.01 * x), 1),
    "sigmoid": (lambda x: 1 / (1 + gpuarr.exp(-x)), 1),
    "clip_tanh": (lambda x, y: gpuarr.clip(x * y, -1.5, 2).tanh() - x, 2),
    "compare_mix": (lambda x, y: gpuarr.where((x < y) | (x == 0), y - x, x / 4), 2),
    "sgd_step": (lambda w, g, lr: w - lr * g, 2),
}
DTYPES = ["float32", "float64", "int32", "int64"]


def _data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return rng.integers(-9, 10, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def assert_same(fused, unfused):
    """Bitwise equal, NaN where NaN, the same dtype and shape."""
    assert fused.dtype == unfused.dtype
    assert fused.shape == unfused.shape
    f, u = to_numpy(fused), to_numpy(unfused)
    if f.dtype.kind in "fc":
        assert np.array_equal(f, u, equal_nan=True) and np.array_equal(
            np.signbit(f.real), np.signbit(u.real)), (f, u)
    else:
        assert np.array_equal(f, u), (f, u)


def _args(device, dtype, nin, shapes=None, scalar=None):
    shapes = shapes or [(33, 40)] * nin
    args = [gpuarr.asarray(_data(dtype, s, i), device=device) for i, s in enumerate(shapes)]
    return args + ([scalar] if scalar is not None else [])


@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_chain_is_the_unfused_chain_bit_for_bit(device, dtype, name):
    fn, nin = CHAINS[name]
    args = _args(device, dtype, nin, scalar=0.5 if name == "sgd_step" else None)
    f = gpuarr.fuse(fn)
    with np.errstate(all="ignore"):
        want = fn(*args)
        got = f(*args)
    assert got.device == device
    assert_same(got, want)
    assert f.explain(*args).startswith("fused:")


def test_fused_chain_matches_numpy(device):
    x, y = _data("float64", (50,), 1), _data("float64", (50,), 2)
    f = gpuarr.fuse(lambda x, y: gpuarr.sqrt(x * x + y * y) + gpuarr.where(x > 0, x, 0.01 * x))
    got = f(gpuarr.asarray(x, device=device), gpuarr.asarray(y, device=device))
    np.testing.assert_allclose(to_numpy(got), np.hypot(x, y) * 0 + np.sqrt(x * x + y * y)
                               + np.where(x > 0, x, 0.01 * x), rtol=1e-15)


@pytest.mark.parametrize("layout", ["broadcast_row_col", "strided", "transposed", "scalar0d"])
def test_fused_chain_broadcasts_and_reads_views_as_unfused(device, layout):
    rng = np.random.default_rng(5)
    base = gpuarr.asarray(rng.standard_normal((24, 30)).astype("float32"), device=device)
    if layout == "broadcast_row_col":
        a, b = base[:, :1], base[:1, :]
    elif layout == "strided":
        a, b = base[::2, ::3], base[1::2, ::-3]
    elif layout == "transposed":
        a, b = base.T, base.T[::-1]
    else:
        a, b = base, base[3, 4]
    f = gpuarr.fuse(lambda a, b: (a - b) * (a + 1.5))
    assert_same(f(a, b), (a - b) * (a + 1.5))


@pytest.mark.parametrize("mixed", [("int8", "float32"), ("int32", "float64"),
                                   ("bool", "int64"), ("uint8", "int8")])
def test_fused_chain_promotes_and_casts_as_unfused(device, mixed):
    a = gpuarr.asarray(_data("int64", (40,), 1).astype(mixed[0]), device=device)
    b = gpuarr.asarray(_data("int64", (40,), 2).astype(mixed[1]), device=device)
    fn = lambda a, b: (a * b + 3) * 2 - (b > 1).astype(b.dtype)  # noqa: E731
    assert_same(gpuarr.fuse(fn)(a, b), fn(a, b))


def test_fused_chain_is_one_elementwise_operation(device):
    x, y = _args(device, "float32", 2, shapes=[(1000,), (1000,)])
    f = gpuarr.fuse(lambda z, y: (z + 2).exp() * y)
    f(x, y)
    with count_work(device) as w:
        f(x, y)
    assert w[device].elementwise == 1, str(w)
    # a final full reduction: on the CPU and simulated GPUs the chain is reduced as
    # it is made (one operation, no temporary); on CUDA the fused kernel, then the
    # reduction (what the reduction alone does)
    t = (x - 0.25) ** 2
    with count_work(device) as alone:
        want = t.sum()
    g = gpuarr.fuse(lambda x, m: ((x - m) ** 2).sum())
    with count_work(device) as w:
        r = g(x, 0.25)
    on_cuda = device.type == "gpu" and gpuarr._core._gpu_mode()[0] in ("cuda", "emulated")
    assert w[device].elementwise == on_cuda + alone[device].elementwise, str(w)
    assert w[device].reductions == alone[device].reductions == 1, str(w)
    assert_same(r, want)


@pytest.mark.parametrize("red", ["sum", "max", "min", "mean", "prod"])
def test_final_reduction_is_the_unfused_reduction(device, red):
    x = gpuarr.asarray(_data("float32", (12, 9), 3), device=device)
    fn = lambda x: getattr(gpuarr, red)(x * 0.5 + 1, axis=1, keepdims=True)  # noqa: E731
    assert_same(gpuarr.fuse(fn)(x), fn(x))
    fn2 = lambda x: getattr(x * 0.5 + 1, red)()  # noqa: E731
    assert_same(gpuarr.fuse(fn2)(x), fn2(x))


def test_scalar_arguments_are_read_at_each_call(device):
    x = gpuarr.asarray(_data("float32", (20,), 1), device=device)
    calls = []

    def step(w, lr):
        calls.append(1)
        return w - lr * w

    f = gpuarr.fuse(step)
    for lr in (0.5, 0.25, 2.0):
        assert_same(f(x, lr), x - lr * x)
    assert len(calls) == 1  # traced once: the scalar's value is not baked in


def test_python_int_out_of_range_raises_as_unfused(device):
    x = gpuarr.asarray(np.arange(5, dtype="int8"), device=device)
    f = gpuarr.fuse(lambda x, k: x + k)
    assert_same(f(x, 3), x + 3)
    with pytest.raises(OverflowError):
        f(x, 300)
    assert_same(f(x, 4), x + 4)


def test_errors_are_those_of_the_unfused_chain(device):
    x = gpuarr.asarray(_data("float32", (4,), 1), device=device)
    with pytest.raises(TypeError, match="bitwise"):
        gpuarr.fuse(lambda x: x & 1)(x)
    with pytest.raises(ValueError):
        gpuarr.fuse(lambda x, y: x + y)(x, gpuarr.ones(5, device=device))


def test_mixing_devices_raises_device_mismatch(two_gpus):
    a = gpuarr.ones(4, device=two_gpus[0])
    b = gpuarr.ones(4, device=two_gpus[1])
    with pytest.raises(gpuarr.DeviceMismatchError):
        gpuarr.fuse(lambda a, b: a * b + 1)(a, b)


@pytest.mark.parametrize("case", ["branch", "index", "four_arrays", "shape", "returns_input",
                                  "after_reduction", "captured_array", "numpy_data"])
def test_what_cannot_fuse_runs_unfused_with_its_reason(device, case):
    x, y, z, w = _args(device, "float32", 4, shapes=[(6,)] * 4)
    captured = gpuarr.ones(6, device=device)
    fns = {
        "branch": (lambda x: x * 2 if (x > 0).any() else x, (x,), "branches|not elementwise"),
        "index": (lambda x: x[1:] + 1, (x,), "indexes"),
        "four_arrays": (lambda a, b, c, d: a * b + c * d, (x, y, z, w), "more than 3"),
        "shape": (lambda x: x + x.shape[0], (x,), "shape"),
        "returns_input": (lambda x: x, (x,), "unchanged"),
        "after_reduction": (lambda x: x.sum() * 2, (x,), "after its reduction"),
        "captured_array": (lambda x: x * captured, (x,), "did not receive"),
        "numpy_data": (lambda x: x * np.ones(6, "float32"), (x,), "NumPy"),
    }
    fn, args, why = fns[case]
    f = gpuarr.fuse(fn, explain=True)
    text = f.explain(*args)
    assert text.startswith("unfused:")
    assert any(w in text for w in why.split("|")), text
    try:
        want = fn(*args)
    except gpuarr.DeviceMismatchError:  # host data beside a GPU array: raised fused too
        with pytest.raises(gpuarr.DeviceMismatchError), pytest.warns(UserWarning):
            f(*args)
        return
    with pytest.warns(UserWarning, match="runs unfused"):
        got = f(*args)
    if isinstance(want, gpuarr.Array):
        assert_same(got, want)
    else:
        assert got is want or got == want


def test_autograd_sees_the_unfused_operations(device):
    w = gpuarr.asarray(_data("float32", (5,), 1), device=device, requires_grad=True)
    f = gpuarr.fuse(lambda w: (w * w + 1).sum())
    assert "autograd" in f.explain(w)
    loss = f(w)
    loss.backward()
    np.testing.assert_allclose(to_numpy(w.grad), 2 * to_numpy(w.detach()), rtol=1e-6)


def test_decorator_forms_and_name():
    @gpuarr.fuse
    def relu(x):
        """doc"""
        return gpuarr.maximum(x, 0)

    @gpuarr.fuse(explain=True)
    def twice(x):
        return x * 2

    x = gpuarr.asarray([-1.0, 2.0])
    assert relu.__name__ == "relu" and relu.__doc__ == "doc"
    assert to_numpy(relu(x)).tolist() == [0.0, 2.0]
    assert to_numpy(twice(x)).tolist() == [-2.0, 4.0]


@needs_cuda_devices
def test_cuda_runs_a_fused_chain_as_one_kernel():
    d = gpuarr.gpu(0)
    x, y, z = _args(d, "float32", 3, shapes=[(4096,)] * 3)
    f = gpuarr.fuse(lambda a, b, c: gpuarr.where(a > 0, a * b + c, gpuarr.exp(c)) - 1)
    want = (lambda a, b, c: gpuarr.where(a > 0, a * b + c, gpuarr.exp(c)) - 1)(x, y, z)
    f(x, y, z)
    with count_kernels(d) as k:
        got = f(x, y, z)
    assert k.launches == 1 and k.syncs == 0, k
    assert_same(got, want)
    # with a final reduction: one kernel more than the reduction alone launches
    t = x * y
    with count_kernels(d) as alone:
        t.sum()
    r = gpuarr.fuse(lambda a, b: (a * b).sum())
    r(x, y)
    with count_kernels(d) as k:
        r(x, y)
    assert k.launches == 1 + alone.launches and k.syncs == 0, (k, alone)


# --- a differential test over random chains ---------------------------------------

_UN = ["negative", "abs", "exp", "tanh", "sqrt", "square", "sin"]
_BIN = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "less", "greater"]


@st.composite
def _chains(draw):
    """A random expression over inputs a, b, c and small constants: a tuple tree."""
    def expr(depth):
        if depth == 0 or draw(st.integers(0, 3)) == 0:
            return draw(st.sampled_from(["a", "b", "c", 2, 0.5, -1.25, True]))
        kind = draw(st.sampled_from(["un", "bin", "bin", "where", "cast"]))
        if kind == "un":
            return (draw(st.sampled_from(_UN)), expr(depth - 1))
        if kind == "bin":
            return (draw(st.sampled_from(_BIN)), expr(depth - 1), expr(depth - 1))
        if kind == "cast":
            return ("astype", expr(depth - 1), draw(st.sampled_from(["float32", "int32",
                                                                       "float64"])))
        return ("where", ("greater", expr(depth - 1), 0), expr(depth - 1), expr(depth - 1))
    return expr(draw(st.integers(1, 4)))


def _build(tree):
    def ev(t, env):
        if isinstance(t, str):
            return env[t]
        if not isinstance(t, tuple):
            return t
        op, *rest = t
        if op == "astype":
            v = ev(rest[0], env)
            return v.astype(rest[1]) if not isinstance(v, (int, float)) else v
        vals = [ev(r, env) for r in rest]
        if not any(not isinstance(v, (bool, int, float)) for v in vals):
            return vals[0]  # an op of constants alone: Python would not call gpuarr
        return getattr(gpuarr, op)(*vals)
    return lambda a, b, c: ev(tree, {"a": a, "b": b, "c": c})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(tree=_chains(), dts=st.tuples(*[st.sampled_from(["float32", "float64", "int32",
                                                          "int64", "bool"])] * 3))
def test_random_chains_fused_equal_unfused(tree, dts):
    for device in [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(min(gpuarr.num_gpus(), 1))]:
        a, b, c = (gpuarr.asarray(_data("float64", (7, 5), i).astype(dt) if dt != "bool"
                                  else _data("float64", (7, 5), i) > 0, device=device)
                   for i, dt in enumerate(dts))
        fn = _build(tree)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = fn(a, b, c)
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                gpuarr.fuse(fn)(a, b, c)
            continue
        got = gpuarr.fuse(fn)(a, b, c)
        if isinstance(want, gpuarr.Array):
            assert_same(got, want)


# --- out=: in-place updates, as the optimizers make them ---------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_out_updates_an_argument_in_place_as_the_inplace_operators(device, dtype):
    p, g, m = _args(device, dtype, 3, shapes=[(257,)] * 3)
    p2, m2 = p.copy(), m.copy()
    # Adam's first moment and update, as optim.Adam writes them unfused
    m2 *= 0.9
    m2 += (1.0 - 0.9) * g
    p2 -= 0.01 * (m2 / (gpuarr.sqrt(m2 * m2) + 1e-8))
    moment = gpuarr.fuse(lambda m, g, b: m * b + (1.0 - b) * g)
    update = gpuarr.fuse(lambda p, m, lr, eps: p - lr * (m / (gpuarr.sqrt(m * m) + eps)))
    assert moment(m, g, 0.9, out=m) is m
    assert update(p, m, 0.01, 1e-8, out=p) is p
    assert moment.explain(m, g, 0.9, out=m).startswith("fused:")
    assert_same(m, m2)
    assert_same(p, p2)


def test_out_casts_same_kind_and_refuses_what_the_operators_refuse(device):
    x = gpuarr.asarray(_data("float64", (9,), 1), device=device)
    out32 = gpuarr.empty(9, dtype="float32", device=device)
    f = gpuarr.fuse(lambda x: x * 3 + 1)
    f(x, out=out32)
    assert_same(out32, (x * 3 + 1).astype("float32"))
    outi = gpuarr.empty(9, dtype="int32", device=device)
    with pytest.raises(TypeError, match="same_kind"):
        f(x, out=outi)


def test_out_overlapping_an_input_runs_unfused_and_right(device):
    base = gpuarr.asarray(_data("float32", (20,), 1), device=device)
    want = base[:-1] + base[1:] * 2
    f = gpuarr.fuse(lambda a, b: a + b * 2, explain=True)
    with pytest.warns(UserWarning, match="overlaps"):
        f(base[:-1], base[1:], out=base[1:])
    assert_same(base[1:], want)


def test_scalar_arithmetic_is_computed_again_at_each_call(device):
    x = gpuarr.asarray(_data("float32", (30,), 1), device=device)
    f = gpuarr.fuse(lambda x, b, t: x * (1.0 - b) / (1 - b ** t))
    for b, t in ((0.9, 1), (0.5, 3), (0.99, 10)):
        assert_same(f(x, b, t), x * (1.0 - b) / (1 - b ** t))
    assert f.explain(x, 0.9, 2).startswith("fused:")
    # a computed int that leaves the traced integer range: the unfused call decides
    i8 = gpuarr.asarray(np.arange(4, dtype="int8"), device=device)
    g = gpuarr.fuse(lambda x, k: x + k * 100)
    assert_same(g(i8, 1), i8 + 100)
    with pytest.raises(OverflowError):
        g(i8, 2)
    h = gpuarr.fuse(lambda x, b: x * b if b > 0 else x)
    assert "scalar argument's value" in h.explain(x, 0.5)


def _arrays_reachable_from(root):
    """The gpuarr arrays reachable from root through containers and plain objects
    (not through modules, types or functions, which reach everything)."""
    import gc
    import types
    seen, todo, found = set(), [root], []
    while todo:
        o = todo.pop()
        if id(o) in seen or isinstance(o, (types.ModuleType, type, types.FunctionType,
                                           types.BuiltinFunctionType)):
            continue
        seen.add(id(o))
        if isinstance(o, gpuarr.Array):
            found.append(o)
        todo.extend(gc.get_referents(o))
    return found


def test_fused_functions_and_the_module_hold_no_arrays(device):
    """A cached plan (or a module-level cache) that holds an array keeps it alive
    past the interpreter's end, where CI's leak check (.ci/run) fails the run."""
    import gpuarr._fuse as fuse_module
    x, y = _args(device, "float32", 2)
    f = gpuarr.fuse(lambda x, y: ((x - 1.5) * y).sum())
    g = gpuarr.fuse(lambda x, y, s: gpuarr.where(x > 0, x, s * y))
    f(x, y), g(x, y, 0.5), g(x, y, 2)
    assert f.explain(x, y).startswith("fused") and g.explain(x, y, 1.0).startswith("fused")
    for root in (f, g, vars(fuse_module)):
        assert _arrays_reachable_from(root) == []


@pytest.mark.parametrize("red", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("case", ["one", "odd", "chunks", "blocks", "broadcast", "strided"])
def test_full_reduction_made_as_it_runs_is_the_unfused_one_bit_for_bit(device, red, dtype,
                                                                         case):
    # the CPU and simulated GPUs reduce a fused chain's result chunk by chunk as it is
    # made (ga_cpu_reduce_produced): the same chunks, order and blocks as the reduction
    # of the materialised result, so the same bits (sizes around the 1024-element
    # chunk and the 65536-element parallel blocks, broadcast and strided inputs)
    shapes = {"one": [(1,), (1,)], "odd": [(7,), (7,)], "chunks": [(3, 1025), (3, 1025)],
              "blocks": [(2 * 65536 + 17,), (2 * 65536 + 17,)],
              "broadcast": [(301, 1), (1, 500)], "strided": [(2 * 70001,), (70001,)]}[case]
    x, y = _args(device, dtype, 2, shapes=shapes)
    if case == "strided":
        x = x[::2]
    if dtype != "int32":  # products of 10^5 normals: scaled towards 1 to stay finite
        fn = lambda x, y: getattr(gpuarr, red)(x * 0.01 + y * 0.001 + 1)  # noqa: E731
    else:
        fn = lambda x, y: getattr(gpuarr, red)((x - y) % 3 - 1)  # noqa: E731
    f = gpuarr.fuse(fn)
    assert f.explain(x, y).startswith("fused")
    with np.errstate(all="ignore"):
        assert_same(f(x, y), fn(x, y))
    keep = gpuarr.fuse(lambda x, y: getattr(x * y, red)(keepdims=True))
    assert_same(keep(x, y), getattr(x * y, red)(keepdims=True))


@pytest.mark.parametrize("red", ["max", "min", "sum"])
def test_fused_full_reduction_keeps_nan_as_unfused(device, red):
    v = _data("float64", (3000,), 5)
    v[1234] = np.nan
    x = gpuarr.asarray(v, device=device)
    fn = lambda x: getattr(gpuarr, red)(x * 2 - 1)  # noqa: E731
    r = gpuarr.fuse(fn)(x)
    assert_same(r, fn(x))
    assert np.isnan(to_numpy(r))


@pytest.mark.parametrize("red", ["sum", "mean"])
@pytest.mark.parametrize("case", ["one", "lanes", "chunks", "blocks", "strided", "transposed"])
def test_sum_of_squares_is_the_unfused_one_bit_for_bit(device, red, case):
    # a fused x * x of a contiguous float32 x summed (the 2-norm's sum) is squared as the
    # CPU's sum reads x, never stored (ga_cpu_reduce_produced's squares_of); strided and
    # transposed x go through the chunk as every program does. Both must give the bits
    # of the materialised squares summed (this fails if the squares path sums x)
    x = _data("float32", {"one": (1,), "lanes": (97,), "chunks": (3, 1025),
                          "blocks": (2 * 65536 + 17,), "strided": (2 * 3001,),
                          "transposed": (70, 90)}[case], 3) * np.float32(1e3)
    x = gpuarr.asarray(x, device=device)
    x = x[::2] if case == "strided" else x.T if case == "transposed" else x
    fn = {"sum": lambda x: gpuarr.sum(x * x), "mean": lambda x: gpuarr.mean(x * x)}[red]
    f = gpuarr.fuse(fn)
    assert f.explain(x).startswith("fused")
    assert_same(f(x), fn(x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "broadcast", "out",
                                    "all_strided"])
def test_large_chain_computed_in_prefetching_pieces_is_the_unfused_chain(device, dtype,
                                                                          layout):
    # operands of 4 MiB and more and an exp: the CPU runs the exp of each block in
    # pieces and prefetches the next block's lines between them (ga_cpu_fused.c,
    # GA_FUSED_PREFETCH_*), over pool chunks of several blocks; an odd length leaves a
    # last block and a last piece of their own. With no contiguous operand at all
    # (all_strided) there is nothing to prefetch: the exp runs whole (it divided by
    # zero pieces once)
    n = 400_003
    wide = layout in ("strided", "all_strided")
    z = gpuarr.asarray(_data(dtype, (2 * n if layout == "all_strided" else n,), 1) * 3,
                       device=device)
    y = gpuarr.asarray(_data(dtype, (2 * n if wide else n,), 2), device=device)
    z = z[::2] if layout == "all_strided" else z
    y = y[::2] if wide else y[:1] if layout == "broadcast" else y
    fn = lambda z, y: (z + 2).exp() * y  # noqa: E731
    f = gpuarr.fuse(fn)
    assert f.explain(z, y).startswith("fused")
    want = fn(z, y)
    if layout == "out":
        got = f(z, y, out=z)
        assert got is z
    elif layout == "all_strided":
        out = gpuarr.zeros(2 * n, dtype=dtype, device=device)[::2]
        got = f(z, y, out=out)
        assert got is out
    else:
        got = f(z, y)
    assert_same(got, want)
