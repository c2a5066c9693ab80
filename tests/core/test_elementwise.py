"""Every elementwise op against NumPy, over every dtype, on every device."""
import warnings

import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES, to_numpy

UNARY = [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil",
    "conj", "cos", "cosh", "exp", "exp2", "expm1", "floor", "isfinite", "isinf", "isnan",
    "log", "log1p", "log2", "log10", "logical_not", "negative", "positive", "reciprocal",
    "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc",
]
BINARY = [
    "add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "copysign", "divide", "equal", "floor_divide",
    "greater", "greater_equal", "hypot", "less", "less_equal", "logaddexp", "logical_and",
    "logical_or", "logical_xor", "maximum", "minimum", "multiply", "nextafter",
    "not_equal", "pow", "remainder", "subtract",
]
EXACT = {
    "abs", "bitwise_invert", "ceil", "conj", "floor", "isfinite", "isinf", "isnan",
    "logical_not", "negative", "positive", "round", "sign", "signbit", "trunc", "square",
    "reciprocal", "add", "subtract", "multiply", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "maximum", "minimum", "floor_divide", "remainder", "copysign",
    "nextafter", "pow",
}


def rtol_for(dtype):
    return {"float16": 2e-3, "float32": 2e-5, "complex64": 2e-5}.get(str(dtype), 1e-11)


def sample(dtype, op="", second=False):
    """Small values inside every op's domain (plus a negative where it is allowed)."""
    rng = np.random.default_rng(7 if second else 3)
    if dtype == "bool":
        return np.array([True, False, True, True, False, False])
    if dtype.startswith(("int", "uint")):
        hi = 6 if op in ("pow", "bitwise_left_shift", "bitwise_right_shift") else 20
        lo = 0 if (dtype.startswith("u") or op in ("pow", "bitwise_left_shift",
                                                   "bitwise_right_shift")) else -20
        return rng.integers(lo, hi, size=6).astype(dtype)
    if op == "acosh":
        base = rng.uniform(1.1, 3.0, size=6)
    elif op in ("acos", "asin", "atanh", "pow", "log", "log2", "log10", "sqrt"):
        base = rng.uniform(0.1, 0.9, size=6)
    else:
        base = rng.uniform(-3, 3, size=6)
    if dtype.startswith("complex"):
        base = base + 1j * rng.uniform(-0.9, 0.9, size=6)
    return base.astype(dtype)


def numpy_fn(name):
    return {"conj": np.conjugate, "pow": np.power, "round": np.round}.get(
        name, getattr(np, name))


def expect(name, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return numpy_fn(name)(*args)


def check(name, got, want, complex_input=False):
    got_np = to_numpy(got)
    assert got_np.dtype == want.dtype, (name, got_np.dtype, want.dtype)
    exact = name in EXACT and not complex_input and name != "pow"
    if exact or want.dtype.kind in "biu?":
        np.testing.assert_array_equal(got_np, want)
    else:
        np.testing.assert_allclose(got_np, want, rtol=rtol_for(want.dtype), atol=1e-6
                                   if want.dtype.itemsize > 2 else 1e-3)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_numpy(device, name, dtype):
    a = sample(dtype, name)
    x = gpuarr.asarray(a, device=device)
    try:
        want = expect(name, a)
    except TypeError:
        with pytest.raises(TypeError):
            getattr(gpuarr, name)(x)
        return
    if name == "reciprocal" and want.dtype.kind in "iu":
        # NumPy's integer 1/0 is C's cast of inf to an integer, undefined: 0 on x86-64,
        # -1 on aarch64; gpuarr's is 0 on every platform
        want = np.where(a == 0, 0, want).astype(want.dtype)
    got = getattr(gpuarr, name)(x)
    assert got.device == device
    check(name, got, want, dtype.startswith("complex"))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_numpy(device, name, dtype):
    a, b = sample(dtype, name), sample(dtype, name, second=True)
    if name in ("floor_divide", "remainder", "divide") and dtype != "bool":
        b = np.where(b == 0, b.dtype.type(3), b) if dtype[0] in "iu" else b
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    try:
        want = expect(name, a, b)
    except TypeError:
        with pytest.raises(TypeError):
            getattr(gpuarr, name)(x, y)
        return
    check(name, getattr(gpuarr, name)(x, y), want, dtype.startswith("complex"))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_real_and_imag_match_numpy(device, dtype):
    a = sample(dtype)
    x = gpuarr.asarray(a, device=device)
    np.testing.assert_array_equal(x.real.numpy(), np.real(a))
    np.testing.assert_array_equal(x.imag.numpy(), np.imag(a))
    assert x.real.dtype == gpuarr.asarray(np.real(a)).dtype


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if not d.startswith("complex")])
def test_clip_and_where_match_numpy(device, dtype):
    a, lo, hi = sample(dtype), sample(dtype, second=True), sample(dtype)
    x = gpuarr.asarray(a, device=device)
    got = gpuarr.clip(x, gpuarr.asarray(np.minimum(lo, hi), device=device),
                      gpuarr.asarray(np.maximum(lo, hi), device=device))
    np.testing.assert_array_equal(got.numpy(), np.clip(a, np.minimum(lo, hi),
                                                       np.maximum(lo, hi)))
    cond = np.array([True, False] * 3)
    got = gpuarr.where(gpuarr.asarray(cond, device=device), x,
                       gpuarr.asarray(lo, device=device))
    np.testing.assert_array_equal(got.numpy(), np.where(cond, a, lo))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_where_matches_numpy_on_random_conditions_scalars_and_strided_views(device, dtype):
    # a random condition (the CPU's select has no branch to get right by luck), each
    # operand a scalar or a view with steps, complex128's 16 bytes in two halves
    rng = np.random.default_rng(3)
    cond = rng.random((5, 37)) < 0.5
    a = (rng.standard_normal((5, 74)) * 50).astype(dtype)[:, ::2]
    b = (rng.standard_normal((5, 37)) * 50).astype(dtype)
    if dtype.startswith("complex"):
        a = a + 1j * a[::-1]
        b = b - 2j * b
    c = gpuarr.asarray(cond, device=device)
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    s = a.dtype.type(7)
    np.testing.assert_array_equal(gpuarr.where(c, x, y).numpy(), np.where(cond, a, b))
    np.testing.assert_array_equal(gpuarr.where(c, x, gpuarr.asarray(s, device=device))
                                  .numpy(), np.where(cond, a, s))
    np.testing.assert_array_equal(gpuarr.where(c, gpuarr.asarray(s, device=device), y)
                                  .numpy(), np.where(cond, s, b))
    np.testing.assert_array_equal(gpuarr.where(c[:, ::3], x[:, ::3], y.T[::3].T).numpy(),
                                  np.where(cond[:, ::3], a[:, ::3], b.T[::3].T))
    np.testing.assert_array_equal(gpuarr.where(c.T, x.T, y.T).numpy(),
                                  np.where(cond.T, a.T, b.T))


def test_clip_with_one_bound_and_nan(device):
    a = np.array([-2.0, np.nan, 0.5, 7.0], np.float32)
    x = gpuarr.asarray(a, device=device)
    np.testing.assert_array_equal(gpuarr.clip(x, 0, 1).numpy(), np.clip(a, 0, 1))
    np.testing.assert_array_equal(gpuarr.clip(x, max=1.0).numpy(), np.clip(a, None, 1))
    np.testing.assert_array_equal(x.clip(min=0).numpy(), np.clip(a, 0, None))


def test_clip_of_complex_is_a_type_error(device):
    with pytest.raises(TypeError, match="clip"):
        gpuarr.clip(gpuarr.asarray(np.ones(2, np.complex64), device=device), 0, 1)


def test_textbook_exp_chain_in_float32(device):
    z = gpuarr.asarray(gpuarr.array([1.0, 2.0, 3.0]), device=device) \
        if device == gpuarr.cpu() else gpuarr.array([1.0, 2.0, 3.0]).to(device)
    y = z
    r = (z + 2).exp() * y
    assert r.dtype == gpuarr.float32
    np.testing.assert_allclose(r.numpy(), [20.085537, 109.1963, 445.2395], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint64"])
def test_integer_division_by_zero_is_zero(device, dtype):
    a = np.array([7, 0, 5, 3], dtype)
    b = np.array([0, 0, 2, 0], dtype)
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    np.testing.assert_array_equal((x // y).numpy(), [0, 0, 2, 0])
    np.testing.assert_array_equal((x % y).numpy(), [0, 0, 1, 0])


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_int_min_floor_divided_by_minus_one_wraps(device, dtype):
    lo = np.iinfo(dtype).min
    a = np.array([lo, lo, -7, 7], dtype)
    b = np.array([-1, 3, 2, -2], dtype)
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # NumPy everywhere, also where the array API standard says floor(a / b) and
        # NumPy's divmod says otherwise (inf // 2 is NaN; issue 31)
        want = a // b
        np.testing.assert_array_equal((x // y).numpy(), want)
        np.testing.assert_array_equal((x % y).numpy(), a % b)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16", "uint64"])
def test_shifts_beyond_the_bit_width_follow_numpy(device, dtype):
    bits = np.dtype(dtype).itemsize * 8
    signed = dtype.startswith("int")
    a = np.array([1, 5, -8 if signed else 8, 3], dtype)
    s = np.array([bits, bits + 3, bits, 1], dtype)
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(s, device=device)
    np.testing.assert_array_equal((x << y).numpy(), np.left_shift(a, s))
    np.testing.assert_array_equal((x >> y).numpy(), np.right_shift(a, s))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_floor_divide_and_remainder_follow_python_signs(device, dtype):
    a = np.array([7, -7, 7, -7, 1, -1, 0, 5.5, np.inf], dtype)
    b = np.array([2, 2, -2, -2, np.inf, np.inf, -3, 0, 2], dtype)
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # NumPy everywhere, also where the array API standard says floor(a / b) and
        # NumPy's divmod says otherwise (inf // 2 is NaN; issue 31)
        want = a // b
        np.testing.assert_array_equal((x // y).numpy(), want)
        np.testing.assert_array_equal((x % y).numpy(), a % b)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_maximum_minimum_propagate_nan(device, dtype):
    a = np.array([1, np.nan, 3, np.nan], dtype)
    b = np.array([np.nan, 2, 1, np.nan], dtype)
    x, y = gpuarr.asarray(a, device=device), gpuarr.asarray(b, device=device)
    np.testing.assert_array_equal(gpuarr.maximum(x, y).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(gpuarr.minimum(x, y).numpy(), np.minimum(a, b))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex128"])
def test_round_is_half_to_even(device, dtype):
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4], dtype)
    np.testing.assert_array_equal(gpuarr.round(gpuarr.asarray(a, device=device)).numpy(),
                                  np.round(a))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nan_and_inf_through_math_functions(device, dtype):
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype)
    x = gpuarr.asarray(a, device=device)
    for name in ["exp", "sqrt", "isnan", "isinf", "isfinite", "signbit", "sign", "abs",
                 "tanh", "floor"]:
        check(name, getattr(gpuarr, name)(x), expect(name, a))


@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_astype_matches_numpy_for_in_range_values(device, src, dst):
    a = np.array([0, 1, 3, 7, 100, 0], dtype=src) if src != "bool" else \
        np.array([True, False, True, False, True, True])
    if src.startswith(("float", "complex")):
        a = (a + np.array([0.25, 0.75, -0.0, 0.5, 0, 0])).astype(src)
    x = gpuarr.asarray(a, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = a.astype(dst)
    got = x.astype(dst)
    assert got.dtype == getattr(gpuarr, dst)
    np.testing.assert_array_equal(got.numpy(), want)


def test_astype_copy_false_returns_same_array_when_possible(device):
    x = gpuarr.asarray(np.arange(3.0), device=device)
    assert gpuarr.astype(x, x.dtype, copy=False) is x
    assert gpuarr.astype(x, x.dtype) is not x


def test_float_to_int_cast_of_nan_and_inf_is_defined(device):
    x = gpuarr.asarray(np.array([np.nan, np.inf, -np.inf, 1e30, 2.9, -2.9]), device=device)
    np.testing.assert_array_equal(x.astype("int64").numpy(),
                                  [-2**63, -2**63, -2**63, -2**63, 2, -2])  # NumPy on x86


def test_empty_and_zero_d_inputs(device):
    e = gpuarr.asarray(np.zeros((0, 3), np.float32), device=device)
    r = gpuarr.exp(e) + 1
    assert r.shape == (0, 3) and r.dtype == gpuarr.float32
    s = gpuarr.asarray(np.array(2.0), device=device)
    assert (s * 3).shape == () and float((s * 3).numpy()) == 6.0


def strided(base, key, device):
    """A strided view base[key] on `device` (gpuarr indexing, or on the CPU a
    zero-copy wrap of NumPy's view)."""
    return gpuarr.asarray(base, device=device)[key]


def test_broadcast_strided_and_negative_strides(device):
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    b = np.arange(4, dtype=np.float64)
    x = gpuarr.asarray(a, device=device)
    y = strided(b, slice(None, None, -1), device)
    np.testing.assert_array_equal((x + y).numpy(), a + b[::-1])
    key = (slice(None), slice(None, None, 2), slice(None, None, -1))
    np.testing.assert_array_equal((strided(a, key, device) * 2).numpy(), a[key] * 2)
    k2 = (Ellipsis, slice(None, None, -1))
    np.testing.assert_array_equal(
        gpuarr.maximum(strided(a, k2, device), strided(a, (slice(None), slice(0, 1)),
                                                       device)).numpy(),
        np.maximum(a[k2], a[:, :1]))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("perm", [(0, 2, 1), (2, 1, 0), (1, 0, 2), (2, 0, 1)])
@pytest.mark.parametrize("dtype", ["int8", "float32", "float64", "complex128"])
def test_writes_into_permuted_and_reversed_views_match_numpy(device, perm, dtype, reverse):
    """Elementwise results and copies into an output whose memory order is not its
    logical order (a transposed view, out= into x.T, a reversed axis): the loop walks
    the output's memory in order (ga_loop_coalesce_for_output), so every element must
    still land where NumPy puts it, with broadcast and strided inputs."""
    rng = np.random.default_rng(sum(perm))
    shape = (3, 17, 40)
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    b = (rng.standard_normal(shape[1:]) * 10).astype(dtype)[::-1]  # broadcast, reversed
    base_n = np.zeros(tuple(shape[p] for p in np.argsort(perm)), dtype=dtype)
    flip = slice(None, None, -1 if reverse else 1)
    out_n = base_n.transpose(perm)[:, flip]  # logical shape `shape`, memory permuted
    assert out_n.shape == shape
    x = gpuarr.asarray(a, device=device)
    y = gpuarr.asarray(b[::-1].copy(), device=device)[::-1]
    base = gpuarr.zeros(base_n.shape, dtype=dtype, device=device)  # not sharing base_n
    out = gpuarr.permute_dims(base, perm)[:, flip]
    gpuarr.add(x, y, out=out)
    np.add(a, b, out=out_n)
    np.testing.assert_array_equal(base.numpy(), base_n)
    x.mT.copyto(out.mT)  # a copy into the permuted view's transpose
    out_n.swapaxes(-1, -2)[...] = a.swapaxes(-1, -2)
    np.testing.assert_array_equal(base.numpy(), base_n)
    out *= 2  # in place, on the permuted view
    out_n *= 2
    np.testing.assert_array_equal(base.numpy(), base_n)
    np.testing.assert_array_equal(gpuarr.asarray(out, copy=True).numpy(), out_n)


def test_broadcast_error_names_both_shapes(device):
    x = gpuarr.asarray(np.ones((2, 3)), device=device)
    y = gpuarr.asarray(np.ones((4,)), device=device)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)|\(4,\).*\(2, 3\)"):
        x + y


def test_large_array_uses_the_threaded_path_correctly(device):
    a = np.linspace(-5, 5, 200_003).astype(np.float32)
    x = gpuarr.asarray(a, device=device)
    np.testing.assert_allclose((x * x + 1).numpy(), a * a + 1, rtol=1e-6)
    np.testing.assert_allclose(gpuarr.tanh(strided(a, slice(None, None, -3), device)).numpy(), np.tanh(a[::-3]), rtol=1e-5)


def test_complex_transcendentals_away_from_branch_cuts(device):
    rng = np.random.default_rng(0)
    a = (rng.uniform(-2, 2, 50) + 1j * rng.uniform(0.2, 2, 50)).astype(np.complex128)
    x = gpuarr.asarray(a, device=device)
    for name in ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin",
                 "acos", "atan", "asinh", "acosh", "atanh", "expm1", "log1p", "log2",
                 "log10", "exp2", "sign", "reciprocal"]:
        np.testing.assert_allclose(getattr(gpuarr, name)(x).numpy(), expect(name, a),
                                   rtol=1e-10, err_msg=name)
    np.testing.assert_allclose((x ** x).numpy(), a ** a, rtol=1e-10)
    np.testing.assert_allclose((x ** 3).numpy(), a ** 3, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_power_of_two_is_the_square_bit_for_bit(device, dtype):
    # NumPy computes x ** 2 as x * x (one rounding); so does pow on every device,
    # whatever the device's pow would round: scalar and array exponents alike
    rng = np.random.default_rng(11)
    xn = (rng.standard_normal(100_000) * 10.0 ** rng.integers(-30, 30, 100_000)).astype(dtype)
    x = gpuarr.asarray(xn, device=device)
    with np.errstate(over="ignore"):
        want = xn * xn
    assert np.array_equal(to_numpy(x ** 2), want)
    assert np.array_equal(to_numpy(gpuarr.pow(x, gpuarr.full_like(x, 2))), want)
    assert np.array_equal(to_numpy(x[::3] ** 2.0), want[::3])
