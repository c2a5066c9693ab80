"""Type promotion: array-array pairs equal numpy.result_type; Python scalars are
weak (NEP 50), with gpuarr's float32/complex64 defaults for int arrays."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gpuarr
from conftest import ALL_DTYPES


@pytest.mark.parametrize("a", ALL_DTYPES)
@pytest.mark.parametrize("b", ALL_DTYPES)
def test_add_promotes_like_numpy_result_type(a, b):
    x = gpuarr.asarray(np.ones(2, a))
    y = gpuarr.asarray(np.ones(2, b))
    assert str((x + y).dtype) == str(np.result_type(a, b))


WEAK = [(True, {}), (1, {"bool": "int64"}), (1.0, {}), (1j, {})]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("scalar", [True, 1, 1.5, 1j], ids=repr)
def test_weak_python_scalars(dtype, scalar):
    x = gpuarr.asarray(np.ones(2, dtype))
    got = str((x * scalar).dtype)
    kind = np.dtype(dtype).kind
    if isinstance(scalar, float) and kind in "biu":
        want = "float32"  # gpuarr's default float
    elif isinstance(scalar, complex) and kind in "biu":
        want = "complex64"
    else:
        want = str((np.ones(2, dtype) * scalar).dtype)
    assert got == want


@pytest.mark.parametrize("name,dtype,want", [
    ("sqrt", "int8", "float16"), ("sqrt", "int16", "float32"), ("sqrt", "uint32", "float64"),
    ("sqrt", "bool", "float16"), ("divide", "int8", "float64"), ("floor_divide", "bool", "int8"),
    ("equal", "complex64", "bool"), ("abs", "complex128", "float64"),
    ("round", "bool", "float16"),
])
def test_op_specific_loop_types(name, dtype, want):
    x = gpuarr.asarray(np.ones(2, dtype))
    args = (x,) * (2 if name in ("divide", "floor_divide", "equal") else 1)
    assert str(getattr(gpuarr, name)(*args).dtype) == want


dtypes = st.sampled_from(ALL_DTYPES)
shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(dtypes, dtypes, shapes, shapes)
def test_multiply_matches_numpy_for_random_dtypes_and_broadcasts(a, b, sa, sb):
    na = (np.arange(int(np.prod(sa))) % 5).reshape(sa).astype(a)
    nb = (np.arange(int(np.prod(sb))) % 3 + 1).reshape(sb).astype(b)
    try:
        want = na * nb
    except ValueError:
        with pytest.raises(ValueError):
            gpuarr.asarray(na) * gpuarr.asarray(nb)
        return
    got = (gpuarr.asarray(na) * gpuarr.asarray(nb)).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@settings(max_examples=40, deadline=None)
@given(dtypes, st.sampled_from(["add", "maximum", "less", "logical_xor", "where"]))
def test_ops_agree_with_numpy_on_device_dtype_pairs(dtype, name):
    a = (np.arange(6) % 4).astype(dtype)
    b = (np.arange(6)[::-1] % 3).astype(dtype)
    devices = [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]
    for dev in devices:
        x, y = gpuarr.asarray(a, device=dev), gpuarr.asarray(b, device=dev)
        if name == "where":
            got = gpuarr.where(x != 0, x, y).numpy()
            want = np.where(a != 0, a, b)
        else:
            got = getattr(gpuarr, name)(x, y).numpy()
            want = getattr(np, name)(a, b)
        np.testing.assert_array_equal(got, want)
