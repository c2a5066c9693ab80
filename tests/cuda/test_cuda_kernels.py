"""The CUDA backend's kernels (csrc/cuda/kernels/k_*.cu), on emulated or real CUDA devices.

Run with GPUARR_CUDA_EMULATE=2 (the kernels compiled for the CPU) or on a GPU; skipped
otherwise. Two kinds of tests: through the public API (random, reductions, scans,
arange, indexing), and straight through the plugin's backend table with ctypes for
the entries whose Python front end may not be built yet (elementwise, gather,
scatter, nonzero), so the kernels are checked either way.
"""
import ctypes
import os

import numpy as np
import pytest

import gpuarr
from gpuarr import _core
from conftest import needs_cuda_devices

pytestmark = needs_cuda_devices

rng = np.random.default_rng(1234)


def _gpu():
    return gpuarr.gpu(0)


# --- random: the same numbers as the CPU ------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_uniform_same_seed_same_numbers_on_cpu_and_gpu(dtype):
    gpuarr.random.seed(42)
    a = gpuarr.random.uniform(-2.0, 3.0, size=(257,), dtype=dtype, device=gpuarr.cpu())
    gpuarr.random.seed(42)
    b = gpuarr.random.uniform(-2.0, 3.0, size=(257,), dtype=dtype, device=_gpu())
    np.testing.assert_array_equal(a.numpy().view(np.uint8), b.numpy().view(np.uint8))
    assert b.numpy().min() >= -2.0 and b.numpy().max() < 3.0


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint32"])
def test_integers_same_seed_same_numbers_on_cpu_and_gpu(dtype):
    gpuarr.random.seed(7)
    a = gpuarr.random.integers(-5 if dtype[0] == "i" else 0, 100, size=1000, dtype=dtype,
                               device=gpuarr.cpu())
    gpuarr.random.seed(7)
    b = gpuarr.random.integers(-5 if dtype[0] == "i" else 0, 100, size=1000, dtype=dtype,
                               device=_gpu())
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_normal_same_seed_same_numbers_on_cpu_and_emulated_gpu():
    gpuarr.random.seed(5)
    a = gpuarr.random.normal(1.0, 2.0, size=300, dtype="float64", device=gpuarr.cpu())
    gpuarr.random.seed(5)
    b = gpuarr.random.normal(1.0, 2.0, size=300, dtype="float64", device=_gpu())
    # A GPU's log and cos are not the host's libm, and the emulated device's differ
    # too, within CUDA's documented bounds: z = sqrt(-2 log u1) cos(2 pi u2) may differ
    # relatively by 8 eps (the count is in test_random.py), so v = 1 + 2 z by 2 * 8 eps
    # |z| plus one rounding of v on each device. Relative to v alone the bound would
    # not hold where 1 + 2 z cancels.
    a, b = a.numpy(), b.numpy()
    eps = np.finfo(np.float64).eps
    tol = 2 * 8 * eps * np.abs((a - 1.0) / 2.0) + np.spacing(np.abs(a))
    assert np.all(np.abs(b - a) <= tol), np.max(np.abs(b - a) / tol)


def test_random_continues_the_counter_across_calls_on_gpu():
    gpuarr.random.seed(9)
    whole = gpuarr.random.uniform(size=20, dtype="float64", device=_gpu()).numpy()
    gpuarr.random.seed(9)
    first = gpuarr.random.uniform(size=8, dtype="float64", device=_gpu()).numpy()
    rest = gpuarr.random.uniform(size=12, dtype="float64", device=_gpu()).numpy()
    np.testing.assert_array_equal(whole, np.concatenate([first, rest]))


# --- reductions ---------------------------------------------------------------------

RED_SIZES = [1, 31, 32, 33, 1000]


@pytest.mark.parametrize("n", RED_SIZES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "bool"])
def test_full_reductions_of_odd_sizes_match_numpy(n, dtype):
    a = (rng.standard_normal(n) * 50).astype(dtype)
    x = gpuarr.asarray(a, device=_gpu())
    tol = dict(rtol=1e-5) if dtype == "float32" else dict(rtol=1e-12)
    np.testing.assert_allclose(x.sum().numpy(), a.sum(), **tol)
    assert x.sum().dtype == str(a.sum().dtype)
    np.testing.assert_array_equal(x.max().numpy(), a.max())
    np.testing.assert_array_equal(x.min().numpy(), a.min())
    assert int(x.argmax().numpy()) == a.argmax()
    assert int(x.argmin().numpy()) == a.argmin()
    assert bool(x.all().numpy()) == a.all()
    assert bool(x.any().numpy()) == a.any()


def test_float32_sum_of_many_ones_is_exact():
    a = np.ones(100_003, dtype=np.float32)
    x = gpuarr.asarray(a, device=_gpu())
    assert float(x.sum().numpy()) == 100_003.0


def test_prod_of_small_values_matches_numpy():
    a = rng.uniform(0.5, 1.5, size=77)
    x = gpuarr.asarray(a, device=_gpu())
    np.testing.assert_allclose(x.prod().numpy(), a.prod(), rtol=1e-12)
    ai = rng.integers(-3, 4, size=40).astype(np.int16)
    np.testing.assert_array_equal(gpuarr.asarray(ai, device=_gpu()).prod().numpy(),
                                  ai.prod())


@pytest.mark.parametrize("axis", [0, 1, 2, (0, 2), (1, 2), None])
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64"])
def test_reductions_over_axis_combinations_match_numpy(axis, dtype):
    a = (rng.standard_normal((5, 33, 7)) * 10).astype(dtype)
    if dtype == "complex64":
        a = a + 1j * a[::-1]
    x = gpuarr.asarray(a, device=_gpu())
    # float32 sums with cancellation: compare against an exact-ish sum, with atol
    np.testing.assert_allclose(x.sum(axis=axis).numpy(), a.astype(np.complex128 if
                               dtype == "complex64" else np.float64).sum(axis=axis),
                               rtol=1e-5, atol=1e-4)
    if dtype != "complex64":
        np.testing.assert_array_equal(x.max(axis=axis).numpy(), a.max(axis=axis))
        np.testing.assert_array_equal(x.min(axis=axis).numpy(), a.min(axis=axis))
    if axis is None or isinstance(axis, int):
        np.testing.assert_array_equal(x.argmax(axis=axis).numpy(), a.argmax(axis=axis))


@pytest.mark.parametrize("view", ["step2", "reversed", "transposed", "column"])
def test_reductions_of_strided_views_match_numpy(view):
    base = rng.standard_normal((40, 66))
    xb = gpuarr.asarray(base, device=_gpu())
    pick = {
        "step2": lambda t: t[::2, 1::3],
        "reversed": lambda t: t[::-1, ::-2],
        "transposed": lambda t: t.T if hasattr(t, "T") else np.transpose(t),
        "column": lambda t: t[:, 5],
    }[view]
    x = pick(xb)
    a = pick(base)
    for axis in [None, 0, -1]:
        np.testing.assert_allclose(x.sum(axis=axis).numpy(), a.sum(axis=axis), rtol=1e-12)
        np.testing.assert_array_equal(x.max(axis=axis).numpy(), a.max(axis=axis))
        np.testing.assert_array_equal(x.argmin(axis=axis).numpy(), a.argmin(axis=axis))


def test_outer_axis_reduction_uses_many_outputs_and_matches_numpy():
    # sum over axis 0 of a wide matrix: the thread-per-output kernel (coalesced)
    a = rng.standard_normal((70, 5000)).astype(np.float32)
    x = gpuarr.asarray(a, device=_gpu())
    np.testing.assert_allclose(x.sum(axis=0).numpy(), a.sum(axis=0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_max_and_argmax_propagate_the_first_nan(dtype):
    a = np.array([1.0, 7.0, np.nan, 7.0, np.nan, -3.0] * 11, dtype=dtype)
    x = gpuarr.asarray(a, device=_gpu())
    assert np.isnan(x.max().numpy()) and np.isnan(x.min().numpy())
    assert int(x.argmax().numpy()) == 2 == a.argmax()
    assert int(x.argmin().numpy()) == 2 == a.argmin()


def test_argmax_takes_the_first_of_ties():
    a = np.zeros(200, dtype=np.int32)
    a[[17, 150, 33]] = 9
    x = gpuarr.asarray(a, device=_gpu())
    assert int(x.argmax().numpy()) == 17
    assert int(x.argmin().numpy()) == 0


def test_float16_sum_matches_numpy():
    a = rng.uniform(-1, 1, size=500).astype(np.float16)
    x = gpuarr.asarray(a, device=_gpu())
    np.testing.assert_allclose(float(x.sum().numpy()), float(a.sum()), rtol=2e-3, atol=2e-2)


def test_all_any_treat_nan_as_true():
    a = np.array([np.nan, 1.0, 2.0])
    x = gpuarr.asarray(a, device=_gpu())
    assert bool(x.all().numpy()) and bool(x.any().numpy())
    z = gpuarr.asarray(np.zeros(45), device=_gpu())
    assert not bool(z.any().numpy())


# --- scans ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "complex64"])
def test_cumsum_and_cumprod_along_each_axis_match_numpy(dtype):
    a = rng.integers(1, 4, size=(4, 9)).astype(dtype)
    x = gpuarr.asarray(a, device=_gpu())
    for axis in [0, 1]:
        np.testing.assert_allclose(gpuarr.cumsum(x, axis=axis).numpy(),
                                   np.cumsum(a, axis=axis), rtol=1e-6)
        np.testing.assert_allclose(gpuarr.cumprod(x, axis=axis).numpy(),
                                   np.cumprod(a, axis=axis), rtol=1e-6)


# --- arange --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint16", "float16", "float32",
                                   "float64", "complex128"])
def test_arange_on_gpu_matches_numpy(dtype):
    x = gpuarr.arange(3, 90, 7, dtype=dtype, device=_gpu())
    np.testing.assert_array_equal(x.numpy(), np.arange(3, 90, 7, dtype=dtype))
    f = gpuarr.arange(0.5, 3.0, 0.1, dtype="float64", device=_gpu())
    np.testing.assert_array_equal(f.numpy(), gpuarr.arange(0.5, 3.0, 0.1, dtype="float64",
                                                           device=gpuarr.cpu()).numpy())


# --- the backend table, directly ----------------------------------------------------
# Mirrors of ga_backend.h's structs (GA_MAXDIMS 24, GA_MAXARGS 4).

MAXDIMS, MAXARGS = 24, 4
DT = {name: i for i, name in enumerate([
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128"])}
GA_ERR_INDEX = 4


def _op_numbers():
    return dict(_core.elementwise_ops)  # the codes of ga_ops.h's list, from the core


class _Scalar(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("u", ctypes.c_uint64), ("f", ctypes.c_double),
                ("bytes", ctypes.c_ubyte * 16)]


class _Operand(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("strides", ctypes.c_int64 * MAXDIMS),
                ("dtype", ctypes.c_int32), ("is_scalar", ctypes.c_int32),
                ("value", _Scalar)]


class _Loop(ctypes.Structure):
    _fields_ = [("ndim", ctypes.c_int32), ("nargs", ctypes.c_int32),
                ("size", ctypes.c_int64), ("shape", ctypes.c_int64 * MAXDIMS),
                ("args", _Operand * MAXARGS)]


class _IndexDesc(ctypes.Structure):
    _fields_ = [("loop", _Loop), ("index_dims", ctypes.c_int64 * MAXARGS),
                ("index_strides", ctypes.c_int64 * MAXARGS)]


class _ReduceDesc(ctypes.Structure):
    _fields_ = [("op", ctypes.c_int32), ("in_dtype", ctypes.c_int32),
                ("out_dtype", ctypes.c_int32), ("out_ndim", ctypes.c_int32),
                ("red_ndim", ctypes.c_int32), ("out_size", ctypes.c_int64),
                ("red_size", ctypes.c_int64), ("out_shape", ctypes.c_int64 * MAXDIMS),
                ("red_shape", ctypes.c_int64 * MAXDIMS), ("in_", ctypes.c_void_p),
                ("in_out_strides", ctypes.c_int64 * MAXDIMS),
                ("in_red_strides", ctypes.c_int64 * MAXDIMS), ("out", ctypes.c_void_p),
                ("out_strides", ctypes.c_int64 * MAXDIMS)]


_F = ctypes.CFUNCTYPE
_i, _p, _vp = ctypes.c_int, ctypes.POINTER, ctypes.c_void_p


class _Backend(ctypes.Structure):
    _fields_ = [
        ("abi_version", _i), ("name", ctypes.c_char_p),
        ("device_count", _vp), ("device_props", _vp),
        ("synchronize", _F(_i, _i)),
        ("alloc", _F(_i, _i, ctypes.c_size_t, _p(_vp))),
        ("free", _F(None, _i, _vp, ctypes.c_size_t)),
        ("memory_stats", _vp), ("empty_cache", _vp),
        ("copy_h2d", _F(_i, _i, _vp, _vp, ctypes.c_size_t)),
        ("copy_d2h", _F(_i, _i, _vp, _vp, ctypes.c_size_t)),
        ("copy_d2d", _vp), ("copy_peer", _vp),
        ("elementwise", _F(_i, _i, _i, _p(_Loop))),
        ("reduce", _F(_i, _i, _p(_ReduceDesc))), ("scan", _vp), ("gemm", _vp), ("random", _vp),
        ("gather", _F(_i, _i, _p(_IndexDesc))),
        ("scatter", _F(_i, _i, _p(_IndexDesc))),
        ("nonzero", _F(_i, _i, _p(_Loop), ctypes.c_int64, _vp)),
        ("arange", _vp),
        ("last_error", _F(ctypes.c_char_p)),
        ("unavailable_reason", _vp),
    ]


@pytest.fixture(scope="module")
def plugin():
    mode = _core._gpu_mode()[0]
    name = "libgpuarr_cuda_emu.so" if mode == "emulated" else "libgpuarr_cuda.so"
    path = os.path.join(os.path.dirname(_core.__file__), name)
    if not os.path.exists(path):
        pytest.skip(f"{name} is not next to _core")
    gpuarr.asarray(np.zeros(1), device=_gpu())  # the core has loaded and set it up
    lib = ctypes.CDLL(path)  # the same handle the core holds
    lib.gpuarr_cuda_backend.restype = _p(_Backend)
    lib.gpuarr_cuda_backend.argtypes = [_i]
    # emulated: the same count again is a no-op; real: 0
    n = int(os.environ.get("GPUARR_CUDA_EMULATE", "0") or 0)
    return lib.gpuarr_cuda_backend(n).contents


class _Dev:
    """Host arrays copied to device 0 through the table, freed at the end."""

    def __init__(self, be):
        self.be, self.blocks = be, []

    def put(self, a):
        a = np.ascontiguousarray(a)
        ptr = _vp()
        assert self.be.alloc(0, max(a.nbytes, 1), ctypes.byref(ptr)) == 0
        self.blocks.append((ptr.value, max(a.nbytes, 1)))
        if a.nbytes:
            assert self.be.copy_h2d(0, ptr.value, a.ctypes.data, a.nbytes) == 0
        return ptr.value

    def get(self, ptr, like):
        out = np.empty_like(like)
        assert self.be.copy_d2h(0, out.ctypes.data, ptr, out.nbytes) == 0
        return out

    def close(self):
        for p, n in self.blocks:
            self.be.free(0, p, n)


def _operand(op, ptr, arr_view_strides, dtype):
    op.data = ptr
    for k, s in enumerate(arr_view_strides):
        op.strides[k] = s
    op.dtype = DT[dtype]
    op.is_scalar = 0


def _check(be, st):
    assert st == 0, be.last_error().decode()


def test_elementwise_add_over_a_large_strided_view_matches_numpy(plugin):
    ops = _op_numbers()
    dev = _Dev(plugin)
    try:
        base = rng.standard_normal((300, 402)).astype(np.float32)
        view = base[::3, ::-2]  # (100, 201), strides (3*402*4, -8)
        pb = dev.put(base)
        out = np.zeros(view.shape, dtype=np.float32)
        po = dev.put(out)
        loop = _Loop()
        loop.ndim, loop.nargs, loop.size = 2, 3, view.size
        loop.shape[0], loop.shape[1] = view.shape
        _operand(loop.args[0], po, out.strides, "float32")
        start = pb + (view.__array_interface__["data"][0] - base.ctypes.data)
        _operand(loop.args[1], start, view.strides, "float32")
        loop.args[2].dtype, loop.args[2].is_scalar = DT["float32"], 1
        ctypes.memmove(loop.args[2].value.bytes, np.float32(0.25).tobytes(), 4)
        _check(plugin, plugin.elementwise(0, ops["add"], ctypes.byref(loop)))
        np.testing.assert_array_equal(dev.get(po, out), view + np.float32(0.25))
    finally:
        dev.close()


def test_elementwise_cast_of_a_broadcast_operand_matches_numpy(plugin):
    ops = _op_numbers()
    dev = _Dev(plugin)
    try:
        row = np.array([-1.7, 2.5, 300.0, np.nan, 0.0], dtype=np.float64)
        pr = dev.put(row)
        out = np.zeros((3, 5), dtype=np.float32)
        po = dev.put(out)
        loop = _Loop()
        loop.ndim, loop.nargs, loop.size = 2, 2, 15
        loop.shape[0], loop.shape[1] = 3, 5
        _operand(loop.args[0], po, out.strides, "float32")
        _operand(loop.args[1], pr, (0, 8), "float64")  # broadcast over rows
        _check(plugin, plugin.elementwise(0, ops["copy"], ctypes.byref(loop)))
        np.testing.assert_array_equal(dev.get(po, out),
                                      np.broadcast_to(row.astype(np.float32), (3, 5)))
    finally:
        dev.close()


def _index_desc(dev, base, idx, res, res_ptr):
    """x[idx] along axis 0 of a 2-d base: loop over (len(idx), base.shape[1])."""
    d = _IndexDesc()
    l = d.loop
    l.ndim, l.nargs, l.size = 2, 3, idx.size * base.shape[1]
    l.shape[0], l.shape[1] = idx.size, base.shape[1]
    _operand(l.args[0], res_ptr, res.strides, str(base.dtype))
    _operand(l.args[1], dev.put(base), (0, base.strides[1]), str(base.dtype))
    _operand(l.args[2], dev.put(idx), (8, 0), "int64")
    d.index_dims[0], d.index_strides[0] = base.shape[0], base.strides[0]
    return d


def test_gather_with_negative_indices_matches_numpy(plugin):
    dev = _Dev(plugin)
    try:
        base = np.arange(24, dtype=np.int16).reshape(6, 4)
        idx = np.array([5, -1, 0, -6, 2], dtype=np.int64)
        res = np.zeros((5, 4), dtype=np.int16)
        pr = dev.put(res)
        d = _index_desc(dev, base, idx, res, pr)
        _check(plugin, plugin.gather(0, ctypes.byref(d)))
        np.testing.assert_array_equal(dev.get(pr, res), base[idx])
    finally:
        dev.close()


@pytest.mark.parametrize("bad", [6, -7])
def test_gather_with_an_out_of_range_index_is_an_index_error(plugin, bad):
    dev = _Dev(plugin)
    try:
        base = np.arange(24, dtype=np.float64).reshape(6, 4)
        idx = np.array([1, bad, 2], dtype=np.int64)
        res = np.zeros((3, 4))
        d = _index_desc(dev, base, idx, res, dev.put(res))
        # queued without a wait: the kernel records the index, the next wait reports it
        _check(plugin, plugin.gather(0, ctypes.byref(d)))
        assert plugin.synchronize(0) == GA_ERR_INDEX
        msg = plugin.last_error().decode()
        assert str(bad) in msg and "size 6" in msg
    finally:
        dev.close()


def test_scatter_with_an_out_of_range_index_writes_nothing(plugin):
    dev = _Dev(plugin)
    try:
        base = np.zeros((6, 4), dtype=np.float32)
        vals = np.ones((3, 4), dtype=np.float32)
        pv = dev.put(vals)
        idx = np.array([1, 9, 2], dtype=np.int64)
        d = _index_desc(dev, base, idx, vals, pv)
        pbase = d.loop.args[1].data
        _check(plugin, plugin.scatter(0, ctypes.byref(d)))
        assert plugin.synchronize(0) == GA_ERR_INDEX  # deferred to the next wait
        np.testing.assert_array_equal(dev.get(pbase, base), base)
        idx_ok = dev.put(np.array([1, -1, 2], dtype=np.int64))
        d.loop.args[2].data = idx_ok
        _check(plugin, plugin.scatter(0, ctypes.byref(d)))
        want = base.copy()
        want[[1, -1, 2]] = 1
        np.testing.assert_array_equal(dev.get(pbase, base), want)
    finally:
        dev.close()


@pytest.mark.parametrize("shape", [(7,), (3, 50), (2, 3, 33)])
def test_nonzero_writes_positions_in_c_order(plugin, shape):
    dev = _Dev(plugin)
    try:
        m = rng.random(shape) < 0.3
        pm = dev.put(m)
        loop = _Loop()
        loop.ndim, loop.nargs, loop.size = len(shape), 1, m.size
        for k, s in enumerate(shape):
            loop.shape[k] = s
        _operand(loop.args[0], pm, m.strides, "bool")
        want = np.argwhere(m).astype(np.int64)
        out = np.zeros(max(want.size, 1), dtype=np.int64)
        po = dev.put(out)
        _check(plugin, plugin.nonzero(0, ctypes.byref(loop), len(want), po))
        got = dev.get(po, out)[:want.size].reshape(want.shape)
        np.testing.assert_array_equal(got, want)
    finally:
        dev.close()


def test_gather_through_the_public_api_raises_index_error():
    x = gpuarr.asarray(np.arange(5.0), device=_gpu())
    x[gpuarr.asarray(np.array([0, 1]), device=_gpu())]
    with pytest.raises(IndexError, match="5"):
        x[gpuarr.asarray(np.array([0, 5]), device=_gpu())]
        gpuarr.synchronize(_gpu())  # a device index array's error is deferred to here


RED_OPS = ["sum", "prod", "max", "min", "argmax", "argmin", "all", "any"]


@pytest.mark.parametrize("op", RED_OPS)
@pytest.mark.parametrize("red_n", [1, 33, 200])
def test_reduce_kernel_over_a_negative_stride_view_matches_numpy(plugin, op, red_n):
    # in[o, r] = base[::-2, ::3] reduced over its last axis, through the table
    dev = _Dev(plugin)
    try:
        base = rng.uniform(0.9, 1.1, size=(2 * 9, 3 * red_n))
        view = base[::-2, ::3]
        pb = dev.put(base)
        want = getattr(np, op)(view, axis=1)
        out = np.zeros(want.shape, dtype=want.dtype)
        po = dev.put(out)
        d = _ReduceDesc()
        d.op = RED_OPS.index(op)
        d.in_dtype, d.out_dtype = DT["float64"], DT[str(want.dtype)]
        d.out_ndim, d.red_ndim, d.out_size, d.red_size = 1, 1, view.shape[0], red_n
        d.out_shape[0], d.red_shape[0] = view.shape
        d.in_ = pb + (view.__array_interface__["data"][0] - base.ctypes.data)
        d.in_out_strides[0], d.in_red_strides[0] = view.strides
        d.out, d.out_strides[0] = po, out.strides[0]
        _check(plugin, plugin.reduce(0, ctypes.byref(d)))
        np.testing.assert_allclose(dev.get(po, out), want, rtol=1e-13)
    finally:
        dev.close()


# --- elementwise: vector, strided and unaligned operands --------------------------


@pytest.mark.parametrize("n", [1, 3, 4, 17, 1000, 4099])
@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "float64", "complex128"])
def test_contiguous_elementwise_vector_path_and_tail_match_numpy(n, dtype):
    a = (np.arange(n) % 7 + 1).astype(dtype)
    b = (np.arange(n) % 5 + 2).astype(dtype)
    x, y = gpuarr.asarray(a, device=_gpu()), gpuarr.asarray(b, device=_gpu())
    np.testing.assert_array_equal((x + y).numpy(), a + b)
    np.testing.assert_array_equal((x * 3).numpy(), a * 3)  # a Python scalar by value
    np.testing.assert_array_equal((x < y).numpy(), a < b)  # a narrower (bool) output
    np.testing.assert_array_equal(x.astype("complex128").numpy(), a.astype("complex128"))


@pytest.mark.parametrize("view", ["step2", "reversed", "transposed", "broadcast", "offset"])
def test_strided_elementwise_matches_numpy(view):
    a = np.arange(6 * 35, dtype=np.float32).reshape(6, 35)
    b = np.arange(35, dtype=np.float32)
    x, y = gpuarr.asarray(a, device=_gpu()), gpuarr.asarray(b, device=_gpu())
    pick = {
        "step2": lambda t: t[::2, ::3],
        "reversed": lambda t: t[::-1, ::-1],
        "transposed": lambda t: t.T,
        "broadcast": lambda t: t,
        "offset": lambda t: t[1:, 1:],
    }[view]
    other = y if view == "broadcast" else 1.5
    expect = pick(a) + (b if view == "broadcast" else 1.5)
    np.testing.assert_array_equal((pick(x) + other).numpy(), expect)


def test_elementwise_unaligned_operands_are_staged_and_match_numpy(plugin):
    """float32 operands one byte into a device buffer (a foreign DLPack producer can
    hand such a view over): the kernels' typed loads need element-aligned data, so the
    plugin copies these operands through aligned scratch memory, output included."""
    ops = _op_numbers()
    dev = _Dev(plugin)
    try:
        n = 1001
        a = np.arange(n, dtype=np.float32) * 0.5
        raw = np.zeros(4 * n + 8, dtype=np.uint8)
        raw[1:1 + 4 * n] = a.view(np.uint8)
        pa = dev.put(raw)
        outraw = np.zeros(4 * n + 8, dtype=np.uint8)
        po = dev.put(outraw)
        loop = _Loop()
        loop.ndim, loop.nargs, loop.size = 1, 3, n
        loop.shape[0] = n
        _operand(loop.args[0], po + 3, (4,), "float32")
        _operand(loop.args[1], pa + 1, (4,), "float32")
        _operand(loop.args[2], pa + 1, (4,), "float32")
        _check(plugin, plugin.elementwise(0, ops["add"], ctypes.byref(loop)))
        got = dev.get(po, outraw)
        np.testing.assert_array_equal(got[3:3 + 4 * n].view(np.float32), a + a)
        assert not got[:3].any() and not got[3 + 4 * n:].any()
    finally:
        dev.close()
