"""Twins: every reduction and scan gives the same answer on the CPU and on this
process's GPU (simulated or emulated CUDA; CI runs the file in both modes), compared
directly with each other rather than each with NumPy, in the style of ggml's
test-backend-ops. The inputs are the corners where devices drift apart: NaN, +-inf,
values beyond the range of an integer `dtype=`, negative values into unsigned
accumulators, and empty arrays.

Both devices take their reduction math from one header (csrc/kernels/ga_reduce_math.h), so a
wrong rule there would be wrong on both and the twins would still agree: the CPU's
result is also compared with NumPy wherever NumPy defines it (not for a float ->
integer `dtype=`, which NumPy leaves to the machine). Complex results compare real
and imaginary parts separately, so the NaN a max keeps (nan+1j or 1+nanj) counts.

Plus the one float -> integer rule (ga_elementwise_math.h, ga_f64_to_<dt>): NumPy's results on
x86 on every device (INT64_MIN for NaN and out-of-range int64, the int32 result
wrapped for narrower types), compared element by element with NumPy's scalar
conversion (its SIMD loops differ for uint32 on a few inputs)."""
import warnings

import numpy as np
import pytest

import gpuarr

from conftest import ALL_DTYPES, INT_DTYPES, X86, x86_float_to_int

pytestmark = pytest.mark.skipif(gpuarr.num_gpus() == 0,
                                reason="needs a GPU (set GPUARR_SIMULATE_GPUS=2 to "
                                       "simulate two)")

SPECIAL = [np.nan, 1.0, np.inf, -np.inf, -2.5, 3e9, 0.5, -0.0, 7.0, -300.0]

REDUCTIONS = ["sum", "prod", "max", "min", "argmax", "argmin", "all", "any", "mean",
              "var", "std"]
SCANS = ["cumulative_sum", "cumulative_prod"]
WITH_DTYPE = {"sum", "prod", "cumulative_sum", "cumulative_prod"}
OUT_DTYPES = [None, "int64", "uint64", "int8", "uint8", "int32", "uint32", "float16",
              "float32", "float64", "complex64", "complex128"]


def _inputs(dtype):
    """(name, host array): the specials cast to `dtype` as NumPy would for values it
    can hold (the cast itself is not under test here), shaped to test an axis too."""
    vals = np.array(SPECIAL)
    with np.errstate(all="ignore"):
        return _cases(_cast(vals, dtype))


def _cast(vals, dtype):
    if dtype == "bool":
        return vals != 0
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        finite = np.nan_to_num(vals, nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(np.trunc(finite), info.min, info.max).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (vals + 1j * vals[::-1]).astype(dtype)
    return vals.astype(dtype)


def _cases(data):
    return [("specials", data), ("reversed", data[::-1]), ("matrix", data.reshape(2, 5)),
            ("empty", data[:0]), ("empty rows", data[:0].reshape(0, 5))]


def _run(fn, dev, host, **kw):
    x = gpuarr.asarray(host, device=dev)
    try:
        with np.errstate(all="ignore"):
            return fn(x, **kw).numpy()
    except Exception as e:  # the same refusal on both devices is agreement too
        return type(e)


def _same(a, b, what, other="GPU"):
    if isinstance(a, type) or isinstance(b, type):
        assert a == b, f"{what}: CPU gives {a}, {other} gives {b}"
        return
    assert a.dtype == b.dtype and a.shape == b.shape, f"{what}: {a!r} vs {b!r}"
    if a.dtype.kind == "c":
        _same(a.real.copy(), b.real.copy(), what + " (real part)", other)
        _same(a.imag.copy(), b.imag.copy(), what + " (imaginary part)", other)
        return
    if a.dtype.kind in "fc":
        # summation order differs between devices (blocks, then a tree): a float32
        # sum of 10 values agrees to a few ulp; NaN and inf must match exactly
        rtol = 1e-5 if a.dtype in (np.float16, np.float32, np.complex64) else 1e-12
        if a.dtype == np.float16:
            rtol = 1e-3
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0, equal_nan=True,
                                   err_msg=f"{what}: CPU vs {other}")
    else:
        np.testing.assert_array_equal(a, b, err_msg=f"{what}: CPU vs {other}")


ACCUMULATE = {"sum", "prod", "cumulative_sum", "cumulative_prod"}


def _numpy(op, host, axis, out_dtype):
    """NumPy's answer, or None where NumPy's differs by design: a float or complex
    input reduced into an integer or bool `dtype=` (NumPy leaves the cast of NaN, inf
    and values out of range to the machine), a complex input into a real one, and
    sums and products into float16, float32 or complex64, which NumPy accumulates in
    that precision and gpuarr in double (scans, CPU sums) or compensated (GPU sums)."""
    kind = host.dtype.kind
    if out_dtype is not None:
        ok = np.dtype(out_dtype).kind
        if kind in "fc" and ok in "iub" or kind == "c" and ok == "f":
            return None
    if op in ACCUMULATE:
        res = np.dtype(out_dtype) if out_dtype is not None else np.sum(host[:0]).dtype
        if res in (np.float16, np.float32, np.complex64):
            return None
    kw = {"axis": axis}
    if out_dtype is not None:
        kw["dtype"] = out_dtype
    fn = {"cumulative_sum": np.cumulative_sum, "cumulative_prod": np.cumulative_prod}.get(
        op, getattr(np, op))
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty slice
            return np.asarray(fn(host, **kw))
    except (TypeError, ValueError) as e:
        return type(e)


def _ops():
    for op in REDUCTIONS + SCANS:
        for out in (OUT_DTYPES if op in WITH_DTYPE else [None]):
            yield op, out


@pytest.mark.parametrize("op,out_dtype", list(_ops()),
                         ids=[f"{o}-{d}" for o, d in _ops()])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cpu_and_gpu_agree(op, out_dtype, dtype):
    fn = getattr(gpuarr, op)
    for name, host in _inputs(dtype):
        axes = [None] if host.ndim == 1 else [None, 0, 1]
        for axis in axes:
            kw = {"axis": axis}
            if out_dtype is not None:
                kw["dtype"] = getattr(gpuarr, out_dtype)
            if op in SCANS and axis is None and host.ndim > 1:
                continue  # the array API's scans need an axis for n-d input
            what = f"{op}({dtype} {name}, axis={axis}, dtype={out_dtype})"
            cpu = _run(fn, gpuarr.cpu(), host, **kw)
            _same(cpu, _run(fn, gpuarr.gpu(0), host, **kw), what)
            want = _numpy(op, host, axis, out_dtype)
            if want is not None and not isinstance(cpu, type):
                _same(cpu, want.astype(cpu.dtype) if isinstance(want, np.ndarray) and
                      op in ("argmax", "argmin") else want, what, "NumPy")


def _numpy_x86(vals, to):
    """NumPy's conversion of each value alone (a one-element array: its scalar loop,
    the x86 truncating conversion gpuarr writes out on every device)."""
    with np.errstate(all="ignore"):
        return np.array([np.array([v], np.float64).astype(to)[0] for v in vals], dtype=to)


@pytest.mark.parametrize("to", INT_DTYPES)
@pytest.mark.parametrize("frm", ["float16", "float32", "float64", "complex64"])
def test_float_to_int_is_numpys_x86_rule_on_every_device(frm, to):
    vals = [np.nan, np.inf, -np.inf, 1e30, -1e30, 300.0, -300.0, -1.0, -0.9, 0.9, 127.9,
            -128.9, 65535.5, 70000.0, 2.0**31, -(2.0**31) - 1, 3e9, -3e9, 2.0**63,
            -(2.0**63), 2.0**64, 1e19, 42.7]
    with np.errstate(over="ignore"):
        host = np.array(vals).astype(frm)
    want = x86_float_to_int(host.real.astype(np.float64), to)
    if X86:  # where NumPy's own conversion is x86's, it is the oracle of the oracle
        np.testing.assert_array_equal(want, _numpy_x86(host.real.astype(np.float64), to))
    for dev in [gpuarr.cpu(), gpuarr.gpu(0)]:
        x = gpuarr.asarray(host, device=dev)
        got = x.astype(getattr(gpuarr, to)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"astype on {dev!r}")
        # setitem from an array and copyto take the same cast
        y = gpuarr.zeros(host.shape, dtype=getattr(gpuarr, to), device=dev)
        y[...] = x
        np.testing.assert_array_equal(y.numpy(), want, err_msg=f"setitem on {dev!r}")


def test_float_to_int64_overflow_is_int64_min_as_numpy():
    """Issue 31: 1e300, NaN and -inf as int64 are INT64_MIN on x86 NumPy (gpuarr used
    to saturate to INT64_MAX and give 0 for NaN)."""
    imin = np.iinfo(np.int64).min
    for dev in [gpuarr.cpu(), gpuarr.gpu(0)]:
        for dt in ("float64", "complex128", "float32"):
            with np.errstate(over="ignore"):  # 1e300 is inf as float32
                host = np.array([1e300, np.nan, -np.inf, 5.5]).astype(dt)
            x = gpuarr.asarray(host, device=dev)
            assert x.astype(gpuarr.int64).numpy().tolist() == [imin, imin, imin, 5], dt


def test_integer_sum_of_specials_follows_the_rule_on_every_device():
    """[nan, 1, inf] summed as int64: each element converts by the rule (INT64_MIN,
    1, INT64_MIN), and the sum wraps like NumPy's integer sums; the scan shows each
    step."""
    host = np.array([np.nan, 1, np.inf], dtype=np.float32)
    imin = np.iinfo(np.int64).min
    for dev in [gpuarr.cpu(), gpuarr.gpu(0)]:
        x = gpuarr.asarray(host, device=dev)
        assert int(gpuarr.sum(x, dtype=gpuarr.int64)) == 1, dev
        np.testing.assert_array_equal(
            gpuarr.cumulative_sum(x, dtype=gpuarr.int64).numpy(), [imin, imin + 1, 1])
        assert int(gpuarr.max(x.astype(gpuarr.int64))) == 1
        # negative floats into an unsigned accumulator: -1.0 is 2**64 - 1, as uint64
        neg = gpuarr.asarray(np.array([-1.0, 2.0]), device=dev)
        assert int(gpuarr.sum(neg, dtype=gpuarr.uint64)) == 1, dev
