"""GPU arrays whose elements are not aligned: a foreign CUDA tensor imported through
DLPack at an odd byte offset. Every GPU kernel loads whole elements (GA_K_ELEMENT in
csrc/core/ga_config.h: one load of the element's width, as a GPU needs), so the core
stages such an array through an aligned copy (ga_element_aligned) before a reduction,
scan, gather, scatter or matmul reads or writes it; the copy kernel alone takes
unaligned operands. The emulator faults on an unaligned element access as a GPU
does (test_cuda_emulation.py), so a path that forgot to stage fails here.

Runs on emulated devices that play CUDA devices for DLPack (the test mode of
test_dlpack_streams.py), in a fresh interpreter per test."""
import textwrap

import pytest

import test_dlpack_streams

pytestmark = test_dlpack_streams.pytestmark

# A producer of one tensor of `dtype` whose data start `off` bytes into a device block
# (so not element-aligned for off % itemsize != 0), with NumPy's bytes copied in.
UNALIGNED = """
CODES = {"f": 2, "i": 0, "u": 1, "c": 5, "b": 6}
KEEP = []  # the ctypes structs a capsule points at live as long as the process

class Unaligned:
    def __init__(self, dev, values, off):
        self.dev, self.values = dev, np.ascontiguousarray(values)
        raw = self.values.view(np.uint8).ravel()
        self.ptr = alloc(dev, raw.size + off + 16)
        self.off = off
        s = out_u64("stream", dev)
        cu("copy", dev, s, self.ptr + off, raw.ctypes.data, raw.size)
        cu("sync", dev, s)

    def __dlpack_device__(self):
        return (2, self.dev)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        v = self.values
        self.shape = (ctypes.c_int64 * v.ndim)(*v.shape)
        self.deleter = DELETER(lambda _: None)
        m = self.managed = Managed()
        m.major, m.minor = 1, 0
        m.deleter = ctypes.cast(self.deleter, ctypes.c_void_p)
        t = m.dl_tensor
        t.data, t.byte_offset = self.ptr, self.off
        t.ndim, t.shape = v.ndim, self.shape
        t.device.device_type, t.device.device_id = 2, self.dev
        t.dtype.code, t.dtype.bits, t.dtype.lanes = CODES[v.dtype.kind], v.dtype.itemsize * 8, 1
        KEEP.append((m, self.shape, self.deleter))
        return api.PyCapsule_New(ctypes.addressof(m), NAME, None)

    def device_bytes(self):
        # what the producer's memory holds now, as values
        raw = read(self.dev, out_u64("stream", self.dev), self.ptr + self.off,
                   self.values.nbytes)
        return raw.view(self.values.dtype).reshape(self.values.shape)

def check(got, want):
    got = got.numpy() if hasattr(got, "numpy") else got
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
"""


def run(code):
    return test_dlpack_streams.run_emulated(UNALIGNED + textwrap.dedent(code))

DTYPES = ["float32", "float64", "int16", "int64", "uint32", "complex64", "complex128",
          "float16"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_scans_and_gathers_of_an_unaligned_import_match_numpy(dtype):
    out = run(f"""
        rng = np.random.default_rng(3)
        # small integers: every sum is exact in every dtype, float16 included
        a = rng.integers(-4, 5, size=(37, 29)).astype("{dtype}")
        if a.dtype.kind == "c":
            a = a + 1j * a[::-1]
        p = Unaligned(0, a, 1)
        x = gpuarr.from_dlpack(p)
        assert x.device == gpuarr.gpu(0) and x.shape == a.shape
        check(x.sum(), a.sum())
        check(x.sum(axis=0), a.sum(axis=0))
        check(gpuarr.cumulative_sum(x, axis=1), np.cumsum(a, axis=1))
        if a.dtype.kind != "c":
            check(x.max(axis=1), a.max(axis=1))
            check(gpuarr.argmax(x, axis=0), a.argmax(axis=0))
        idx = np.array([3, 0, 36, 3])
        check(x[gpuarr.asarray(idx, device=x.device)], a[idx])
        check(x[:, ::3][gpuarr.asarray(idx % 10, device=x.device)], a[:, ::3][idx % 10])
        mask = a.real > 0
        check(x[gpuarr.asarray(mask, device=x.device)], a[mask])
        check(x + x, a + a)
        print("ok")
    """)
    assert out == ["ok"]


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128"])
def test_scatter_into_an_unaligned_import_writes_the_producers_memory(dtype):
    out = run(f"""
        a = np.arange(40, dtype="{dtype}").reshape(8, 5)
        p = Unaligned(1, a, 3)
        x = gpuarr.from_dlpack(p)
        idx = gpuarr.asarray(np.array([1, 6]), device=x.device)
        x[idx] = gpuarr.asarray(np.full((2, 5), 7, dtype="{dtype}"), device=x.device)
        x[:, gpuarr.asarray(np.array([0]), device=x.device)] = -1
        want = a.copy()
        want[[1, 6]] = 7
        want[:, [0]] = -1
        check(x, want)
        check(p.device_bytes(), want)   # written through, not into a private copy
        # an unaligned value and an unaligned index array
        v = Unaligned(1, np.full((2, 5), 9, dtype="{dtype}"), 5)
        i = Unaligned(1, np.array([2, 3]), 1)
        x[gpuarr.from_dlpack(i)] = gpuarr.from_dlpack(v)
        want[[2, 3]] = 9
        check(p.device_bytes(), want)
        print("ok")
    """)
    assert out == ["ok"]


def test_matmul_of_unaligned_imports_matches_numpy():
    out = run("""
        rng = np.random.default_rng(5)
        a = rng.standard_normal((33, 17)).astype("float32")
        b = rng.standard_normal((17, 9)).astype("float32")
        x = gpuarr.from_dlpack(Unaligned(0, a, 2))
        y = gpuarr.from_dlpack(Unaligned(0, b, 1))
        check(x @ y, a @ b)
        check(gpuarr.matmul(x.T, x), a.T @ a)
        print("ok")
    """)
    assert out == ["ok"]


def test_slice_assignment_into_an_unaligned_import_copies_only_the_slice():
    # A basic index only copies, and the copy kernel takes unaligned operands: no
    # aligned copy of the whole array and back (that is for scatters only, and cost 4
    # launches here). Whole rows are contiguous bytes: a DMA copy, no launch. A scalar
    # into an unaligned strided view: the copy kernel into a scratch buffer and the
    # byte-wise restride into place, 2 launches.
    out = run("""
        a = np.arange(4000, dtype="float32").reshape(80, 50)
        p = Unaligned(0, a, 2)
        x = gpuarr.from_dlpack(p)
        v = gpuarr.asarray(np.full((2, 50), 7, dtype="float32"), device=x.device)
        with gpuarr.testing.count_kernels(x.device) as k:
            x[1:3] = v
        with gpuarr.testing.count_kernels(x.device) as k2:
            x[5, 10:20] = -1.5
        want = a.copy()
        want[1:3] = 7
        want[5, 10:20] = -1.5
        check(x, want)                  # waits for gpuarr's stream
        check(p.device_bytes(), want)   # then the producer's memory holds it
        print(k.launches)
        print(k2.launches)
    """)
    assert out == ["0", "2"]
