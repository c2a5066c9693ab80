"""gpuarr.random: reproducible, the same on every device, made on the device."""
import numpy as np
import pytest

import gpuarr
from conftest import DEVICES, INT_DTYPES


def _draw(fn, device, **kw):
    gpuarr.random.seed(1234)
    return fn(size=(3, 1000), device=device, **kw).numpy()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_same_seed_same_uniform_numbers_on_every_device(dtype):
    # uniform draws are integer work and correctly rounded arithmetic: bit-identical
    ref = _draw(gpuarr.random.uniform, gpuarr.cpu(), dtype=dtype)
    assert ref.dtype == dtype
    for d in DEVICES[1:]:
        np.testing.assert_array_equal(_draw(gpuarr.random.uniform, d, dtype=dtype), ref)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_same_seed_same_normal_numbers_on_every_device_within_cudas_ulp_bounds(dtype):
    # Box-Muller, z = sqrt(-2 log u1) cos(2 pi u2) (ga_philox.h), calls the device's
    # log and cos, and a GPU's are not the host's libm: CUDA documents a maximum error
    # of 1 ulp for log (double and float) and 2 for cos against the correctly rounded
    # value, and glibc's are within 1 ulp of it too. So the two devices' z may differ
    # relatively by up to (1 + 1) / 2 (log, halved by sqrt) + (2 + 1) (cos) + 1 + 1
    # (the roundings of sqrt and of the product, on different inputs) = 6 ulps: of
    # 2^-52 for float64 (in double), of 2^-23 for float32 (in float); 8 allows that
    # with room. A float16 draw is the float value rounded once more, so it may land
    # on the neighbouring value: at most 1 ulp.
    ref = _draw(gpuarr.random.normal, gpuarr.cpu(), dtype=dtype)
    assert ref.dtype == dtype
    for d in DEVICES[1:]:
        got = _draw(gpuarr.random.normal, d, dtype=dtype)
        if dtype == "float64":
            np.testing.assert_allclose(got, ref, rtol=8 * np.finfo(np.float64).eps,
                                       atol=0)
        else:
            np.testing.assert_array_max_ulp(got, ref, maxulp=8 if dtype == "float32" else 1)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integers_same_on_every_device_and_in_range(dtype):
    ref = _draw(lambda **kw: gpuarr.random.integers(3, 100, **kw), gpuarr.cpu(), dtype=dtype)
    assert ref.dtype == dtype and ref.min() >= 3 and ref.max() < 100
    assert len(np.unique(ref)) == 97  # 3000 draws hit every value
    for d in DEVICES[1:]:
        got = _draw(lambda **kw: gpuarr.random.integers(3, 100, **kw), d, dtype=dtype)
        np.testing.assert_array_equal(got, ref)


def test_calls_advance_the_state_and_seed_restarts_it(device):
    gpuarr.random.seed(7)
    a = gpuarr.random.uniform(size=10, device=device).numpy()
    b = gpuarr.random.uniform(size=10, device=device).numpy()
    assert not np.array_equal(a, b)
    gpuarr.random.seed(7)
    both = gpuarr.random.uniform(size=20, device=device).numpy()
    np.testing.assert_array_equal(both, np.concatenate([a, b]))


def test_state_round_trip():
    gpuarr.random.seed(3)
    gpuarr.rand(5)
    st = gpuarr.random.get_state()
    a = gpuarr.rand(5).numpy()
    gpuarr.random.set_state(st)
    np.testing.assert_array_equal(gpuarr.rand(5).numpy(), a)


def test_different_seeds_differ():
    gpuarr.random.seed(1)
    a = gpuarr.rand(100).numpy()
    gpuarr.random.seed(2)
    assert not np.array_equal(a, gpuarr.rand(100).numpy())


def test_known_first_values_pin_the_philox_mapping():
    # Philox4x32-10 with key 0, counter 0 gives word0 0x6627e8d5 (Random123's
    # known-answer test), so the first float32 is (0x6627e8d5 >> 8) / 2**24.
    gpuarr.random.seed(0)
    assert gpuarr.rand(1).numpy()[0] == np.float32((0x6627e8d5 >> 8) / 2**24)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_uniform_statistics_and_half_open_interval(device, dtype):
    gpuarr.random.seed(5)
    x = gpuarr.random.uniform(-2.0, 3.0, size=20000, dtype=dtype, device=device).numpy()
    assert x.dtype == dtype
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(float(x.astype(np.float64).mean()) - 0.5) < 0.05
    assert abs(float(x.astype(np.float64).std()) - 5 / np.sqrt(12)) < 0.05


def test_uniform_never_returns_high_even_when_rounding_would():
    gpuarr.random.seed(0)
    # high is 1 ulp above low in float16: everything must be low
    x = gpuarr.random.uniform(1.0, 1.0009765625, size=1000, dtype="float16").numpy()
    assert (x < np.float16(1.0009765625)).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_statistics(device, dtype):
    gpuarr.random.seed(11)
    x = gpuarr.random.normal(1.0, 2.0, size=20000, dtype=dtype, device=device).numpy()
    assert abs(x.mean() - 1.0) < 0.06 and abs(x.std() - 2.0) < 0.06
    assert np.isfinite(x).all()


def test_rand_and_randn_shapes_defaults_and_devices(device):
    for fn in (gpuarr.rand, gpuarr.randn):
        assert fn(2, 3, device=device).shape == (2, 3)
        assert fn((2, 3), device=device).shape == (2, 3)
        x = fn(4, device=device)
        assert x.dtype == gpuarr.float32 and x.device == device
        assert fn().shape == ()
    assert gpuarr.random.integers(5, size=3).dtype == gpuarr.int64


def test_empty_request_does_not_advance_state():
    gpuarr.random.seed(9)
    gpuarr.rand(0, 4)
    assert gpuarr.random.get_state() == (9, 0)


def test_random_on_gpu_moves_no_data(gpu_device):
    before = gpuarr.transfer_stats()
    gpuarr.randn(100, 100, device=gpu_device)
    gpuarr.random.integers(0, 10, size=1000, device=gpu_device)
    d = gpuarr.transfer_stats() - before
    assert d.h2d_bytes == 0 and d.d2h_bytes == 0


def test_bad_arguments():
    with pytest.raises(ValueError):
        gpuarr.random.integers(5, 5)
    with pytest.raises(ValueError):
        gpuarr.random.integers(0, 300, dtype="uint8")
    with pytest.raises(TypeError):
        gpuarr.random.integers(0, 3, dtype="float32")
    with pytest.raises(TypeError):
        gpuarr.random.uniform(size=3, dtype="int32")
    with pytest.raises(ValueError):
        gpuarr.random.normal(0, -1)
    with pytest.raises(ValueError):
        gpuarr.random.seed(-1)
    with pytest.raises(ValueError):
        gpuarr.random.uniform(0, float("inf"))
    with pytest.raises(ValueError, match="negative"):
        gpuarr.rand(-1)


def test_integers_full_int64_range_has_both_signs():
    gpuarr.random.seed(0)
    x = gpuarr.random.integers(-(2**63), 2**63 - 1, size=1000).numpy()
    assert (x < 0).any() and (x > 0).any()
