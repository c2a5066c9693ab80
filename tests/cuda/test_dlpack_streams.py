"""DLPack between CUDA libraries on different streams: the stream hand-off and the two
deleters, tested against a fake producer and a fake consumer that queue work on their
own streams.

The emulated devices play CUDA devices here (GPUARR_CUDA_EMULATE_DLPACK=cuda, a
test-only mode of the emulated plugin: its memory is host memory no real library can
use, but the fakes use the same emulated runtime through the plugin's
gpuarr_cuda_selftest_dl_* entries). Emulated streams are worker threads, so work
really runs late: a test stalls one stream (dl_sleep) and shows that the other side
reads what it should only because of the wait under test. Each test runs in a fresh
interpreter, because the device backend is chosen once per process."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpuarr
from conftest import needs_emulated_plugin

PKG_DIR = os.path.dirname(os.path.abspath(gpuarr._core.__file__))

# each test starts its own interpreters (tests/conftest.py: CI runs the file in one stage)
pytestmark = [pytest.mark.own_processes, needs_emulated_plugin]

PRELUDE = textwrap.dedent("""
    import atexit, ctypes, gc, os
    import numpy as np
    import gpuarr
    from gpuarr.testing import count_kernels
    assert gpuarr.num_gpus() == 2, gpuarr._core._gpu_mode()
    lib = ctypes.CDLL(os.path.join(os.path.dirname(gpuarr._core.__file__),
                                   "libgpuarr_cuda_emu.so"))
    U, P = ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)
    SIGS = {"stream": [ctypes.c_int, P], "own_stream": [ctypes.c_int, P],
            "sleep": [ctypes.c_int, U, ctypes.c_uint],
            "alloc": [ctypes.c_int, ctypes.c_size_t, P], "free": [ctypes.c_int, U],
            "memset": [ctypes.c_int, U, U, ctypes.c_int, ctypes.c_size_t],
            "copy": [ctypes.c_int, U, U, U, ctypes.c_size_t], "sync": [ctypes.c_int, U],
            "wait": [ctypes.c_int, U, U]}
    for name, args in SIGS.items():
        getattr(lib, "gpuarr_cuda_selftest_dl_" + name).argtypes = args

    def cu(name, *args):
        rc = getattr(lib, "gpuarr_cuda_selftest_dl_" + name)(*args)
        assert rc == 0, (name, rc)

    def out_u64(name, *args):
        v = U()
        cu(name, *args, ctypes.byref(v))
        return v.value

    def alloc(dev, n):
        # the fake library's memory, given back at exit: only a Python int points at
        # it, so LeakSanitizer (CI's ASan run) would call it a leak of the plugin
        p = out_u64("alloc", dev, n)
        atexit.register(cu, "free", dev, p)
        return p

    class DLDevice(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]
    class DLDataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16)]
    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                    ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                    ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)),
                    ("byte_offset", ctypes.c_uint64)]
    class Managed(ctypes.Structure):  # DLManagedTensorVersioned
        _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                    ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                    ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]
    DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    NAME, USED = b"dltensor_versioned", b"used_dltensor_versioned"
    api = ctypes.pythonapi
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

    class FakeProducer:
        # n uint8 of its own device memory, written on its own stream; a correct
        # producer: the consumer's stream waits for what it queued
        def __init__(self, dev, n):
            self.dev, self.n = dev, n
            self.stream = out_u64("stream", dev)
            self.ptr = alloc(dev, n)
            self.named = []
            self.deleted = False
            self.on_delete = None

        def __dlpack_device__(self):
            return (2, self.dev)

        def __dlpack__(self, *, stream=None, max_version=None, dl_device=None,
                       copy=None):
            self.named.append(stream)
            if stream != -1:
                cu("wait", self.dev, 1 if stream is None else stream, self.stream)
            self.shape = (ctypes.c_int64 * 1)(self.n)
            self.deleter = DELETER(self._delete)
            m = self.managed = Managed()
            m.major, m.minor = 1, 0
            m.deleter = ctypes.cast(self.deleter, ctypes.c_void_p)
            t = m.dl_tensor
            t.data, t.ndim, t.shape = self.ptr, 1, self.shape
            t.device.device_type, t.device.device_id = 2, self.dev
            t.dtype.code, t.dtype.bits, t.dtype.lanes = 1, 8, 1  # uint8
            return api.PyCapsule_New(ctypes.addressof(m), NAME, None)

        def _delete(self, _):
            self.deleted = True
            if self.on_delete is not None:
                self.on_delete()

    def consume(cap):
        # what a consumer does with the capsule: take it over, keep its tensor
        p = api.PyCapsule_GetPointer(cap, NAME)
        assert api.PyCapsule_SetName(cap, USED) == 0
        return Managed.from_address(p).dl_tensor.data, p

    def drop(p):
        # the consumer is done with the tensor: the producer's deleter (no GIL held)
        DELETER(Managed.from_address(p).deleter)(p)

    def read(dev, stream, ptr, n):
        out = np.zeros(n, np.uint8)
        cu("copy", dev, stream, out.ctypes.data, ptr, n)
        cu("sync", dev, stream)
        return out

    N = 1 << 16
""")


def run_emulated(code, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("GPUARR_")}
    e["PYTHONPATH"] = os.path.dirname(PKG_DIR) + os.pathsep + e.get("PYTHONPATH", "")
    e["GPUARR_CUDA_EMULATE"] = "2"
    e["GPUARR_CUDA_EMULATE_DLPACK"] = "cuda"
    e.update(env)
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                       capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.split()


@pytest.mark.parametrize("mode, want", [("cuda", "(2, 1)"), ("", "(12, 1)")])
def test_emulated_devices_are_cuda_devices_for_dlpack_only_in_the_test_mode(mode, want):
    out = run_emulated("""
        x = gpuarr.ones(3, device=gpuarr.gpu(1))
        print(x.__dlpack_device__())
    """, GPUARR_CUDA_EMULATE_DLPACK=mode)
    assert " ".join(out) == want


# the consumer's stream: a stream of its own, the legacy default stream (1, and None,
# which the standard reads as 1) and its thread's per-thread default stream (2)
@pytest.mark.parametrize("stream", ["own", "1", "None", "2"])
def test_consumer_stream_sees_the_write_gpuarr_had_queued(stream):
    out = run_emulated(f"""
        g = gpuarr.gpu(0)
        x = gpuarr.zeros(N, dtype=gpuarr.uint8, device=g)
        x.numpy()
        s = out_u64("stream", 0) if "{stream}" == "own" else {stream}
        cu("sleep", 0, 0, 300)  # gpuarr's stream is busy ...
        y = x + 7               # ... so this write is queued, not done
        with count_kernels(g) as k:
            cap = y.__dlpack__(stream=s, max_version=(1, 0))
        ptr, m = consume(cap)
        got = read(0, 1 if s is None else s, ptr, N)
        print(k.syncs, np.unique(got).tolist())
        drop(m)
    """)
    # no host wait in the hand-off (an event), and the consumer read gpuarr's write
    assert out == ["0", "[7]"]


@pytest.mark.parametrize("dev", [0, 1])
def test_gpuarr_names_its_own_stream_and_sees_the_producers_queued_write(dev):
    out = run_emulated(f"""
        p = FakeProducer({dev}, N)
        cu("memset", {dev}, p.stream, p.ptr, 1, N)
        cu("sync", {dev}, p.stream)
        cu("sleep", {dev}, p.stream, 300)          # the producer is busy ...
        cu("memset", {dev}, p.stream, p.ptr, 5, N)  # ... so its write is queued
        y = gpuarr.from_dlpack(p)
        z = (y + 1).numpy()
        print(p.named == [out_u64("own_stream", {dev})], y.device.index,
              np.unique(z).tolist())
    """)
    assert out == ["True", str(dev), "[6]"]


def test_imported_block_goes_back_to_its_producer_after_gpuarr_read_it():
    out = run_emulated("""
        p = FakeProducer(0, N)
        cu("memset", 0, p.stream, p.ptr, 3, N)
        cu("sync", 0, p.stream)
        y = gpuarr.from_dlpack(p)
        cu("sleep", 0, 0, 300)  # gpuarr's stream is busy ...
        z = y + 1               # ... so this read of the producer's block is queued

        def reuse():
            # the producer's own cache hands the block to its next user at once
            cu("memset", 0, p.stream, p.ptr, 9, N)
            cu("sync", 0, p.stream)
        p.on_delete = reuse
        del y
        print(p.deleted, np.unique(z.numpy()).tolist())
    """)
    assert out == ["True", "[4]"]


# the stream the consumer named: one of its own, the legacy default stream (1, and None,
# which the standard reads as 1), its per-thread default stream (2); -1 names none
@pytest.mark.parametrize("stream", ["own", "1", "None", "2", "-1"])
def test_exported_block_goes_back_to_gpuarrs_cache_after_the_consumer_read_it(stream):
    out = run_emulated(f"""
        g = gpuarr.gpu(0)
        x = gpuarr.full(N, 3, dtype=gpuarr.uint8, device=g)
        x.numpy()
        s = out_u64("stream", 0) if "{stream}" == "own" else {stream}
        cap = x.__dlpack__(stream=s, max_version=(1, 0))
        ptr, m = consume(cap)
        mine = alloc(0, N)
        r = out_u64("stream", 0) if s == -1 else 1 if s is None else s
        cu("sleep", 0, r, 300)          # the consumer's stream is busy ...
        cu("copy", 0, r, mine, ptr, N)  # ... so its read of gpuarr's block is queued
        del x, cap
        with count_kernels(g) as k:
            drop(m)                     # the consumer is done with it, as it sees it
        w = gpuarr.full(N, 8, dtype=gpuarr.uint8, device=g)  # x's block, from the cache
        print(w._data_ptr == ptr, k.syncs, np.unique(read(0, r, mine, N)).tolist())
    """)
    # gpuarr's stream waits for an event on the named stream: no host wait; a consumer
    # that named none (-1) read on a stream gpuarr does not know: the whole device
    assert out == ["True", "1" if stream == "-1" else "0", "[3]"]


def test_unconsumed_capsule_is_freed_without_a_wait():
    # nobody read it: nothing to wait for (NumPy rejecting a CUDA capsule drops it)
    out = run_emulated("""
        g = gpuarr.gpu(0)
        x = gpuarr.ones(N, dtype=gpuarr.uint8, device=g)
        cap = x.__dlpack__(stream=-1, max_version=(1, 0))
        with count_kernels(g) as k:
            del cap
        print(k.syncs)
    """)
    assert out == ["0"]


def test_stream_argument_is_checked_on_cuda_devices():
    out = run_emulated("""
        x = gpuarr.ones(3, device=gpuarr.gpu(0))
        for s in (0, -2, "1", 1.0, 12345):  # 12345: no stream's handle
            try:
                x.__dlpack__(stream=s)
                print("accepted", s)
            except (ValueError, TypeError) as e:
                print(type(e).__name__)
        x.__dlpack__(stream=-1)  # no synchronisation: accepted
        try:
            x.__dlpack__(stream=1, dl_device=(1, 0))
        except BufferError:
            print("BufferError")
    """)
    assert out == ["ValueError", "ValueError", "TypeError", "TypeError", "ValueError",
                   "BufferError"]


def test_stream_must_be_none_without_cuda_streams(device):
    # the CPU, simulated GPUs and emulated GPUs outside the test mode have no streams
    x = gpuarr.ones(3, device=device)
    if x.__dlpack_device__()[0] == 2:
        pytest.skip("a CUDA device takes streams")
    with pytest.raises(BufferError):
        x.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        x.__dlpack__(stream=1, dl_device=(1, 0))
