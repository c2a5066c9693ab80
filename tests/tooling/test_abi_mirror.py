"""The tests' ctypes mirrors of ga_backend.h match the layout the C compiler chose.

tests/cuda/test_cuda_kernels.py drives the CUDA plugin's table below the core through
ctypes copies of its structs; a copy that drifts from the header would hand the plugin
garbage. `_core._abi_layout()` reports each struct's size and each field's offset and
size as compiled, and this file checks every mirror against it (the emulated-CUDA
tests check theirs in tests/cuda/test_cuda_emulation.py's prelude). No device is
needed."""
import ctypes
import importlib.util
import os

import pytest

from gpuarr import _core

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA_TESTS = os.path.join(TESTS, "cuda")  # the files whose mirrors are checked


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_mirror_{name}",
                                                  os.path.join(CUDA_TESTS, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_mirror(cls, layout, *, complete):
    """Compare a ctypes Structure with _abi_layout()'s entry; ctypes names may carry
    a trailing underscore where the C name is a Python keyword (`in_`)."""
    size, fields = layout
    c = {name: (off, sz) for name, off, sz in fields}
    names = [f[0] for f in cls._fields_]
    for name in names:
        cname = name.rstrip("_")
        assert cname in c, f"{cls.__name__}.{name}: no such field in C"
        got = getattr(cls, name)
        assert (got.offset, got.size) == c[cname], (
            f"{cls.__name__}.{name}: mirror at offset {got.offset} size {got.size}, "
            f"C has offset {c[cname][0]} size {c[cname][1]}")
    assert [n.rstrip("_") for n in names] == [f[0] for f in fields][:len(names)], (
        f"{cls.__name__}: fields out of order")
    if complete:
        assert ctypes.sizeof(cls) == size, (
            f"{cls.__name__}: mirror is {ctypes.sizeof(cls)} bytes, C says {size}")


MIRRORS = [("_Operand", "ga_operand", True), ("_Loop", "ga_loop", True),
           ("_IndexDesc", "ga_index_desc", True), ("_ReduceDesc", "ga_reduce_desc", True),
           # a prefix of the table: the tests call only its first entries
           ("_Backend", "ga_backend", False)]


@pytest.mark.parametrize("mirror,cname,complete", MIRRORS)
def test_cuda_kernels_mirrors_match_the_compiled_layout(mirror, cname, complete):
    mod = _load("test_cuda_kernels")
    check_mirror(getattr(mod, mirror), _core._abi_layout()[cname], complete=complete)


def test_the_check_fails_on_a_drifted_mirror():
    class Drifted(ctypes.Structure):  # ga_loop with `size` as 32 bits
        _fields_ = [("ndim", ctypes.c_int32), ("nargs", ctypes.c_int32),
                    ("size", ctypes.c_int32)]
    with pytest.raises(AssertionError, match="size"):
        check_mirror(Drifted, _core._abi_layout()["ga_loop"], complete=False)

    class Reordered(ctypes.Structure):
        _fields_ = [("nargs", ctypes.c_int32), ("ndim", ctypes.c_int32)]
    with pytest.raises(AssertionError):
        check_mirror(Reordered, _core._abi_layout()["ga_loop"], complete=False)


def test_layout_lists_every_backend_entry_in_order():
    size, fields = _core._abi_layout()["ga_backend"]
    offsets = [off for _, off, _ in fields]
    assert offsets == sorted(offsets) and offsets[0] == 0
    # the entries fill the table: no entry is missing from py_abi.c's list (a gap of
    # a pointer's size or more would be one; smaller gaps are alignment padding)
    ends = [off + sz for _, off, sz in fields]
    gaps = [nxt - end for end, nxt in zip(ends, offsets[1:] + [size])]
    assert all(0 <= g < ctypes.sizeof(ctypes.c_void_p) for g in gaps), (fields, size)
