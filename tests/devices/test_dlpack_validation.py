"""from_dlpack validates what a producer hands over: crafted capsules (built with ctypes
from the struct layouts in csrc/core/dlpack.h) that lie about their data, offsets, strides,
dimensions, dtype or device raise BufferError naming the field, never crash.

Each crafted import runs in this process: a crash fails the whole run, which is the
point (CI runs this file under ASan too)."""
import ctypes
import random

import numpy as np
import pytest

import gpuarr


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

FLOAT64 = (2, 64, 1)

# An imported array reads its tensor struct when it is freed (the deleter field): the
# structs live until the end of the session, as a producer's would until its deleter.
_KEEP_ALIVE = []


class Producer:
    """A DLPack producer whose tensor says whatever the test wants. The memory the
    struct points at lives as long as the producer (no deleter: nothing to free)."""

    def __init__(self, data, shape, strides=None, dtype=FLOAT64, device=(1, 0),
                 byte_offset=0, ndim=None, versioned=True, readonly=False,
                 null_shape=False):
        self.keep = [data]
        t = DLTensor()
        t.data = data if isinstance(data, int) or data is None else ctypes.addressof(data)
        t.device = DLDevice(*device)
        t.ndim = len(shape) if ndim is None else ndim
        t.dtype = DLDataType(*dtype)
        n = max(len(shape), 1)
        sh = (ctypes.c_int64 * n)(*shape)
        self.keep.append(sh)
        t.shape = None if null_shape else ctypes.cast(sh, ctypes.POINTER(ctypes.c_int64))
        if strides is not None:
            st = (ctypes.c_int64 * max(len(strides), 1))(*strides)
            self.keep.append(st)
            t.strides = ctypes.cast(st, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        if versioned:
            m = DLManagedTensorVersioned()
            m.version = DLPackVersion(1, 0)
            m.flags = 1 if readonly else 0
            m.dl_tensor = t
            self.name = b"dltensor_versioned"
        else:
            m = DLManagedTensor()
            m.dl_tensor = t
            self.name = b"dltensor"
        self.managed = m
        _KEEP_ALIVE.append(self)

    def __dlpack__(self, **kw):
        return _capsule_new(ctypes.addressof(self.managed), self.name, None)

    def __dlpack_device__(self):
        return (self.managed.dl_tensor.device.device_type,
                self.managed.dl_tensor.device.device_id)


def _buf(nbytes=64):
    return (ctypes.c_char * nbytes)()


def _import(p, device=None):
    if device is None:
        return gpuarr.from_dlpack(p)
    return gpuarr.from_dlpack(p, device=device)


def test_a_valid_crafted_capsule_imports():
    b = (ctypes.c_double * 6)(*range(6))
    for versioned in (True, False):
        x = gpuarr.from_dlpack(Producer(b, (2, 3), versioned=versioned))
        np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))
        y = gpuarr.from_dlpack(Producer(b, (3,), strides=(-2,), byte_offset=40))
        np.testing.assert_array_equal(y.numpy(), [5.0, 3.0, 1.0])


BAD = [
    # (what the producer gets wrong, keyword arguments, the field the message names)
    ("NULL data with elements", dict(data=None, shape=(4,)), "data"),
    ("byte_offset 2**63", dict(shape=(2,), byte_offset=2**63), "byte_offset"),
    ("byte_offset wraps the address", dict(shape=(2,), byte_offset=2**64 - 8), "byte_offset"),
    ("stride 2**62 elements", dict(shape=(2,), strides=(2**62,)), "strides"),
    ("stride -2**62 elements", dict(shape=(2,), strides=(-(2**62),)), "strides"),
    ("stride * extent overflows", dict(shape=(2**20,), strides=(2**44,)), "strides"),
    ("negative extent below address 0", dict(shape=(3,), strides=(-(2**58),)), "strides"),
    ("negative dimension", dict(shape=(-1,)), "shape"),
    ("element count overflows", dict(shape=(2**32, 2**32, 2**32), strides=(0, 0, 0)), "shape"),
    ("ndim negative", dict(shape=(2,), ndim=-1), "ndim"),
    ("ndim too large", dict(shape=(1,) * 40), "ndim"),
    ("NULL shape", dict(shape=(2,), null_shape=True), "shape"),
    ("dtype lanes 4", dict(shape=(2,), dtype=(2, 32, 4)), "dtype"),
    ("dtype lanes 0", dict(shape=(2,), dtype=(2, 32, 0)), "dtype"),
    ("dtype code 99", dict(shape=(2,), dtype=(99, 32, 1)), "dtype"),
    ("dtype bits 7", dict(shape=(2,), dtype=(0, 7, 1)), "dtype"),
    ("bfloat16", dict(shape=(2,), dtype=(4, 16, 1)), "dtype"),
    ("device type 99", dict(shape=(2,), device=(99, 0)), "device"),
    ("device type -1", dict(shape=(2,), device=(-1, 0)), "device"),
    ("CPU device -1", dict(shape=(2,), device=(1, -1)), "CPU tensor's device_id must be 0"),
    ("CPU device 3", dict(shape=(2,), device=(1, 3)), "CPU tensor's device_id must be 0"),
    ("CUDA device -1", dict(shape=(2,), device=(2, -1)), "device"),
    ("CUDA device 2**31-1", dict(shape=(2,), device=(2, 2**31 - 1)), "device"),
]


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
@pytest.mark.parametrize("what,kw,field", BAD, ids=[b[0] for b in BAD])
def test_a_lying_capsule_raises_buffer_error_naming_the_field(device, versioned, what, kw,
                                                              field):
    kw = dict(kw)
    data = kw.pop("data", _buf())
    p = Producer(data, versioned=versioned, **kw)
    with pytest.raises(BufferError, match=field):
        _import(p, device)


def test_an_export_to_a_cpu_other_than_device_0_is_refused(device):
    x = gpuarr.ones(2, device=device)
    for di in (-1, 1):
        with pytest.raises(BufferError, match=rf"\(1, {di}\): the CPU is device \(1, 0\)"):
            x.__dlpack__(dl_device=(1, di))


def test_a_read_only_versioned_capsule_imports_read_only():
    b = (ctypes.c_double * 3)(1.0, 2.0, 3.0)
    x = gpuarr.from_dlpack(Producer(b, (3,), readonly=True))
    assert not x.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 5.0
    assert b[0] == 1.0


def test_fuzz_crafted_capsules(device):
    """Random capsules over a 256-byte buffer: each either imports (and then reads
    only inside the buffer) or raises BufferError/ValueError; none crashes."""
    rng = random.Random(1234)
    buf = _buf(256)
    base = ctypes.addressof(buf)
    big = [0, 1, 2, 3, 7, 2**31, 2**32 + 1, 2**62, 2**63 - 1]
    for _ in range(400):
        ndim = rng.choice([0, 1, 2, 3, rng.randint(-3, 40)])
        n = max(0, min(ndim, 40))
        shape = [rng.choice([0, 1, 2, 3, rng.choice(big), -rng.choice(big)]) for _ in range(n)]
        strides = None
        if rng.random() < 0.7:
            strides = [rng.choice([0, 1, -1, 2, -3, rng.choice(big), -rng.choice(big)])
                       for _ in range(n)]
        dtype = (rng.choice([0, 1, 2, 4, 5, 6, 3, 255]), rng.choice([1, 8, 16, 32, 64, 128, 7]),
                 rng.choice([1, 1, 1, 0, 2]))
        dl_dev = rng.choice([(1, 0), (1, 0), (2, 0), (3, 0), (12, 0), (2, -5), (77, 1)])
        data = rng.choice([None, 0, base, base + 128, base + 256, 2**64 - 8])
        offset = rng.choice([0, 0, 8, 64, 2**63, 2**64 - 8])
        p = Producer(data if data is not None else None, shape, strides=strides,
                     dtype=dtype, device=dl_dev, byte_offset=offset, ndim=ndim,
                     versioned=rng.random() < 0.5)
        p.keep.append(buf)
        try:
            x = _import(p)
        except (BufferError, ValueError):
            continue
        # It imported: read it only where the geometry lies inside `buf` (a valid
        # geometry over memory the test does not own is the producer's business).
        view = _numpy_view(buf, base, data, offset, shape, strides, x.dtype)
        if view is not None:
            np.testing.assert_array_equal(x.to(device).numpy(), view)


def _numpy_view(buf, base, data, offset, shape, strides, dtype):
    if data is None or x_size(shape) == 0:
        return None
    item = np.dtype(str(dtype)).itemsize
    if strides is None:
        strides = []
        acc = 1
        for d in reversed(shape):
            strides.insert(0, acc)
            acc *= d
    start = data + offset - base
    lo = start + sum(min(0, s * item * (d - 1)) for s, d in zip(strides, shape))
    hi = start + sum(max(0, s * item * (d - 1)) for s, d in zip(strides, shape)) + item
    if lo < 0 or hi > 256:
        return None
    return np.ndarray(shape, dtype=str(dtype), buffer=memoryview(buf).cast("B"),
                      offset=start, strides=[s * item for s in strides]).copy()


def x_size(shape):
    n = 1
    for d in shape:
        n *= d
    return n
