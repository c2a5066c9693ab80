"""Read-only arrays (NumPy's ``x.flags.writeable``): broadcast views, read-only NumPy
and DLPack imports and every view of them refuse every write path with NumPy's
``ValueError: assignment destination is read-only``, and export read-only buffers."""
import numpy as np
import pytest

import gpuarr

RO = "assignment destination is read-only"


def _writes(b, src):
    """Every write path, each a callable that writes into b."""
    return {
        "iadd": lambda: b.__iadd__(1),
        "setitem scalar": lambda: b.__setitem__((0,) * b.ndim, 9),
        "setitem slice": lambda: b.__setitem__(..., src),
        "out=": lambda: gpuarr.add(src, 1, out=b),
        "copyto": lambda: src.copyto(b),
        "imul": lambda: b.__imul__(2),
        # the core's fill (gpuarr has no public Array.fill; NumPy's ndarray.fill raises
        # the same error)
        "fill": lambda: gpuarr._core._fill(b, 9),
    }


def _broadcast_views(device):
    z = gpuarr.zeros(4, device=device)
    yield "broadcast_to", z, gpuarr.broadcast_to(z, (3, 4))
    z = gpuarr.zeros(4, device=device)
    yield "broadcast_arrays", z, gpuarr.broadcast_arrays(z, gpuarr.ones((3, 1),
                                                                        device=device))[0]
    z = gpuarr.zeros(4, device=device)
    yield "view of broadcast", z, gpuarr.broadcast_to(z, (3, 4))[1:].T.T


@pytest.mark.parametrize("path", list(_writes(None, None)))
def test_every_write_into_a_broadcast_view_raises(device, path):
    for what, src, b in _broadcast_views(device):
        assert not b.flags.writeable and not b.flags["WRITEABLE"], what
        value = gpuarr.ones(b.shape, device=device)
        with pytest.raises(ValueError, match=RO):
            _writes(b, value)[path]()
        np.testing.assert_array_equal(src.numpy(), np.zeros(4), err_msg=what)


def test_numpy_agrees_that_broadcast_views_are_read_only():
    assert not np.broadcast_to(np.zeros(4), (3, 4)).flags.writeable
    with pytest.raises(ValueError, match=RO):
        np.broadcast_to(np.zeros(4), (3, 4))[0, 0] = 1


def test_a_read_only_numpy_import_and_its_views_are_read_only():
    n = np.arange(6.0)
    n.flags.writeable = False
    x = gpuarr.asarray(n)
    for v in (x, x[::2], x.reshape(2, 3).T):
        assert not v.flags.writeable
        for write in _writes(v, gpuarr.ones(v.shape)).values():
            with pytest.raises(ValueError, match=RO):
                write()
    np.testing.assert_array_equal(n, np.arange(6.0))
    assert gpuarr.array(n).flags.writeable  # a copy is writable


def test_buffer_protocol_exports_read_only_views_read_only():
    b = gpuarr.broadcast_to(gpuarr.zeros(4), (3, 4))
    n = np.asarray(b)
    assert not n.flags.writeable
    with pytest.raises(ValueError):
        n[0, 0] = 1
    assert memoryview(b).readonly


def test_dlpack_export_of_a_read_only_view_says_read_only():
    b = gpuarr.broadcast_to(gpuarr.zeros(4), (3, 4))
    n = np.from_dlpack(b)
    assert not n.flags.writeable


def test_the_writeable_flag_can_be_cleared_and_restored(device):
    x = gpuarr.zeros(3, device=device)
    assert x.flags.writeable
    x.flags.writeable = False
    with pytest.raises(ValueError, match=RO):
        x[0] = 1
    v = x[1:]
    assert not v.flags.writeable
    x.flags.writeable = True
    x[0] = 1
    assert x.numpy()[0] == 1
    with pytest.raises(ValueError, match="WRITEABLE"):
        gpuarr.broadcast_to(x, (2, 3)).flags.writeable = True


def test_copies_of_read_only_views_are_writable(device):
    b = gpuarr.broadcast_to(gpuarr.arange(3, device=device), (2, 3))
    for c in (b.copy(), b + 0, b.astype("float64"), gpuarr.asarray(b, copy=True)):
        assert c.flags.writeable
        c[0, 0] = 7


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8",
                                   "uint16", "uint32", "uint64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
def test_the_buffer_protocol_names_every_dtype(dtype):
    # the format codes come from the dtype list (py_dlpack.c): NumPy reads them back
    a = np.arange(6).reshape(2, 3).astype(dtype)
    m = memoryview(gpuarr.asarray(a))
    assert m.itemsize == a.itemsize and m.shape == a.shape, (m.format, m.shape)
    b = np.asarray(m)
    assert b.dtype == a.dtype, (m.format, b.dtype)
    np.testing.assert_array_equal(b, a)
