"""The array API standard's inspection and dtype functions (2024.12): what code written
against the standard asks first. NumPy (its own __array_namespace_info__, finfo,
iinfo, can_cast) is the oracle."""
import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES, DEVICES, FLOAT_DTYPES, INT_DTYPES

STANDARD = [d for d in ALL_DTYPES if d != "float16"]
needs_numpy2 = pytest.mark.skipif(not hasattr(np, "isdtype"), reason="NumPy >= 2.1 is the oracle")


def test_api_version_is_2024_12():
    assert gpuarr.__array_api_version__ == "2024.12"


def test_array_namespace_is_gpuarr(device):
    x = gpuarr.ones(3, device=device)
    assert x.__array_namespace__() is gpuarr
    assert x.__array_namespace__(api_version="2023.12") is gpuarr
    with pytest.raises(ValueError, match="2024.12"):
        x.__array_namespace__(api_version="2019.01")


def test_array_api_compat_finds_gpuarr(device):
    compat = pytest.importorskip("array_api_compat")
    x = gpuarr.ones(3, device=device)
    assert compat.array_namespace(x) is gpuarr
    assert compat.array_namespace(x, gpuarr.zeros(2, device=device)) is gpuarr


def test_info_lists_every_device_and_the_default():
    info = gpuarr.__array_namespace_info__()
    assert info.devices() == DEVICES
    assert info.default_device() == gpuarr.get_default_device()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    assert caps["max dimensions"] >= 8


@pytest.mark.parametrize("dev", DEVICES, ids=repr)
def test_info_default_dtypes_match_what_creation_gives(dev):
    d = gpuarr.__array_namespace_info__().default_dtypes(device=dev)
    assert d["real floating"] == gpuarr.asarray(1.0, device=dev).dtype
    assert d["integral"] == gpuarr.arange(3, device=dev).dtype
    assert d["indexing"] == gpuarr.nonzero(gpuarr.ones(2, device=dev))[0].dtype
    assert d["complex floating"] == gpuarr.complex64


def test_info_default_dtypes_reject_an_unknown_device():
    with pytest.raises(ValueError, match="devices"):
        gpuarr.__array_namespace_info__().default_dtypes(device=gpuarr.gpu(99))


@pytest.mark.parametrize("kind", [None, "bool", "signed integer", "unsigned integer",
                                  "integral", "real floating", "complex floating",
                                  "numeric", ("bool", "real floating")])
@needs_numpy2
def test_info_dtypes_by_kind_match_numpy(kind):
    got = gpuarr.__array_namespace_info__().dtypes(kind=kind)
    want = np.__array_namespace_info__().dtypes(kind=kind)
    assert list(got) == list(want)
    assert all(isinstance(v, gpuarr.DType) and v.name == k for k, v in got.items())
    with pytest.raises(ValueError, match="kind"):
        gpuarr.__array_namespace_info__().dtypes(kind="floats")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["complex64", "complex128"])
def test_finfo_matches_numpy(dtype):
    got, want = gpuarr.finfo(dtype), np.finfo(dtype)
    for field in ("bits", "eps", "max", "min", "smallest_normal"):
        assert getattr(got, field) == getattr(want, field), field
        assert type(getattr(got, field)) in (int, float)
    assert got.dtype.name == want.dtype.name
    assert gpuarr.finfo(gpuarr.ones(1, dtype=dtype)).bits == want.bits


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_iinfo_matches_numpy(dtype):
    got, want = gpuarr.iinfo(gpuarr.DType(dtype)), np.iinfo(dtype)
    assert (got.bits, got.max, got.min) == (want.bits, want.max, want.min)
    assert got.dtype == gpuarr.DType(dtype)


def test_finfo_and_iinfo_refuse_the_other_kind():
    with pytest.raises(TypeError, match="iinfo"):
        gpuarr.finfo(gpuarr.int32)
    with pytest.raises(TypeError, match="finfo"):
        gpuarr.iinfo(gpuarr.float32)


@pytest.mark.parametrize("dtype", STANDARD)
@pytest.mark.parametrize("kind", ["bool", "signed integer", "unsigned integer", "integral",
                                  "real floating", "complex floating", "numeric",
                                  ("integral", "bool")])
@needs_numpy2
def test_isdtype_matches_numpy(dtype, kind):
    assert gpuarr.isdtype(gpuarr.DType(dtype), kind) == np.isdtype(np.dtype(dtype), kind)


def test_isdtype_takes_a_dtype_as_kind_and_knows_float16():
    assert gpuarr.isdtype(gpuarr.float32, gpuarr.float32)
    assert not gpuarr.isdtype(gpuarr.float32, (gpuarr.float64, "integral"))
    assert gpuarr.isdtype(gpuarr.float16, "real floating")
    with pytest.raises(ValueError, match="kind"):
        gpuarr.isdtype(gpuarr.float32, "float")


@pytest.mark.parametrize("a", STANDARD)
@pytest.mark.parametrize("b", STANDARD)
def test_result_type_is_what_addition_gives(a, b):
    x, y = gpuarr.ones(1, dtype=a), gpuarr.ones(1, dtype=b)
    want = (x + y).dtype if not (a == b == "bool") else gpuarr.bool
    assert gpuarr.result_type(a, b) == want
    assert gpuarr.result_type(x, gpuarr.DType(b)) == want


def test_result_type_scalars_are_weak():
    assert gpuarr.result_type(gpuarr.int8, 1) == gpuarr.int8
    assert gpuarr.result_type(gpuarr.float64, 1.0, gpuarr.int8) == gpuarr.float64
    assert gpuarr.result_type(gpuarr.float32, 1j) == gpuarr.complex64
    with pytest.raises(ValueError, match="at least one"):
        gpuarr.result_type(1, 2.0)


@pytest.mark.parametrize("a", STANDARD)
@pytest.mark.parametrize("b", STANDARD)
def test_can_cast_matches_numpy_safe_casting(a, b):
    assert gpuarr.can_cast(a, gpuarr.DType(b)) == np.can_cast(a, b, "safe")


@pytest.mark.parametrize("dtype", ["float32", "complex128", "int16", "bool"])
def test_complex_of_a_one_element_array(device, dtype):
    x = gpuarr.asarray(np.array(3, dtype=dtype), device=device)
    assert complex(x) == complex(np.array(3, dtype=dtype))
    assert complex(gpuarr.asarray(np.array(1 - 2j), device=device)) == 1 - 2j
    with pytest.raises(ValueError, match="exactly one element"):
        complex(gpuarr.ones(2, device=device))


def test_constants_are_the_standards_python_floats():
    import math

    assert type(gpuarr.e) is float and gpuarr.e == math.e
    assert type(gpuarr.pi) is float and gpuarr.pi == math.pi
    assert gpuarr.inf == math.inf and math.isnan(gpuarr.nan)
    assert gpuarr.newaxis is None
