"""The CUDA backend's own sources on emulated devices (GPUARR_CUDA_EMULATE=2): devices,
copies, the caching allocator, out-of-memory, CUDA errors, and GEMM through the
reference cuBLAS with cuBLAS's column-major convention. Each test runs in a fresh
interpreter, because the device backend is chosen once per process from the
environment."""
import os
import subprocess
import sys
import textwrap

import pytest

import gpuarr
from conftest import CXX_UNDER_ASAN, cxx_throws_under_asan, needs_emulated_plugin

PKG_DIR = os.path.dirname(os.path.abspath(gpuarr._core.__file__))
EMU = os.path.join(PKG_DIR, "libgpuarr_cuda_emu.so")

# each test starts its own interpreters (tests/conftest.py: CI runs the file in one stage)
pytestmark = [pytest.mark.own_processes, needs_emulated_plugin]

# ctypes views of the plugin's table (ga_backend.h) and of ga_gemm_desc, so GEMM can be
# checked with cuBLAS's own argument convention, below any Python-level matmul.
PRELUDE = textwrap.dedent("""
    import ctypes, os
    import numpy as np
    import gpuarr
    assert gpuarr.num_gpus() == 2, gpuarr._core._gpu_mode()
    lib = ctypes.CDLL(os.path.join(os.path.dirname(gpuarr._core.__file__),
                                   "libgpuarr_cuda_emu.so"))
    FIELDS = ["device_count", "device_props", "synchronize", "alloc", "free",
              "memory_stats", "empty_cache", "copy_h2d", "copy_d2h", "copy_d2d",
              "copy_peer", "elementwise", "reduce", "scan", "gemm", "random", "gather",
              "scatter", "nonzero", "arange", "last_error", "unavailable_reason"]
    class Backend(ctypes.Structure):
        _fields_ = [("abi_version", ctypes.c_int), ("name", ctypes.c_char_p)] + [
            (f, ctypes.c_void_p) for f in FIELDS]
    class GemmDesc(ctypes.Structure):
        _fields_ = [("dtype", ctypes.c_int32), ("transa", ctypes.c_int32),
                    ("transb", ctypes.c_int32), ("m", ctypes.c_int64),
                    ("n", ctypes.c_int64), ("k", ctypes.c_int64), ("a", ctypes.c_void_p),
                    ("lda", ctypes.c_int64), ("stride_a", ctypes.c_int64),
                    ("b", ctypes.c_void_p), ("ldb", ctypes.c_int64),
                    ("stride_b", ctypes.c_int64), ("c", ctypes.c_void_p),
                    ("ldc", ctypes.c_int64), ("stride_c", ctypes.c_int64),
                    ("batch", ctypes.c_int64), ("alpha", ctypes.c_double),
                    ("beta", ctypes.c_double)]
    # the mirrors above match the compiled layout (tests/tooling/test_abi_mirror.py checks
    # test_cuda_kernels.py's): the table's entries in order, and the GEMM descriptor
    _size, _fields = gpuarr._core._abi_layout()["ga_backend"]
    _fields = _fields[:len(FIELDS) + 2]  # the mirror is a prefix of the table
    assert [f for f, _, _ in _fields] == ["abi_version", "name"] + FIELDS, _fields
    assert all(getattr(Backend, f).offset == off for f, off, _ in _fields)
    _size, _fields = gpuarr._core._abi_layout()["ga_gemm_desc"]
    assert ctypes.sizeof(GemmDesc) == _size
    assert [(f, getattr(GemmDesc, f).offset) for f, _, _ in _fields] == \
        [(f, off) for f, off, _ in _fields]
    # the core has already asked for the table: the same library, the same table
    lib.gpuarr_cuda_backend.restype = ctypes.POINTER(Backend)
    table = lib.gpuarr_cuda_backend(2).contents
    gemm = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(GemmDesc))(table.gemm)
    last_error = ctypes.CFUNCTYPE(ctypes.c_char_p)(table.last_error)
    DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float16", "float32", "float64", "complex64", "complex128"]
""")


def emulated_process(code, **env):
    """Run PRELUDE + `code` in a fresh interpreter on two emulated devices; the
    finished process (asserted to have exited with 0)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUARR_")}
    e["PYTHONPATH"] = os.path.dirname(PKG_DIR) + os.pathsep + e.get("PYTHONPATH", "")
    e["GPUARR_CUDA_EMULATE"] = "2"
    e.update(env)
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                       capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def run_emulated(code, **env):
    return emulated_process(code, **env).stdout


def test_emulate_2_gives_two_emulated_cuda_devices():
    out = run_emulated("""
        info = gpuarr._core._device_info(gpuarr.gpu(1))
        print(gpuarr._core._gpu_mode()[0], info["kind"], info["compute_capability"],
              info["total_memory"], "emulated" in info["name"])
    """, GPUARR_CUDA_EMULATE_MEMORY=str(256 << 20))
    assert out.split() == ["emulated", "emulated", "CUDA", "(8,", "0)", str(256 << 20),
                           "True"]


def test_self_test_kernels_agree_with_their_known_answers_on_each_device():
    # grid-stride loop, shared memory with a barrier tree, atomics, dynamic shared
    # memory and __syncthreads_count: what the kernel files rely on
    out = run_emulated("""
        msg = ctypes.create_string_buffer(512)
        for dev in (0, 1):
            print(lib.gpuarr_cuda_selftest(dev, msg, 512), msg.value.decode())
    """)
    assert out.split() == ["0", "0"], out


def run_case(name, dev=0, **env):
    """Run the plugin's self-test case `name` (ga_cuda_selftest_warp.cu): (rc, msg)."""
    out = run_emulated(f"""
        msg = ctypes.create_string_buffer(1024)
        rc = lib.gpuarr_cuda_selftest_case({dev}, b"{name}", msg, 1024)
        print(rc)
        print(msg.value.decode())
    """, **env)
    rc, _, msg = out.partition("\n")
    return int(rc), msg.strip()


@pytest.mark.parametrize("dev", [0, 1])
def test_warp_primitives_give_the_values_cuda_documents(dev):
    # shuffles (idx/up/down/xor, with widths, 4- and 8-byte values), ballot/any/all,
    # activemask, syncwarp with a partial mask, match_any, popc/ffs/ffsll/clz
    assert run_case("warp", dev) == (0, "")


def test_warp_mask_naming_an_exited_lane_is_a_launch_failure():
    rc, msg = run_case("warp_missing_lane")
    assert rc == 1, msg
    assert "cudaErrorLaunchFailure" in msg and "lane 5" in msg and "has exited" in msg, msg


def test_vector_types_load_and_store_aligned_in_256_byte_aligned_blocks():
    assert run_case("vector") == (0, "")


def test_misaligned_vector_load_is_a_misaligned_address_fault():
    rc, msg = run_case("misaligned_vector")
    assert rc == 1, msg
    assert "cudaErrorMisalignedAddress" in msg and "ga_ld_vec" in msg, msg


def test_misaligned_element_load_is_a_misaligned_address_fault():
    # every kernel loads whole elements (GA_K_ELEMENT): one byte off is a GPU's fault,
    # and the emulator's, so a path that forgot to stage an unaligned operand fails
    rc, msg = run_case("misaligned_element")
    assert rc == 1, msg
    assert "cudaErrorMisalignedAddress" in msg and "4-byte element" in msg, msg


def test_device_math_differs_from_host_math_within_cudas_ulp_bounds():
    # A GPU's expf is not glibc's: the CUDA Programming Guide bounds each function's
    # error in ulps against the correctly rounded result (expf, sinf 2, logf 1; double
    # exp and log 1, cos 2). The emulator moves the correctly rounded value by a
    # deterministic 0..k ulps (ga_cuda_emu_math.h), so a test that wants bit-identical
    # floats across devices fails here as on a GPU. This checks both halves: not the
    # host's bits, never beyond the bound, exact where CUDA is exact.
    out = run_emulated("""
        def ulps(a, b):
            # distance in representable values (a signed-magnitude to ordered map)
            it = {4: np.int32, 8: np.int64}[a.dtype.itemsize]
            def ordered(v):
                i = v.view(it).astype(np.int64)
                return np.where(i < 0, np.iinfo(it).min - i, i)
            return np.abs(ordered(a) - ordered(b))

        x = np.linspace(-20, 20, 20001, dtype=np.float32)
        pos = np.linspace(1e-3, 1e3, 20001, dtype=np.float32)
        for name, arg, bound in [("exp", x, 2), ("sin", x, 2), ("log", pos, 1)]:
            fn = getattr(gpuarr, name)
            dev = fn(gpuarr.asarray(arg, device=gpuarr.gpu(0))).numpy()
            again = fn(gpuarr.asarray(arg, device=gpuarr.gpu(1))).numpy()
            host = fn(gpuarr.asarray(arg)).numpy()
            ref = getattr(np, name)(arg.astype(np.float64)).astype(np.float32)
            d = ulps(dev, ref)
            print(name, "float32", int(d.max()), int(d.max()) <= bound,
                  np.mean(dev != host) > 0.3, np.array_equal(dev, again))
        xd = np.linspace(-20, 20, 20001)
        for name, arg, bound in [("exp", xd, 1), ("cos", xd, 2), ("log", xd + 20.5, 1)]:
            fn = getattr(gpuarr, name)
            dev = fn(gpuarr.asarray(arg, device=gpuarr.gpu(0))).numpy()
            host = fn(gpuarr.asarray(arg)).numpy()
            # the host's double functions are within 1 ulp of the correctly rounded value
            d = ulps(dev, host)
            print(name, "float64", int(d.max()), int(d.max()) <= bound + 1,
                  np.mean(dev != host) > 0.3)
        # the special values CUDA documents (and signed zeros keep their sign)
        edges = [0.0, -0.0, np.inf, -np.inf, np.nan]
        for name, extra in [("exp", []), ("log", [1.0, -1.0]), ("sin", []), ("cos", []),
                            ("tanh", []), ("expm1", []), ("log1p", [-1.0])]:
            special = np.array(edges + extra, np.float32)
            with np.errstate(all="ignore"):
                want = getattr(np, name)(special)
            got = getattr(gpuarr, name)(
                gpuarr.asarray(special, device=gpuarr.gpu(0))).numpy()
            print(name, "special", np.array_equal(got, want, equal_nan=True)
                  and np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0])))
        print("pow", gpuarr.power(gpuarr.asarray(np.float32([2, 10]), device=gpuarr.gpu(0)),
                                  np.float32(3)).numpy().tolist())
        s = gpuarr.sin(gpuarr.asarray(np.linspace(1.5, 1.65, 4001, dtype=np.float32),
                                      device=gpuarr.gpu(0))).numpy()
        print("sin range", bool(np.abs(s).max() <= 1))
    """)
    lines = out.splitlines()
    for line in lines[:6]:
        name, kind, worst, within, differs, *same = line.split()
        assert within == "True", f"{name} {kind}: {worst} ulps beyond CUDA's bound"
        assert differs == "True", f"{name} {kind}: the emulated device computed host math"
        assert same in ([], ["True"]), f"{name} {kind}: not deterministic"
    assert all(line.endswith("True") for line in lines[6:13]), out
    assert lines[13] == "pow [8.0, 1000.0]", out
    assert lines[14] == "sin range True", out


@pytest.mark.parametrize("sms", [None, "7"])
def test_emulated_device_has_h100_geometry_and_configurable_multiprocessors(sms):
    env = {} if sms is None else {"GPUARR_CUDA_EMULATE_SMS": sms}
    rc, msg = run_case("device_props", **env)
    assert rc == 0, msg
    props = dict(w.split("=") for w in msg.split())
    assert props == {"sms": sms or "132", "threads": "1024", "shared": str(48 * 1024),
                     "grid": "2147483647,65535,65535", "warp": "32", "regs": "65536",
                     "occ256": "8", "occ1024": "2", "occ64_40k": "5"}, props


def test_launch_beyond_a_limit_fails_with_the_gpus_error():
    assert run_case("launch_limits") == (0, "")


def test_host_device_device_host_copies_are_exact_and_counted():
    out = run_emulated("""
        for dt in DTYPES:
            a = (np.arange(7 * 5) % 11).astype(dt).reshape(7, 5)
            gpuarr.reset_transfer_stats()
            x = gpuarr.asarray(a, device=gpuarr.gpu(0))
            y = x.to(gpuarr.gpu(1))
            back = y.numpy()
            s = gpuarr.transfer_stats()
            assert y.device == gpuarr.gpu(1)
            assert back.dtype == a.dtype and np.array_equal(back, a), dt
            assert (s.h2d_count, s.d2d_count, s.d2h_count) == (1, 1, 1), (dt, s)
            assert s.h2d_bytes == s.d2d_bytes == s.d2h_bytes == a.nbytes, (dt, s)
        print("ok")
    """)
    assert out.strip() == "ok"


def test_large_device_to_host_copy_through_pinned_chunks_is_exact():
    # 10 MiB: three chunks through the two pinned staging buffers
    out = run_emulated("""
        a = np.random.default_rng(0).standard_normal(10 << 18).astype(np.float32)
        x = gpuarr.asarray(a, device=gpuarr.gpu(1))
        print(np.array_equal(x.numpy(), a), np.array_equal(x.to(gpuarr.gpu(0)).numpy(), a))
    """)
    assert out.split() == ["True", "True"]


def test_empty_arrays_and_zero_byte_blocks_move_between_devices():
    out = run_emulated("""
        for shape in [(0,), (3, 0), ()]:
            a = np.ones(shape, np.float64)
            x = gpuarr.asarray(a, device=gpuarr.gpu(0)).to(gpuarr.gpu(1))
            assert x.shape == shape and np.array_equal(x.numpy(), a), shape
        print("ok")
    """)
    assert out.strip() == "ok"


def test_steady_loop_reuses_cached_blocks_without_new_allocations():
    out = run_emulated("""
        g = gpuarr.gpu(0)
        a = np.ones((64, 33), np.float32)
        for i in range(3):  # warm the cache with both sizes
            x = gpuarr.asarray(a, device=g)
            y = gpuarr.asarray(a[:10], device=g)
            del x, y
        before = gpuarr.memory_stats(g)
        for i in range(50):
            x = gpuarr.asarray(a, device=g)
            y = gpuarr.asarray(a[:10], device=g)
            del x, y
        after = gpuarr.memory_stats(g)
        print(before["alloc_calls"], after["alloc_calls"], before["allocated_bytes"],
              after["allocated_bytes"], after["peak_allocated_bytes"] >= a.nbytes,
              after["reserved_bytes"] >= a.nbytes)
    """)
    b_calls, a_calls, b_alloc, a_alloc, peak_ok, reserved_ok = out.split()
    assert b_calls == a_calls != "0"
    assert b_alloc == a_alloc
    assert peak_ok == reserved_ok == "True"


def test_empty_cache_returns_cached_blocks_and_keeps_live_ones():
    out = run_emulated("""
        g = gpuarr.gpu(1)
        keep = gpuarr.asarray(np.ones(1000), device=g)
        for n in (10, 100000, 3 << 20):
            gpuarr.asarray(np.ones(n, np.uint8), device=g)
        s = gpuarr.memory_stats(g)
        assert s["reserved_bytes"] > s["allocated_bytes"] == 8000, s
        gpuarr.empty_cache(g)
        s = gpuarr.memory_stats(g)
        assert s["reserved_bytes"] == 8192 and s["allocated_bytes"] == 8000, s
        assert np.array_equal(keep.numpy(), np.ones(1000))
        print("ok")
    """)
    assert out.strip() == "ok"


def test_out_of_memory_raises_naming_device_and_size_and_process_continues():
    out = run_emulated("""
        g = gpuarr.gpu(0)
        keep = gpuarr.asarray(np.ones(1 << 20, np.float32), device=g)  # 4 MiB in use
        try:
            gpuarr.asarray(np.zeros(100 << 20, np.uint8), device=g)
        except gpuarr.OutOfMemoryError as e:
            assert isinstance(e, MemoryError)
            print(e)
        x = gpuarr.asarray(np.arange(5.0), device=g)
        print(x.numpy().tolist())
    """, GPUARR_CUDA_EMULATE_MEMORY=str(64 << 20))
    msg, values = out.strip().splitlines()
    assert "gpu(0)" in msg and "104857600 bytes" in msg and "4.00 MiB in use" in msg
    assert values == "[0.0, 1.0, 2.0, 3.0, 4.0]"


def test_allocation_that_fits_after_freeing_the_cache_succeeds():
    out = run_emulated("""
        g = gpuarr.gpu(0)
        for i in range(2):
            gpuarr.asarray(np.zeros(20 << 20, np.uint8), device=g)  # cached: 20 MiB
        x = gpuarr.asarray(np.ones(30 << 20, np.uint8), device=g)  # 20 + 30 > 40
        s = gpuarr.memory_stats(g)
        print(s["reserved_bytes"] == 30 << 20, x.numpy()[-1])
    """, GPUARR_CUDA_EMULATE_MEMORY=str(40 << 20))
    assert out.split() == ["True", "1"]


def test_out_of_memory_gives_back_only_blocks_that_no_array_uses():
    # a 40 MiB block, cached, then a 10 MiB piece of it in use: the retry after
    # cudaMalloc failed cannot give the block back; once the piece is freed it can
    out = run_emulated("""
        g = gpuarr.gpu(0)
        MiB = 1 << 20
        gpuarr.empty(40 * MiB, dtype="uint8", device=g)
        v = np.arange(10 * MiB // 8, dtype=np.float64)
        keep = gpuarr.asarray(v, device=g)
        try:
            gpuarr.empty(40 * MiB, dtype="uint8", device=g)  # 40 + 40 > 64
            print("no error")
        except gpuarr.OutOfMemoryError as e:
            print("31457280 bytes cached" in str(e), np.array_equal(keep.numpy(), v))
        del keep
        s0 = gpuarr.memory_stats(g)
        x = gpuarr.empty(40 * MiB, dtype="uint8", device=g)  # the merged block
        s1 = gpuarr.memory_stats(g)
        del x
        y = gpuarr.ones(50 * MiB, dtype="uint8", device=g)  # 40 + 50 > 64: given back
        s2 = gpuarr.memory_stats(g)
        calls = [s["alloc_calls"] - s0["alloc_calls"] for s in (s1, s2)]
        print(*calls, s2["reserved_bytes"] == 50 * MiB, y.numpy()[-1])
    """, GPUARR_CUDA_EMULATE_MEMORY=str(64 << 20))
    assert out.split() == ["True", "True", "0", "1", "True", "1"]


def test_failing_cuda_call_raises_cuda_error_with_the_error_name():
    out = run_emulated("""
        x = gpuarr.asarray(np.arange(4.0), device=gpuarr.gpu(0))
        os.environ["GPUARR_CUDA_EMULATE_FAIL"] = "cudaMemcpyAsync"
        try:
            x.numpy()
        except gpuarr.CudaError as e:
            assert isinstance(e, RuntimeError)
            print(e)
        del os.environ["GPUARR_CUDA_EMULATE_FAIL"]
        print(x.numpy().tolist())
    """)
    msg, values = out.strip().splitlines()
    assert "cudaErrorIllegalAddress" in msg and "cudaMemcpyAsync" in msg
    assert values == "[0.0, 1.0, 2.0, 3.0]"


def test_failing_kernel_launch_is_reported_by_the_launch_check():
    out = run_emulated("""
        os.environ["GPUARR_CUDA_EMULATE_FAIL"] = "launch"
        msg = ctypes.create_string_buffer(512)
        print(lib.gpuarr_cuda_selftest(0, msg, 512))
        print(msg.value.decode())
        del os.environ["GPUARR_CUDA_EMULATE_FAIL"]
        print(lib.gpuarr_cuda_selftest(0, msg, 512))
    """)
    rc, msg, rc2 = out.strip().splitlines()
    assert rc == "1" and "cudaErrorIllegalAddress" in msg and "cudaGetLastError" in msg
    assert rc2 == "0"


def test_copies_both_ways_between_devices_leave_no_stale_cuda_error():
    # enabling peer access twice answers cudaErrorPeerAccessAlreadyEnabled, which must
    # not surface at the next launch check
    out = run_emulated("""
        a = np.arange(10.0)
        x = gpuarr.asarray(a, device=gpuarr.gpu(0))
        for i in range(3):
            x = x.to(gpuarr.gpu(1 - x.device.index))
        msg = ctypes.create_string_buffer(512)
        print(lib.gpuarr_cuda_selftest(1, msg, 512), np.array_equal(x.numpy(), a))
        gpuarr.synchronize()
        gpuarr.synchronize(gpuarr.gpu(1))
    """)
    assert out.split() == ["0", "True"]


GEMM_CODE = """
    rng = np.random.default_rng(1)
    CODES = {d: i for i, d in enumerate(DTYPES)}
    failures = []

    def sample(dt, shape):
        if dt == "bool":
            return rng.integers(0, 2, shape).astype(bool)
        if dt.startswith(("int", "uint")):
            return rng.integers(0, 9, shape).astype(dt)
        if dt.startswith("complex"):
            return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
        return rng.standard_normal(shape).astype(dt)

    def colmajor_gemm(dt, m, n, k, transa, transb, batch, bcast_a):
        # column-major operands as cuBLAS sees them, stored in padded row-major NumPy
        # arrays: a column-major (r x c) matrix with leading dimension ld is the
        # transpose of a row-major (c x ld) array's first r columns
        ar, ac = (k, m) if transa else (m, k)
        br, bc = (n, k) if transb else (k, n)
        lda, ldb, ldc = ar + 1, br + 2, m + 3
        nb_a = 1 if bcast_a else batch
        A = sample(dt, (nb_a, ac, lda))
        B = sample(dt, (batch, bc, ldb))
        C = sample(dt, (batch, n, ldc))
        Am = A[:, :, :ar].transpose(0, 2, 1)  # (b, ar, ac) logical column-major
        Bm = B[:, :, :br].transpose(0, 2, 1)
        opA = Am.transpose(0, 2, 1) if transa else Am
        opB = Bm.transpose(0, 2, 1) if transb else Bm
        if dt == "bool":
            want = np.matmul(opA, opB)
        elif dt == "float16":
            want = np.matmul(opA.astype(np.float32), opB.astype(np.float32)).astype(dt)
        else:
            want = np.matmul(opA, opB)
        g = gpuarr.gpu(1)
        xa, xb, xc = (gpuarr.asarray(v, device=g) for v in (A, B, C))
        d = GemmDesc(dtype=CODES[dt], transa=transa, transb=transb, m=m, n=n, k=k,
                     a=xa._data_ptr, lda=lda, stride_a=0 if bcast_a else ac * lda,
                     b=xb._data_ptr, ldb=ldb, stride_b=bc * ldb,
                     c=xc._data_ptr, ldc=ldc, stride_c=n * ldc, batch=batch,
                     alpha=1.0, beta=0.0)
        st = gemm(1, ctypes.byref(d))
        if st != 0:
            failures.append((dt, m, n, k, transa, transb, batch, last_error()))
            return
        got = xc.numpy()[:, :, :m].transpose(0, 2, 1)  # (b, m, n)
        pad = xc.numpy()[:, :, m:]
        if not np.array_equal(pad, C[:, :, m:]):
            failures.append((dt, "wrote outside C", m, n, k, transa, transb, batch))
        tol = {"float16": 1e-2, "float32": 1e-5, "complex64": 1e-5}.get(dt, 1e-12)
        if dt in ("bool",) or dt.startswith(("int", "uint")):
            ok = np.array_equal(got, want)
        else:
            ok = np.allclose(got.astype(np.complex128), want.astype(np.complex128),
                             rtol=tol, atol=tol * k)
        if not ok:
            failures.append((dt, m, n, k, transa, transb, batch, bcast_a))

    for dt in DTYPES:
        for transa in (0, 1):
            for transb in (0, 1):
                colmajor_gemm(dt, 3, 4, 5, transa, transb, 1, False)
        colmajor_gemm(dt, 2, 3, 4, 1, 0, 3, False)
        colmajor_gemm(dt, 2, 3, 4, 0, 1, 3, True)
        colmajor_gemm(dt, 1, 1, 1, 0, 0, 1, False)
        colmajor_gemm(dt, 5, 2, 0, 0, 0, 2, False)  # k = 0: C = 0
    print(failures)
"""


def test_gemm_through_emulated_cublas_matches_numpy_for_every_layout():
    # transposed, padded leading dimensions, batched with strides, a broadcast A
    # (stride 0), k = 0; floating types through the reference cuBLAS, integer and bool
    # types through the plugin's own kernel
    out = run_emulated(GEMM_CODE)
    assert out.strip() == "[]", out


def test_gemm_with_a_leading_dimension_past_the_block_is_caught():
    out = run_emulated("""
        g = gpuarr.gpu(0)
        x = gpuarr.asarray(np.ones(12, np.float32), device=g)
        c = gpuarr.asarray(np.zeros(9, np.float32), device=g)
        # lda = 300: A's last column starts 3.6 KB in, past x's block (even rounded up
        # to the allocator's 512-byte bin)
        d = GemmDesc(dtype=10, transa=0, transb=0, m=3, n=3, k=4, a=x._data_ptr, lda=300,
                     stride_a=0, b=x._data_ptr, ldb=4, stride_b=0, c=c._data_ptr, ldc=3,
                     stride_c=0, batch=1, alpha=1.0, beta=0.0)
        print(gemm(0, ctypes.byref(d)))
        print(last_error().decode())
    """)
    status, msg = out.strip().splitlines()
    assert status != "0"
    assert "cublasSgemmStridedBatched" in msg and "does not lie in one device block" in msg


def test_matmul_on_emulated_gpus_equals_numpy():
    out = run_emulated("""
        rng = np.random.default_rng(2)
        for dt in ("float32", "float64", "complex64", "int32"):
            a = rng.standard_normal((2, 3, 4)).astype(dt)
            b = rng.standard_normal((4, 5)).astype(dt)
            for x, y in [(a, b), (a[:, ::-1, :], b[:, ::2]), (a.transpose(0, 2, 1)[..., :4, :], b)]:
                if x.shape[-1] != y.shape[0]:
                    continue
                gx = gpuarr.asarray(x, device=gpuarr.gpu(0))
                gy = gpuarr.asarray(y, device=gpuarr.gpu(0))
                got = gpuarr.matmul(gx, gy).numpy()
                assert np.allclose(got, x @ y, rtol=1e-5, atol=1e-5), dt
        print("ok")
    """)
    assert out.strip() == "ok"


def test_other_python_threads_run_while_the_host_waits_for_a_device():
    # Each wait lasts 1 s (a test-only knob of the emulator, a sleep). A Python thread
    # notes when it runs (every 10 ms at most). With the GIL released in the wait it
    # runs all through it; held, it runs only in a switch interval (5 ms) just before
    # the main thread enters the call or just after it returns, never in the middle.
    # What is checked is that it ran in the middle second half, not how fast (a busy
    # machine slows a rate, and had failed the rate this test compared before): it
    # fails only if the thread got no core at all for half a second.
    out = run_emulated("""
        import threading, time
        x = gpuarr.ones(4, device=gpuarr.gpu(0))
        stop = False
        ran = [0.0]
        def spin():
            while not stop:
                now = time.monotonic()
                if now - ran[-1] > 0.01:
                    ran.append(now)
        t = threading.Thread(target=spin)
        t.start()
        inside = 0
        for _ in range(3):
            t0 = time.monotonic()
            gpuarr.synchronize(gpuarr.gpu(0))
            t1 = time.monotonic()
            inside += sum(t0 + 0.25 < r < t1 - 0.25 for r in ran)
            time.sleep(0.05)
        stop = True
        t.join()
        print(inside)
    """, GPUARR_CUDA_EMULATE_WAIT_MS="1000")
    assert int(out.split()[-1]) > 0, out


def test_a_child_forked_after_cuda_started_gets_a_clear_error():
    out = run_emulated("""
        x = gpuarr.ones(2, device=gpuarr.gpu(0))
        pid = os.fork()
        if pid == 0:
            try:
                gpuarr.ones(2, device=gpuarr.gpu(0))
            except gpuarr.CudaError as e:
                os._exit(0 if "forked" in str(e) and "spawn" in str(e) else 3)
            except BaseException:
                os._exit(4)
            os._exit(5)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), float(x.sum()))
    """)
    assert out.split()[-2:] == ["0", "2.0"]


# --- ordering: each wait the backend relies on fails a test when removed -------------

def test_peer_copy_waits_for_the_work_that_writes_its_source():
    # the kernel on gpu(0)'s stream writes x; the copy runs on gpu(1)'s stream and must
    # wait for it (copy_peer's first event)
    out = run_emulated("""
        a = np.arange(1 << 21, dtype=np.float64)
        for i in range(3):
            x = gpuarr.asarray(a, device=gpuarr.gpu(0))
            y = (x * 2.0 + 1.0).to(gpuarr.gpu(1))
            assert np.array_equal(y.numpy(), a * 2.0 + 1.0), i
        print("ok")
    """)
    assert out.strip() == "ok"


def test_peer_copy_source_is_not_reused_before_the_copy_has_read_it():
    # after the copy is queued, x's block goes back to gpu(0)'s cache and the next
    # kernel on gpu(0) overwrites it: copy_peer's second event makes that kernel wait
    out = run_emulated("""
        a = np.arange(1 << 21, dtype=np.float64)
        bad = 0
        for i in range(3):
            w = gpuarr.asarray(a, device=gpuarr.gpu(1)) * 3.0 + 1.0  # gpu(1) is busy
            x = gpuarr.asarray(a, device=gpuarr.gpu(0))
            y = x.to(gpuarr.gpu(1))  # queued behind w on gpu(1)'s stream
            del x
            z = gpuarr.asarray(-a, device=gpuarr.gpu(0))  # x's cached block, at once
            bad += not np.array_equal(y.numpy(), a)
        print(bad)
    """)
    assert out.strip() == "0"


def test_asynchronous_copy_from_pinned_memory_reads_the_buffer_when_it_runs():
    # as on a GPU: a pinned source is read when the queued copy runs, so a buffer
    # rewritten too early gives the new data; a pageable source is staged at once
    out = run_emulated("""
        lib.gpuarr_cuda_selftest_pinned.restype = ctypes.c_int
        print(lib.gpuarr_cuda_selftest_pinned(0, 0), lib.gpuarr_cuda_selftest_pinned(0, 1))
    """)
    assert out.split() == ["2", "1"], out


def test_watchdog_fails_a_kernel_that_runs_too_long_and_the_fault_is_reported():
    out = run_emulated("""
        msg = ctypes.create_string_buffer(512)
        print(lib.gpuarr_cuda_selftest_long_kernel(0, msg, 512))
        print(msg.value.decode())
    """, GPUARR_CUDA_EMULATE_WATCHDOG="0.2")
    rc, msg = out.strip().splitlines()
    assert rc == "1" and "cudaErrorLaunchTimeout" in msg and "WATCHDOG" in msg, out


def test_watchdog_fails_a_single_serial_block_that_runs_too_long():
    # one block of serial work: no check between blocks can see it, the end of the
    # launch does (and without a watchdog the same kernel succeeds)
    code = """
        msg = ctypes.create_string_buffer(512)
        print(lib.gpuarr_cuda_selftest_long_one_block(0, msg, 512))
        print(msg.value.decode())
    """
    rc, msg = run_emulated(code, GPUARR_CUDA_EMULATE_WATCHDOG="0.01").strip().splitlines()
    assert rc == "1" and "cudaErrorLaunchTimeout" in msg, (rc, msg)
    assert run_emulated(code).strip().splitlines()[0] == "0"


def test_kernel_fault_is_reported_at_the_next_wait_and_is_sticky():
    # the watchdog fails a long elementwise kernel; the launch itself returned at once
    out = run_emulated("""
        x = gpuarr.asarray(np.arange(1 << 20, dtype=np.float64), device=gpuarr.gpu(0))
        for i in range(2):
            try:
                # the first launch is queued and faults on the worker; a later call
                # (a launch or the wait of numpy()) reports it, and every one after
                (gpuarr.sin(x) * 2.0).numpy()
                print("no error")
            except gpuarr.CudaError as e:
                print(str(e).replace("\\n", " "))
        print(gpuarr.asarray([1.0, 2.0], device=gpuarr.gpu(1)).numpy().tolist())
    """, GPUARR_CUDA_EMULATE_WATCHDOG="0.0001")
    first, second, other = out.strip().splitlines()
    for msg in (first, second):
        assert "cudaErrorLaunchTimeout" in msg and "restarted" in msg, out
    assert other == "[1.0, 2.0]"  # the other device is unaffected


# --- the schedule (GPUARR_CUDA_EMULATE_SCHEDULE): blocks, and threads between barriers,
# run in an order drawn from a seed, so races that index order would hide show up.

def run_schedule_case(name, seed=None, **env):
    """Run the plugin's schedule self-test case `name` (ga_cuda_selftest_schedule.cu)
    under the schedule `seed`: (rc, msg)."""
    if seed is not None:
        env["GPUARR_CUDA_EMULATE_SCHEDULE"] = str(seed)
    out = run_emulated(f"""
        msg = ctypes.create_string_buffer(1024)
        rc = lib.gpuarr_cuda_selftest_schedule(0, b"{name}", msg, 1024)
        print(rc)
        print(msg.value.decode())
    """, **env)
    rc, _, msg = out.partition("\n")
    return int(rc), msg.strip()


def orders(msg):
    """{"blocks": [..], ...} from a *_order case's message."""
    return {label: [int(v) for v in values.split(",")]
            for label, values in (word.split(":") for word in msg.split())}


def test_shared_memory_race_without_a_barrier_gives_a_wrong_answer_under_some_seed():
    # each thread reads its neighbour's slot with no __syncthreads after the writes:
    # in thread order every neighbour would have written first and the race would pass
    results = [run_schedule_case("racy_neighbour", seed) for seed in (1, 2)]
    assert any(rc == 1 and "neighbour's slot" in msg for rc, msg in results), results


@pytest.mark.parametrize("seed", [1, 2])
def test_the_same_exchange_with_a_barrier_is_right_under_every_seed(seed):
    assert run_schedule_case("neighbour_with_barrier", seed) == (0, "")


def test_block_order_differs_between_seeds_and_the_same_seed_replays_it():
    runs = {seed: [run_schedule_case("block_order", seed) for _ in range(2)]
            for seed in (1, 2)}
    got = {}
    for seed, (first, again) in runs.items():
        assert first[0] == 0 and first == again, runs  # replayed exactly
        got[seed] = orders(first[1])["blocks"]
        assert sorted(got[seed]) == list(range(64)), got
    assert got[1] != got[2], got
    assert list(range(64)) not in got.values(), got


def test_threads_run_in_a_seeded_order_with_and_without_barriers():
    got = {}
    for seed in (1, 2):
        rc, msg = run_schedule_case("thread_order", seed)
        assert rc == 0, msg
        got[seed] = orders(msg)
        # a block without barriers runs thread 0 first (it tells how the block runs),
        # then the others as plain calls, also in the schedule's order
        assert got[seed]["plain"][0] == 0, got
        for order in got[seed].values():
            assert sorted(order) == list(range(64)) and order != list(range(64)), got
    assert got[1] != got[2], got


def test_random_schedule_prints_its_seed_and_that_seed_replays_it():
    code = """
        msg = ctypes.create_string_buffer(1024)
        print(lib.gpuarr_cuda_selftest_schedule(0, b"block_order", msg, 1024))
        print(msg.value.decode())
    """
    drawn = emulated_process(code, GPUARR_CUDA_EMULATE_SCHEDULE="random")
    seed = drawn.stderr.split("schedule seed ")[1].split()[0]
    assert seed.isdigit() and f"set it to {seed} to replay" in drawn.stderr, drawn.stderr
    replay = emulated_process(code, GPUARR_CUDA_EMULATE_SCHEDULE=seed)
    assert replay.stdout == drawn.stdout and replay.stdout.startswith("0"), (seed, replay)


def test_bad_schedule_value_is_reported_and_the_default_seed_used():
    r = emulated_process("print(gpuarr.num_gpus())", GPUARR_CUDA_EMULATE_SCHEDULE="often")
    assert r.stdout.split() == ["2"], r.stdout
    assert "GPUARR_CUDA_EMULATE_SCHEDULE=often is neither a seed" in r.stderr, r.stderr


def test_a_failed_launch_names_the_schedule_seed_that_replays_it():
    rc, msg = run_case("warp_missing_lane", GPUARR_CUDA_EMULATE_SCHEDULE="7")
    assert rc == 1 and "GPUARR_CUDA_EMULATE_SCHEDULE=7 replays it" in msg, msg


# --- spin waits between blocks (__nanosleep): the emulator runs blocks one after another,
# so a block may wait only for blocks that ran before it.

@pytest.mark.parametrize("seed", [1, 2])
def test_blocks_waiting_for_earlier_tickets_finish_under_every_seed(seed):
    # each block takes a ticket from an atomic counter and waits for the previous
    # ticket's block (k_scan.cu's tiles wait like this): forward progress on any schedule
    assert run_schedule_case("chain_by_ticket", seed) == (0, "")


def test_a_block_waiting_for_a_later_block_is_reported_as_a_deadlock():
    if cxx_throws_under_asan():
        pytest.skip(CXX_UNDER_ASAN)  # the emulator abandons the kernel with a throw
    # block b waits for block b - 1 by index: in a shuffled order some block waits for
    # one that has not run (on a GPU: a hang whenever the two are not resident together)
    rc, msg = run_schedule_case("chain_by_block_index", 1, GPUARR_CUDA_EMULATE_SPINS="500")
    assert rc == 1, msg
    assert "cudaErrorLaunchTimeout" in msg and "spin wait that did not end" in msg, msg
    assert "paused 500 times" in msg and "GPUARR_CUDA_EMULATE_SCHEDULE=1 replays it" in msg
