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


# --- the stream of words (ga_philox.h, issue 29 item 5): an element of a kind takes q
# consecutive 32-bit words (float32/float16 uniform 1, float64 uniform, integers and
# float32/float16 normal 2, float64 normal 4), a draw of Philox4x32-10 gives four, and
# the state counts words, rounded up to a multiple of q where a request starts.

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85


def _philox(draw, seed):
    """Philox4x32-10 of counter {lo32(draw), hi32(draw), 0, 0}, key {lo32, hi32}(seed)."""
    c = [draw & 0xFFFFFFFF, draw >> 32, 0, 0]
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    for _ in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & 0xFFFFFFFF, p1 & 0xFFFFFFFF,
             ((p0 >> 32) ^ c[3] ^ k1) & 0xFFFFFFFF, p0 & 0xFFFFFFFF]
        k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
    return c


def _words(seed, first, count):
    return [_philox(w // 4, seed)[w % 4] for w in range(first, first + count)]


def test_the_reference_philox_gives_random123s_known_answer():
    assert _philox(0, 0) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


def test_four_float32_uniforms_per_draw_and_the_state_counts_words(device):
    gpuarr.random.seed(0)
    got = gpuarr.rand(6, device=device).numpy()
    want = np.array([(w >> 8) / 2**24 for w in _words(0, 0, 6)], np.float32)
    np.testing.assert_array_equal(got, want)
    assert gpuarr.random.get_state() == (0, 6)


def test_float64_and_integer_elements_take_two_words_from_an_even_word(device):
    seed = 77
    gpuarr.random.seed(seed)
    gpuarr.random.uniform(size=3, dtype="float32", device=device)  # words 0..2
    x = gpuarr.random.uniform(size=5, dtype="float64", device=device).numpy()
    w = _words(seed, 4, 10)  # rounded up from 3 to 4
    want = [((w[2 * i] << 32 | w[2 * i + 1]) >> 11) / 2**53 for i in range(5)]
    np.testing.assert_array_equal(x, np.array(want))
    assert gpuarr.random.get_state() == (seed, 14)
    lo, hi = -5, 1000
    y = gpuarr.random.integers(lo, hi, size=3, dtype="int64", device=device).numpy()
    w = _words(seed, 14, 6)
    want = [lo + ((w[2 * i] << 32 | w[2 * i + 1]) * (hi - lo) >> 64) for i in range(3)]
    np.testing.assert_array_equal(y, want)
    assert gpuarr.random.get_state() == (seed, 20)
    gpuarr.random.normal(size=2, dtype="float64", device=device)
    assert gpuarr.random.get_state() == (seed, 28)  # 20 is a multiple of 4 already


@pytest.mark.parametrize("sizes", [(3, 257), (1, 2, 1021), (4, 8)])
@pytest.mark.parametrize("kind", ["float32", "float64", "float16", "int8", "normal32"])
def test_requests_starting_mid_draw_give_the_same_numbers_on_every_device(sizes, kind):
    def run(device):
        gpuarr.random.seed(2024)
        out = []
        for n in sizes:
            if kind == "normal32":
                out.append(gpuarr.random.normal(size=n, dtype="float32", device=device))
            elif kind == "int8":
                out.append(gpuarr.random.integers(-100, 100, size=n, dtype=kind,
                                                  device=device))
            else:
                out.append(gpuarr.random.uniform(size=n, dtype=kind, device=device))
        return np.concatenate([o.numpy() for o in out])
    ref = run(gpuarr.cpu())
    for d in DEVICES[1:]:
        got = run(d)
        if kind == "normal32":
            np.testing.assert_array_max_ulp(got, ref, maxulp=8)
        else:
            np.testing.assert_array_equal(got, ref)
