"""gpuarr.fft, the array API's FFT extension, against numpy.fft on every device.

Accuracy is the error relative to the norm of the result (as pocketfft's own tests
measure it), against NumPy in double precision, over every size 1..64, primes, powers
of two, products of small primes and sizes whose large prime factor takes the
Bluestein path. The rest checks each function's dtypes, n/s padding and truncation,
axes, norms, batches, strided views, devices and errors against numpy.fft."""
import inspect

import numpy as np
import pytest

import gpuarr
from gpuarr import fft as gfft
from conftest import ALL_DTYPES, needs_cuda_devices, to_numpy

rng = np.random.default_rng(12)

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn"]
NORMS = ["backward", "ortho", "forward"]
# sizes beyond 1..64: primes (97, 1009: Bluestein; 31: the generic radix), powers of
# two, 3 * 5 * 7 * k, a product of a large prime and small factors, and 2**16 + 1
SIZES = list(range(1, 65)) + [97, 1009, 1024, 4096, 420, 1155, 31 * 31, 2 * 3 * 101,
                              2**16 + 1]
# relative error bound: a few eps * log2(n) is pocketfft's; allow headroom
TOL = {"complex64": 2e-6, "complex128": 5e-15}


def _data(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _rel_err(got, want):
    scale = max(np.linalg.norm(want.ravel()), np.finfo(np.float64).tiny)
    return np.abs(got.astype(want.dtype) - want).max() / scale if want.size else 0.0


def _check(got, want, device, tol):
    assert isinstance(got, gpuarr.Array)
    assert got.device == device
    assert str(got.dtype) == str(want.dtype), (got.dtype, want.dtype)
    assert got.shape == want.shape
    g = to_numpy(got)
    if want.dtype == np.float16:
        tol = max(tol, 2e-3)
    err = _rel_err(g.astype(np.complex128), want.astype(np.complex128))
    assert err <= tol, err


def _tol(dtype):
    return TOL["complex64"] if np.dtype(dtype) in (np.float16, np.float32, np.complex64) \
        else TOL["complex128"]


# --- accuracy ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_accuracy_over_sizes_matches_pocketfft(device, dtype, name):
    worst = (0.0, None)
    for n in SIZES:
        x = _data(n, dtype)
        got = to_numpy(getattr(gfft, name)(gpuarr.asarray(x, device=device)))
        assert got.dtype == np.dtype(dtype)
        want = getattr(np.fft, name)(x.astype(np.complex128))
        err = _rel_err(got.astype(np.complex128), want)
        worst = max(worst, (err, n), key=lambda t: t[0])
    assert worst[0] <= TOL[dtype], worst


def test_kept_plans_and_split_lines_agree_with_pocketfft(device):
    """The CPU backend keeps plans between calls (at most 8: ten lengths twice evict
    and rebuild them), splits one long line between threads (2**16 and 3 * 2**14:
    mixed radix; 40009, a prime: Bluestein) and a batch into chunks of lines (64
    lines of 1024, 48 of 5000); real transforms of an even length go through the
    complex one of half the length. Every pass must give pocketfft's answer."""
    lengths = [2**16, 3 * 2**14, 40009, 1024, 5000, 12, 97, 360, 4097, 10007]
    for _ in range(2):
        for n in lengths:
            batch = 64 if n == 1024 else 48 if n == 5000 else 1
            x = _data((batch, n), "complex128")
            got = gfft.fft(gpuarr.asarray(x, device=device))
            _check(got, np.fft.fft(x), device, TOL["complex128"])
            r = x.real.copy()
            _check(gfft.rfft(gpuarr.asarray(r, device=device)), np.fft.rfft(r), device,
                   TOL["complex128"])
            # x is not Hermitian: the imaginary parts of its first and last terms must
            # be dropped as pocketfft drops them (even and odd output lengths)
            for m in (2 * n - 2, 2 * n - 1) if n <= 5000 else ():
                if m > 0:
                    _check(gfft.irfft(gpuarr.asarray(x, device=device), n=m),
                           np.fft.irfft(x, n=m), device, 1e-14)


@pytest.mark.parametrize("n", [1, 2, 7, 16, 31, 97, 1009, 4096, 2**16 + 1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_transforms_round_trip_over_sizes(device, n, dtype):
    x = _data(n, dtype)
    g = gpuarr.asarray(x, device=device)
    spec = gfft.rfft(g)
    _check(spec, np.fft.rfft(x), device, _tol(dtype))
    back = gfft.irfft(spec, n=n)
    _check(back, np.fft.irfft(np.fft.rfft(x), n=n), device, _tol(dtype))
    np.testing.assert_allclose(to_numpy(back), x, atol=50 * _tol(dtype) * np.sqrt(n))


# The CPU runs a batch of real lines of an even length n four at a time, side by side
# in SIMD lanes (ga_cpu_fft.c, real_lanes), when n/2 has only prime factors up to 31
# and is at most 2**16; the lines left over, and every other length, one at a time.
# Lengths: 2 (a half of one point), 6 and 30 (radices 3 and 5), 62 (the generic radix
# 31), 1024, 2**17 (the longest in lanes), 194 and 2 * 5**7 (a Bluestein half, a half
# too long: one at a time) and odd ones (the complex path); batches of 4 and 9 (two
# groups of lanes and one line left over).
LANE_LENGTHS = [2, 6, 30, 62, 1024, 2**17, 194, 2 * 5**7, 7, 45]


@pytest.mark.parametrize("n", LANE_LENGTHS)
@pytest.mark.parametrize("batch", [4, 9])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_batches_match_numpy(device, n, batch, dtype):
    x = _data((batch, n), dtype)
    spec = gfft.rfft(gpuarr.asarray(x, device=device))
    _check(spec, np.fft.rfft(x), device, _tol(dtype))
    cdtype = "complex64" if dtype == "float32" else "complex128"
    s = _data((batch, n // 2 + 1), cdtype)  # not Hermitian: X[0], X[n/2] lose .imag
    _check(gfft.irfft(gpuarr.asarray(s, device=device), n=n), np.fft.irfft(s, n=n),
           device, _tol(dtype))


@pytest.mark.parametrize("n, batch", [(1024, 70), (2**14, 13)])
def test_real_batches_split_between_threads_match_numpy(device, n, batch):
    """The pool takes a batch in chunks of whole groups of lanes (70 lines of 1024: 32,
    32 and 6; 13 of 2**14: 4, 4, 4 and 1), when there are several threads."""
    x = _data((batch, n), "float32")
    spec = gfft.rfft(gpuarr.asarray(x, device=device))
    _check(spec, np.fft.rfft(x), device, _tol("float32"))
    _check(gfft.irfft(spec, n=n), np.fft.irfft(np.fft.rfft(x), n=n), device,
           _tol("float32"))


@pytest.mark.parametrize("n", [6, 62, 1024])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_line_in_lanes_has_the_bits_it_has_alone(n, dtype):
    """Lanes do each line's operations in the order one line does them, so a line's
    result must not depend on its neighbours or on where it sits in the batch (on the
    CPU: cuFFT may transform a batch otherwise than one line)."""
    cpu = gpuarr.cpu()
    x = _data((9, n), dtype)
    spec = to_numpy(gfft.rfft(gpuarr.asarray(x, device=cpu)))
    back = to_numpy(gfft.irfft(gpuarr.asarray(spec, device=cpu), n=n))
    for i in (0, 3, 5, 8):  # in lanes (first, last lane), and the line left over
        alone = to_numpy(gfft.rfft(gpuarr.asarray(x[i:i + 1], device=cpu)))
        np.testing.assert_array_equal(spec[i], alone[0])
        alone = to_numpy(gfft.irfft(gpuarr.asarray(spec[i:i + 1], device=cpu), n=n))
        np.testing.assert_array_equal(back[i], alone[0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_real_batches_of_views_along_any_axis(device, dtype, axis):
    base = _data((24, 40, 3), dtype)
    g = gpuarr.asarray(base, device=device)
    for view, ref in [(g[::2, ::-1], base[::2, ::-1]),
                      (gpuarr.permute_dims(g, (2, 1, 0)), base.transpose(2, 1, 0))]:
        want = np.fft.rfft(ref, axis=axis)
        spec = gfft.rfft(view, axis=axis)
        _check(spec, want, device, _tol(dtype))
        m = 2 * (want.shape[axis] - 1)
        _check(gfft.irfft(spec, n=m, axis=axis), np.fft.irfft(want, n=m, axis=axis),
               device, _tol(dtype))


# --- dtypes -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", ONE_D)
def test_result_dtype_follows_numpy(device, name, dtype):
    x = _data((3, 8), dtype)
    if np.dtype(dtype).kind == "c" and name in ("rfft", "ihfft"):
        pytest.raises(TypeError, getattr(gfft, name), gpuarr.asarray(x, device=device))
        return
    want = getattr(np.fft, name)(x)
    got = getattr(gfft, name)(gpuarr.asarray(x, device=device))
    _check(got, want, device, _tol(dtype))


def test_complex_input_to_rfft_names_the_fix(device):
    x = gpuarr.asarray(_data(8, "complex64"), device=device)
    with pytest.raises(TypeError, match=r"rfft needs real input.*x\.real"):
        gfft.rfft(x)
    with pytest.raises(TypeError, match=r"ihfft needs real input.*x\.real"):
        gfft.ihfft(x)
    with pytest.raises(TypeError, match=r"rfft needs real input"):
        gfft.rfftn(gpuarr.asarray(_data((2, 4), "complex128"), device=device))


# --- n, axis, norm, batches ------------------------------------------------------------

@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("n", [None, 1, 3, 8, 9, 17])
def test_n_pads_or_truncates_like_numpy(device, name, n):
    dtype = "complex128" if name in ("fft", "ifft", "irfft", "hfft") else "float64"
    x = _data((2, 8), dtype)
    want = getattr(np.fft, name)(x, n=n)
    _check(getattr(gfft, name)(gpuarr.asarray(x, device=device), n=n), want, device,
           _tol(dtype))


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_every_axis_of_a_batch(device, name, axis):
    dtype = "float32" if name in ("rfft", "ihfft") else "complex64"
    x = _data((3, 4, 6), dtype)
    want = getattr(np.fft, name)(x, axis=axis)
    _check(getattr(gfft, name)(gpuarr.asarray(x, device=device), axis=axis), want, device,
           _tol(dtype))


@pytest.mark.parametrize("name", ONE_D + N_D)
@pytest.mark.parametrize("norm", NORMS)
def test_norms_scale_like_numpy(device, name, norm):
    dtype = "float64" if name in ("rfft", "ihfft", "rfftn") else "complex128"
    x = _data((4, 6), dtype)
    want = getattr(np.fft, name)(x, norm=norm)
    _check(getattr(gfft, name)(gpuarr.asarray(x, device=device), norm=norm), want, device,
           _tol(dtype))


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft"])
def test_strided_and_transposed_views(device, name):
    dtype = "float64" if name == "rfft" else "complex128"
    base = _data((6, 10, 4), dtype)
    g = gpuarr.asarray(base, device=device)
    for view, ref in [(g[::2, 1:, ::-1], base[::2, 1:, ::-1]),
                      (gpuarr.permute_dims(g, (2, 0, 1)), base.transpose(2, 0, 1)),
                      (g[1, ::3], base[1, ::3])]:
        for axis in (0, -1):
            want = getattr(np.fft, name)(ref, axis=axis)
            _check(getattr(gfft, name)(view, axis=axis), want, device, _tol(dtype))


def test_empty_batch_gives_an_empty_result(device):
    x = gpuarr.asarray(np.zeros((0, 8), np.complex64), device=device)
    for name in ("fft", "rfft", "irfft"):
        src = x.real if name == "rfft" else x
        want = getattr(np.fft, name)(to_numpy(src))
        got = getattr(gfft, name)(src)
        assert got.shape == want.shape and str(got.dtype) == str(want.dtype)


def test_input_is_not_modified(device):
    x = _data((3, 9), "complex64")
    g = gpuarr.asarray(x, device=device)
    gfft.irfft(g)  # the backend may overwrite its C2R input: the core hands it a copy
    gfft.fft(g)
    np.testing.assert_array_equal(to_numpy(g), x)


# --- n-dimensional ----------------------------------------------------------------------

ND_CASES = [
    dict(), dict(axes=(0,)), dict(axes=(1, 2)), dict(axes=(-1, 0)), dict(axes=(2, 0, 1)),
    dict(s=(4, 5)), dict(s=(2, 3, 9), axes=(0, 1, 2)), dict(s=(-1, 4), axes=(0, 2)),
    dict(s=(7,), axes=(1,)), dict(axes=(0, 0)),
]


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("case", ND_CASES, ids=[str(c) for c in ND_CASES])
def test_nd_transforms_match_numpy(device, name, case):
    dtype = "float32" if name == "rfftn" else "complex128"
    x = _data((3, 4, 6), dtype)
    np_case = dict(case)
    if "s" in np_case:  # NumPy wants lengths, not the standard's -1, and axes with s
        np_case.setdefault("axes", tuple(range(-len(case["s"]), 0)))
        np_case["s"] = [x.shape[a] if v == -1 else v
                        for v, a in zip(np_case["s"], np_case["axes"])]
    want = getattr(np.fft, name)(x, **np_case)
    _check(getattr(gfft, name)(gpuarr.asarray(x, device=device), **case), want, device,
           _tol(dtype))


def test_fftn_over_no_axes_is_a_complex_copy(device):
    x = gpuarr.asarray(_data((2, 3), "float32"), device=device)
    y = gfft.fftn(x, axes=())
    assert y.dtype == gpuarr.complex64 and y.device == device
    np.testing.assert_array_equal(to_numpy(y), to_numpy(x))


# --- frequencies and shifts ------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 5, 8, 9])
@pytest.mark.parametrize("d", [1.0, 0.25])
@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_fftfreq_and_rfftfreq(device, n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(gfft, name)(n, d=d, dtype=dtype, device=device)
        want = getattr(np.fft, name)(n, d=d)
        assert got.device == device
        assert got.dtype == (gpuarr.float32 if dtype is None else gpuarr.DType(dtype))
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6)


@pytest.mark.parametrize("shape", [(5,), (6,), (3, 4), (5, 2, 7)])
@pytest.mark.parametrize("axes", [None, 0, -1, (0,), (0, -1)])
def test_fftshift_and_ifftshift(device, shape, axes):
    x = np.arange(np.prod(shape)).reshape(shape)
    g = gpuarr.asarray(x, device=device)
    for name in ("fftshift", "ifftshift"):
        got = getattr(gfft, name)(g, axes=axes)
        assert got.device == device
        np.testing.assert_array_equal(to_numpy(got), getattr(np.fft, name)(x, axes=axes))
    np.testing.assert_array_equal(to_numpy(gfft.ifftshift(gfft.fftshift(g, axes=axes),
                                                          axes=axes)), x)


# --- errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ONE_D)
def test_bad_n_axis_and_norm_raise_clear_errors(device, name):
    dtype = "float32" if name in ("rfft", "ihfft") else "complex64"
    x = gpuarr.asarray(_data((2, 4), dtype), device=device)
    f = getattr(gfft, name)
    for n in (0, -3):
        with pytest.raises(ValueError, match="at least 1"):
            f(x, n=n)
    with pytest.raises(TypeError, match="n must be an int"):
        f(x, n=2.5)
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        f(x, axis=2)
    with pytest.raises(ValueError, match="invalid norm.*ortho"):
        f(x, norm="bogus")
    with pytest.raises(ValueError, match="invalid norm"):
        f(x, norm=None)
    with pytest.raises(ValueError, match="0-d"):
        f(gpuarr.asarray(np.ones((), dtype), device=device))
    with pytest.raises(TypeError, match="gpuarr.Array"):
        f(np.ones(4))


def test_irfft_of_a_single_term_needs_n(device):
    x = gpuarr.asarray(np.ones(1, np.complex64), device=device)
    with pytest.raises(ValueError, match="pass n"):
        gfft.irfft(x)
    np.testing.assert_allclose(to_numpy(gfft.irfft(x, n=1)),
                               np.fft.irfft(np.ones(1), n=1))


@pytest.mark.parametrize("name", N_D)
def test_nd_argument_errors(device, name):
    x = gpuarr.asarray(_data((2, 4), "float32"), device=device)
    f = getattr(gfft, name)
    with pytest.raises(ValueError, match="s has 1 entries but axes has 2"):
        f(x, s=(3,), axes=(0, 1))
    with pytest.raises(ValueError, match="at least 1"):
        f(x, s=(0, 4))
    with pytest.raises(np.exceptions.AxisError):
        f(x, axes=(0, 5))
    with pytest.raises(TypeError, match="axes must be a sequence"):
        f(x, axes=1)
    with pytest.raises(ValueError, match="invalid norm"):
        f(x, norm="Ortho")


def test_freq_argument_errors():
    for name in ("fftfreq", "rfftfreq"):
        f = getattr(gfft, name)
        with pytest.raises(ValueError, match="at least 1"):
            f(0)
        with pytest.raises(TypeError, match="n must be an int"):
            f(4.0)
        with pytest.raises(ValueError, match="real floating dtype"):
            f(4, dtype=gpuarr.int32)
        with pytest.raises(ValueError, match="must not be 0"):
            f(4, d=0)


# --- NumPy's functions on gpuarr arrays -------------------------------------------------

def test_numpy_fft_functions_dispatch_to_gpuarr(device):
    x = _data((4, 6), "float32")
    g = gpuarr.asarray(x, device=device)
    for call in [lambda m, a: m.fft.fft(a), lambda m, a: m.fft.ifft(a, n=9, axis=0),
                 lambda m, a: m.fft.rfft(a, norm="ortho"), lambda m, a: m.fft.rfftn(a),
                 lambda m, a: m.fft.irfftn(m.fft.rfftn(a), s=(4, 6), axes=(0, 1)),
                 lambda m, a: m.fft.fftn(a, norm=None), lambda m, a: m.fft.hfft(a),
                 lambda m, a: m.fft.fftshift(a, axes=1)]:
        got, want = call(np, g), call(np, x)
        assert isinstance(got, gpuarr.Array) and got.device == device
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-4, atol=1e-4)


def test_numpy_fft_with_out_is_refused():
    g = gpuarr.asarray(_data(8, "complex64"))
    with pytest.raises(TypeError, match="out"):
        np.fft.fft(g, out=np.empty(8, np.complex64))


# --- the namespace ----------------------------------------------------------------------

STANDARD_SIGNATURES = {
    "fft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "ifft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "rfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "irfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "hfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "ihfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "fftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "ifftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "rfftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "irfftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "fftfreq": "(n, /, *, d=1.0, dtype=None, device=None)",
    "rfftfreq": "(n, /, *, d=1.0, dtype=None, device=None)",
    "fftshift": "(x, /, *, axes=None)",
    "ifftshift": "(x, /, *, axes=None)",
}


def test_the_extension_has_the_standards_functions_and_signatures():
    assert gpuarr.fft is gfft
    assert sorted(gfft.__all__) == sorted(STANDARD_SIGNATURES)
    for name, sig in STANDARD_SIGNATURES.items():
        f = getattr(gfft, name)
        assert str(inspect.signature(f)) == sig, name
        assert f.__doc__.startswith(name + sig), name


# --- CUDA: cuFFT behind the same entry -------------------------------------------------

@needs_cuda_devices
@pytest.mark.parametrize("name,dtype", [("fft", "complex64"), ("ifft", "complex128"),
                                        ("rfft", "float32"), ("irfft", "complex128")])
def test_cuda_fft_queues_without_a_host_wait(name, dtype):
    dev = gpuarr.gpu(0)
    x = gpuarr.asarray(_data((16, 64), dtype), device=dev)
    getattr(gfft, name)(x)  # the plan is made (and cached) here
    gpuarr.synchronize(dev)
    with gpuarr.testing.count_kernels(dev) as k:
        y = getattr(gfft, name)(x)
    assert k.supported
    assert k.syncs == 0 and k.d2h == 0 and k.h2d == 0, k
    _check(y, getattr(np.fft, name)(to_numpy(x)), dev, _tol(dtype))


@needs_cuda_devices
def test_cuda_plans_are_cached_and_evicted_without_wrong_answers():
    # more shapes than the per-device cache holds (GA_FFT_PLANS = 16 in ga_cufft.cu):
    # evicting a plan waits for the stream, and every answer stays right
    dev = gpuarr.gpu(0)
    xs = [_data((3, n), "complex64") for n in range(2, 22)]
    for _ in range(2):
        outs = [gfft.fft(gpuarr.asarray(x, device=dev)) for x in xs]
        for x, y in zip(xs, outs):
            _check(y, np.fft.fft(x), dev, _tol("complex64"))


@needs_cuda_devices
def test_cuda_fft_on_the_second_device_stays_there():
    dev = gpuarr.gpu(gpuarr.num_gpus() - 1)
    x = _data((4, 12), "complex128")
    _check(gfft.ifft(gpuarr.asarray(x, device=dev), axis=0), np.fft.ifft(x, axis=0), dev,
           _tol("complex128"))


@needs_cuda_devices
def test_a_failing_cufft_call_raises_cuda_error_naming_it(monkeypatch):
    if gpuarr._core._gpu_mode()[0] != "emulated":
        pytest.skip("needs CUDA GPUs: emulated ones, whose cuFFT can be made to fail")
    dev = gpuarr.gpu(0)
    x = gpuarr.asarray(_data(8, "complex64"), device=dev)
    monkeypatch.setenv("GPUARR_CUDA_EMULATE_FAIL", "cufft")
    with pytest.raises(gpuarr.CudaError, match="CUFFT_EXEC_FAILED in cufftExecC2C"):
        gfft.fft(x)
    monkeypatch.delenv("GPUARR_CUDA_EMULATE_FAIL")
    _check(gfft.fft(x), np.fft.fft(to_numpy(x)), dev, _tol("complex64"))
