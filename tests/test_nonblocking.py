"""Non-blocking copies and pinned host memory (PyTorch's spelling): x.to(d,
non_blocking=True), x.copyto(t, non_blocking=True), gpuarr.empty(..., pin_memory=True),
x.pin_memory(), x.is_pinned(). For now the copies keep the ordering of every other copy
(docs/DESIGN.md, "Non-blocking copies and pinned memory"): checked here by values read
after queued work, and by the ledger (no wait for a copy to a GPU, one for a copy to the
host, which must have its data)."""
import numpy as np
import pytest

import gpuarr
from gpuarr.testing import assert_array_equal

from conftest import DEVICES


def test_pinned_host_arrays():
    x = gpuarr.empty((4, 3), dtype="float32", pin_memory=True)
    assert x.is_pinned() and x.device == gpuarr.cpu() and x.dtype == gpuarr.float32
    assert x[1:, ::2].is_pinned()  # views share the memory
    y = gpuarr.asarray(np.arange(6.0))
    assert not y.is_pinned() and not gpuarr.empty(3).is_pinned()
    p = y.pin_memory()
    assert p.is_pinned() and p is not y and not y.is_pinned()
    assert p.pin_memory() is p
    assert_array_equal(p, np.arange(6.0), strict=True)


def test_only_host_memory_is_pinned(gpu_device):
    device = gpu_device
    x = gpuarr.ones(3, device=device)
    assert not x.is_pinned()
    with pytest.raises(ValueError, match="arrays on the CPU"):
        x.pin_memory()
    with pytest.raises(ValueError, match="pin_memory=True is for host memory"):
        gpuarr.empty(3, device=device, pin_memory=True)
    with pytest.raises(ValueError, match="only be set to True"):
        x._pinned = True


@pytest.mark.parametrize("src", DEVICES, ids=repr)
@pytest.mark.parametrize("dst", DEVICES, ids=repr)
def test_a_non_blocking_copy_sees_the_queued_writes_before_it(src, dst):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = gpuarr.asarray(a, device=src)
    if src.type == "cpu":
        x = x.pin_memory()
    for _ in range(5):  # queued writes on the source
        x *= 2
    with gpuarr.count_transfers() as t:
        y = x.to(dst, non_blocking=True)
        z = gpuarr.zeros((3, 4), device=dst)
        x.copyto(z, non_blocking=True)
    x += 1  # a later write on the source does not reach the copies
    assert (y is x) == (src == dst)  # to() its own device: the array itself
    del x
    moved = 2 if src != dst else 0
    assert (t.h2d_count, t.d2h_count, t.d2d_count) == (
        moved * (src.type == "cpu"), moved * (dst.type == "cpu"),
        moved * (src.type != "cpu" != dst.type))
    assert t.syncs == (moved if dst.type == "cpu" else 0)  # the host needs its data
    assert_array_equal(y, a * 32 + (src == dst), strict=True, device=dst)
    assert_array_equal(z, a * 32, strict=True, device=dst)
    assert_array_equal(z.copyto(dst, non_blocking=True), a * 32, device=dst)


def test_non_blocking_is_keyword_only_and_checked():
    x = gpuarr.ones(2)
    with pytest.raises(TypeError):
        x.to(gpuarr.cpu(), True)
    with pytest.raises(TypeError):
        x.copyto(gpuarr.cpu(), True)
    with pytest.raises(TypeError, match="copyto needs a target"):
        x.copyto(None, non_blocking=True)
