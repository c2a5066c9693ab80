"""Creation functions: values against NumPy, dtypes, devices, and no host transfers."""
import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), 0, 5, (2, 3), (2, 0, 4)])
def test_zeros_ones_match_numpy(device, dtype, shape):
    for fn, ref in ((gpuarr.zeros, np.zeros), (gpuarr.ones, np.ones)):
        x = fn(shape, dtype=dtype, device=device)
        assert x.device == device and x.dtype == dtype
        np.testing.assert_array_equal(x.numpy(), ref(shape, dtype=dtype))


def test_default_dtype_is_float32_and_default_device_is_used(device):
    assert gpuarr.zeros(3).dtype == gpuarr.float32
    with device:
        x = gpuarr.ones((2, 2))
    assert x.device == device


def test_empty_has_shape_dtype_and_device(device):
    x = gpuarr.empty((3, 4), dtype="int32", device=device)
    assert (x.shape, x.dtype, x.device) == ((3, 4), gpuarr.int32, device)


@pytest.mark.parametrize("value, dtype", [(True, "bool"), (7, "int64"), (2.5, "float32"),
                                          (1 + 2j, "complex64")])
def test_full_infers_dtype_from_the_value(device, value, dtype):
    x = gpuarr.full((2, 3), value, device=device)
    assert x.dtype == dtype
    np.testing.assert_array_equal(x.numpy(), np.full((2, 3), value, dtype=dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_full_with_explicit_dtype_matches_numpy(device, dtype):
    x = gpuarr.full(4, 3, dtype=dtype, device=device)
    np.testing.assert_array_equal(x.numpy(), np.full(4, 3, dtype=dtype))


def test_full_of_numpy_scalar_keeps_its_dtype():
    assert gpuarr.full(2, np.float64(1.5)).dtype == gpuarr.float64
    assert gpuarr.full(2, np.int8(3)).dtype == gpuarr.int8


def test_full_uint64_above_int64_max():
    x = gpuarr.full(2, 2**64 - 1, dtype="uint64")
    assert x.numpy()[0] == 2**64 - 1


def test_full_out_of_range_value_raises_overflow():
    with pytest.raises(OverflowError):
        gpuarr.full(2, 300, dtype="int8")
    with pytest.raises(OverflowError):
        gpuarr.full(2, -1, dtype="uint8")
    with pytest.raises(ValueError):
        gpuarr.full(2, float("nan"), dtype="int32")


def test_full_rejects_non_scalars():
    with pytest.raises(TypeError):
        gpuarr.full(2, "a")
    with pytest.raises(TypeError):
        gpuarr.full(2, [1, 2])


def test_full_float16_rounds_like_numpy():
    x = gpuarr.full(3, 0.1, dtype="float16")
    np.testing.assert_array_equal(x.numpy(), np.full(3, 0.1, dtype=np.float16))


@pytest.mark.parametrize("fn", [gpuarr.zeros, gpuarr.ones, gpuarr.empty])
def test_negative_dimension_raises_value_error(fn):
    with pytest.raises(ValueError, match="negative"):
        fn((2, -1))


@pytest.mark.parametrize("shape", [(2**40, 2**40), (2**62,), (2**31, 2**31, 8)])
def test_huge_shapes_raise_memory_error_not_crash(shape):
    with pytest.raises((MemoryError, ValueError)):
        gpuarr.zeros(shape)


def test_bad_arguments_raise_type_error():
    with pytest.raises(TypeError):
        gpuarr.zeros(3, 4)
    with pytest.raises(TypeError):
        gpuarr.ones(3, colour="red")
    with pytest.raises(TypeError):
        gpuarr.zeros()
    with pytest.raises(TypeError):
        gpuarr.zeros((2.5, 3))
    with pytest.raises(ValueError):
        gpuarr.zeros((1,) * 25)


def test_creation_on_gpu_moves_no_data(gpu_device):
    before = gpuarr.transfer_stats()
    gpuarr.zeros((100, 100), device=gpu_device)
    gpuarr.full(1000, 2.0, device=gpu_device)
    gpuarr.arange(1000, device=gpu_device)
    gpuarr.linspace(0, 1, 1000, device=gpu_device)
    gpuarr.eye(50, device=gpu_device)
    gpuarr.random.uniform(size=1000, device=gpu_device)
    d = gpuarr.transfer_stats() - before
    assert d.h2d_bytes == 0 and d.d2h_bytes == 0 and d.d2d_bytes == 0


@pytest.mark.parametrize("args", [(5,), (2, 9), (9, 2, -2), (-3, 7, 3), (0,), (5, 1), (3, 3)])
def test_arange_of_ints_matches_numpy_as_int64(device, args):
    x = gpuarr.arange(*args, device=device)
    assert x.dtype == gpuarr.int64
    np.testing.assert_array_equal(x.numpy(), np.arange(*args))


@pytest.mark.parametrize("args", [(0.0, 1.0, 0.1), (5.5,), (1, 2, 0.25), (3.0, -1.0, -0.5)])
def test_arange_of_floats_is_float32_and_matches_numpy(device, args):
    x = gpuarr.arange(*args, device=device)
    assert x.dtype == gpuarr.float32
    ref = np.arange(*args)
    assert x.shape == ref.shape
    np.testing.assert_allclose(x.numpy(), ref.astype(np.float32), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", INT_DTYPES + FLOAT_DTYPES + ["complex64", "complex128"])
def test_arange_with_dtype(device, dtype):
    x = gpuarr.arange(1, 10, 2, dtype=dtype, device=device)
    np.testing.assert_array_equal(x.numpy(), np.arange(1, 10, 2, dtype=dtype))


def test_arange_errors():
    with pytest.raises(ValueError):
        gpuarr.arange(0, 10, 0)
    with pytest.raises(TypeError):
        gpuarr.arange(0, 2.5, dtype="int32")
    with pytest.raises(TypeError):
        gpuarr.arange(1j)


@pytest.mark.parametrize("num", [0, 1, 2, 7, 50])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_matches_numpy(device, num, endpoint):
    x = gpuarr.linspace(-1.0, 3.0, num, endpoint=endpoint, device=device)
    ref = np.linspace(-1.0, 3.0, num, endpoint=endpoint)
    assert x.dtype == gpuarr.float32 and x.shape == ref.shape
    np.testing.assert_allclose(x.numpy(), ref.astype(np.float32), rtol=1e-6, atol=1e-6)
    if endpoint and num > 1:
        assert x.numpy()[-1] == np.float32(3.0)


def test_linspace_float64_endpoint_is_exact(device):
    x = gpuarr.linspace(0.1, 0.7, 7, dtype="float64", device=device)
    np.testing.assert_allclose(x.numpy(), np.linspace(0.1, 0.7, 7), rtol=1e-15)
    assert x.numpy()[-1] == 0.7


def test_linspace_negative_num_raises():
    with pytest.raises(ValueError):
        gpuarr.linspace(0, 1, -1)


@pytest.mark.parametrize("n, m, k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (3, 3, 5),
                                     (3, 3, -5), (0, 0, 0), (1, 1, 0)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128"])
def test_eye_matches_numpy(device, n, m, k, dtype):
    x = gpuarr.eye(n, m, k=k, dtype=dtype, device=device)
    np.testing.assert_array_equal(x.numpy(), np.eye(n, m, k=k, dtype=dtype))


@pytest.mark.parametrize("fn, ref", [(gpuarr.zeros_like, np.zeros_like),
                                     (gpuarr.ones_like, np.ones_like)])
def test_like_functions_keep_shape_dtype_and_device(device, fn, ref):
    src = gpuarr.asarray(np.arange(6, dtype=np.int16).reshape(2, 3), device=device)
    x = fn(src)
    assert x.device == device and x.dtype == gpuarr.int16
    np.testing.assert_array_equal(x.numpy(), ref(src.numpy()))
    y = fn(src, dtype="float64", device=gpuarr.cpu())
    assert y.device == gpuarr.cpu() and y.dtype == gpuarr.float64


def test_full_like_and_empty_like(device):
    src = gpuarr.zeros((2, 2), dtype="float64", device=device)
    x = gpuarr.full_like(src, 7)
    assert x.dtype == gpuarr.float64 and x.device == device
    np.testing.assert_array_equal(x.numpy(), np.full((2, 2), 7.0))
    e = gpuarr.empty_like(src)
    assert e.shape == (2, 2) and e.device == device


def test_ones_is_fast_on_cpu():
    import timeit
    n = 2000
    ours = min(timeit.repeat(lambda: gpuarr.ones(3), number=n, repeat=3))
    ref = min(timeit.repeat(lambda: np.ones(3), number=n, repeat=3))
    assert ours < 3 * ref  # generous: a shared 2-core machine is noisy


# --- asarray / array --------------------------------------------------------------------


def test_asarray_of_array_on_same_device_is_the_same_object(device):
    x = gpuarr.ones(3, device=device)
    assert gpuarr.asarray(x) is x
    assert gpuarr.asarray(x, copy=True) is not x


def test_asarray_copy_true_makes_independent_copy():
    a = np.arange(4.0)
    x = gpuarr.asarray(a, copy=True)
    a[0] = 99
    assert x.numpy()[0] == 0


def test_asarray_to_another_device_is_explicit_copy(two_gpus):
    g0, g1 = two_gpus
    x = gpuarr.arange(5, device=g0)
    before = gpuarr.transfer_stats()
    y = gpuarr.asarray(x, device=g1)
    d = gpuarr.transfer_stats() - before
    assert y.device == g1 and d.d2d_bytes == 40
    np.testing.assert_array_equal(y.numpy(), np.arange(5))
    with pytest.raises(ValueError, match="copy=False"):
        gpuarr.asarray(x, device=g1, copy=False)


def test_asarray_of_list_with_copy_false_raises():
    with pytest.raises(ValueError):
        gpuarr.asarray([1, 2, 3], copy=False)


# --- properties ------------------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.integers(-50, 50), st.integers(-50, 50),
       st.integers(-7, 7).filter(lambda s: s != 0))
def test_arange_of_ints_always_matches_numpy(start, stop, step):
    np.testing.assert_array_equal(gpuarr.arange(start, stop, step).numpy(),
                                  np.arange(start, stop, step))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.integers(-7, 7))
def test_eye_always_matches_numpy(n, m, k):
    np.testing.assert_array_equal(gpuarr.eye(n, m, k=k).numpy(), np.eye(n, m, k=k))


@pytest.mark.parametrize("pytype, default", [(bool, "bool"), (int, "int64"),
                                             (float, "float32"), (complex, "complex64")])
def test_a_python_type_and_its_name_are_the_same_dtype(pytype, default):
    """dtype=float and dtype="float" mean one thing: gpuarr's default float (float32, as
    in PyTorch; NumPy's would be float64). Written once, in ga_dtype.c."""
    assert gpuarr.zeros(1, dtype=pytype).dtype == default
    assert gpuarr.zeros(1, dtype=pytype.__name__).dtype == default
    assert gpuarr.zeros(1, dtype="double").dtype == "float64"


def test_python_takes_the_cores_operation_codes_by_name():
    from gpuarr import _core

    assert set(_core.reduce_ops) == {"sum", "prod", "max", "min", "argmax", "argmin", "all",
                                     "any"}
    assert len(set(_core.reduce_ops.values())) == 8
    assert set(_core.random_dists) == {"uniform", "normal", "integers"}
    assert set(_core.scan_ops) == {"cumsum", "cumprod"}
    ew = _core.elementwise_ops
    assert sorted(ew.values()) == list(range(len(ew))) and "add" in ew and "where" in ew
    assert all(callable(getattr(_core, name)) for name in ew)  # one entry per op
    x = gpuarr.asarray([1.0, 2.0, 4.0])
    assert np.isclose(float(_core._stat(x, "std")), np.std([1.0, 2.0, 4.0]), rtol=1e-6)
    with pytest.raises(ValueError, match="not mean, var or std"):
        _core._stat(x, "median")
