"""Python operators on arrays: scalars on either side, reflected forms, in-place
forms (with overlap), NumPy data beside arrays."""
import operator
import warnings

import numpy as np
import pytest

import gpuarr

OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
       operator.mod, operator.pow, operator.lt, operator.le, operator.eq, operator.ne,
       operator.gt, operator.ge]
INT_OPS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


def np_result(op, a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op(a, b)


@pytest.mark.parametrize("op", OPS + INT_OPS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("scalar", [3, True])
def test_int_array_with_python_scalar_on_both_sides(device, op, scalar):
    a = np.array([1, 2, 3, 4, 5], np.int32)
    x = gpuarr.asarray(a, device=device)
    for got, want in [(op(x, scalar), np_result(op, a, scalar)),
                      (op(scalar, x), np_result(op, scalar, a))]:
        assert got.device == device
        assert got.numpy().dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_float_array_with_python_float_keeps_its_dtype(device, op, dtype):
    if dtype.startswith("complex") and op in (operator.floordiv, operator.mod, operator.lt,
                                              operator.le, operator.gt, operator.ge):
        return
    a = np.array([0.5, 1.5, 2.0, -3.0], dtype)
    x = gpuarr.asarray(a, device=device)
    got, want = op(2.5, x), np_result(op, 2.5, a)
    assert got.numpy().dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-3 if dtype == "float16" else 1e-6)


def test_unary_operators(device):
    a = np.array([1, -2, 3], np.int16)
    x = gpuarr.asarray(a, device=device)
    np.testing.assert_array_equal((-x).numpy(), -a)
    np.testing.assert_array_equal((+x).numpy(), +a)
    np.testing.assert_array_equal(abs(x).numpy(), abs(a))
    np.testing.assert_array_equal((~x).numpy(), ~a)
    b = gpuarr.asarray(np.array([True, False]), device=device)
    np.testing.assert_array_equal((~b).numpy(), [False, True])
    with pytest.raises(TypeError, match="negative of booleans"):
        -b
    with pytest.raises(TypeError, match="subtract of booleans"):
        b - b


def test_python_int_out_of_range_is_overflow_error(device):
    x = gpuarr.asarray(np.array([1, 2], np.uint8), device=device)
    with pytest.raises(OverflowError, match="300 out of bounds for uint8"):
        x + 300
    with pytest.raises(OverflowError):
        x + (-1)
    with pytest.raises(OverflowError):
        x + 2**70


def test_comparison_with_out_of_range_python_int_is_exact(device):
    a = np.array([1, 200], np.uint8)
    x = gpuarr.asarray(a, device=device)
    np.testing.assert_array_equal((x < -1).numpy(), a < -1)
    np.testing.assert_array_equal((x != 300).numpy(), a != 300)
    np.testing.assert_array_equal((x < 300).numpy(), a < 300)


def test_negative_power_of_integers_is_rejected(device):
    x = gpuarr.asarray(np.array([1, 2], np.int64), device=device)
    with pytest.raises(ValueError, match="negative integer powers"):
        x ** -1
    np.testing.assert_allclose((x ** -1.0).numpy(), [1.0, 0.5])


def test_float_scalar_with_int_array_gives_float32(device):
    x = gpuarr.asarray(np.array([1, 2], np.int64), device=device)
    assert (x * 1.5).dtype == gpuarr.float32
    assert (x + 1j).dtype == gpuarr.complex64
    assert (x / 2).dtype == gpuarr.float64  # true division of integers, as NumPy


def test_numpy_scalars_are_strong(device):
    x = gpuarr.asarray(np.array([1, 2], np.int8), device=device)
    assert (x + np.int64(1)).dtype == gpuarr.int64
    assert (x * np.float32(2)).dtype == gpuarr.float32
    assert (np.float64(2) + x).dtype == gpuarr.float64


@pytest.mark.parametrize("op", [operator.iadd, operator.isub, operator.imul,
                                operator.itruediv, operator.ifloordiv, operator.imod,
                                operator.ipow], ids=lambda o: o.__name__)
def test_inplace_operators_match_numpy(device, op):
    a = np.array([1.5, 2.0, -3.0, 4.0], np.float32)
    b = np.array([2.0, 0.5, 1.5, 2.0], np.float32)
    x = gpuarr.asarray(a.copy(), device=device)  # a zero-copy wrap would change `a`
    y = gpuarr.asarray(b, device=device)
    r = op(x, y)
    assert r is x
    np.testing.assert_allclose(x.numpy(), op(a.copy(), b), rtol=1e-6)


def test_inplace_with_scalar_and_broadcast(device):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = gpuarr.asarray(a.copy(), device=device)
    x += 1
    x *= gpuarr.asarray(np.array([1, 2, 3], np.int32), device=device)
    a += 1
    a *= np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(x.numpy(), a)
    x <<= 1
    np.testing.assert_array_equal(x.numpy(), a << 1)


def test_inplace_that_needs_an_unsafe_cast_is_a_type_error(device):
    x = gpuarr.asarray(np.arange(3, dtype=np.int64), device=device)
    with pytest.raises(TypeError, match="same_kind"):
        x += 1.5
    with pytest.raises(TypeError, match="same_kind"):
        x /= 2
    y = gpuarr.asarray(np.arange(3, dtype=np.float64), device=device)
    y += gpuarr.asarray(np.arange(3, dtype=np.int8), device=device)  # int -> float: fine
    np.testing.assert_array_equal(y.numpy(), [0, 2, 4])


def test_inplace_result_must_not_broadcast_the_target(device):
    x = gpuarr.asarray(np.ones(3), device=device)
    with pytest.raises(ValueError):
        x += gpuarr.asarray(np.ones((2, 3)), device=device)


def test_inplace_with_overlapping_views_equals_numpy():
    base = np.arange(8.0)
    want = base.copy()
    want[1:] += want[:-1]
    x = gpuarr.asarray(base)  # zero-copy views of one host buffer
    try:
        x[1:] += x[:-1]
    except TypeError:  # indexing not available: make the views through NumPy
        dst, src = gpuarr.asarray(base[1:]), gpuarr.asarray(base[:-1])
        dst += src
    np.testing.assert_array_equal(x.numpy(), want)


def test_out_argument_writes_into_the_array(device):
    x = gpuarr.asarray(np.array([1.0, 4.0]), device=device)
    out = gpuarr.asarray(np.zeros(2), device=device)
    r = gpuarr.sqrt(x, out=out)
    assert r is out
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])


def test_numpy_array_beside_cpu_array_is_converted():
    a = np.arange(4.0)
    x = gpuarr.asarray(np.ones(4))
    for r in (x + a, a + x, x + [0, 1, 2, 3]):
        assert isinstance(r, gpuarr.Array)
        np.testing.assert_array_equal(r.numpy(), a + 1)


def test_numpy_array_beside_gpu_array_is_a_device_mismatch(gpu_device):
    x = gpuarr.asarray(np.ones(3), device=gpu_device)
    for thunk in (lambda: x + np.ones(3), lambda: np.ones(3) + x, lambda: x * [1, 2, 3]):
        with pytest.raises(gpuarr.DeviceMismatchError, match="device=x.device"):
            thunk()


def test_arrays_on_two_devices_do_not_mix(two_gpus):
    g0, g1 = two_gpus
    with pytest.raises(gpuarr.DeviceMismatchError):
        gpuarr.asarray(np.ones(2), device=g0) + gpuarr.asarray(np.ones(2), device=g1)


def test_unknown_operand_types_give_type_error(device):
    x = gpuarr.asarray(np.ones(2), device=device)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        x + None
    assert (x == None) is False  # noqa: E711  (Python's identity fallback)
