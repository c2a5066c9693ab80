"""Recorded graphs are freed: after backward, and when a result that was never
differentiated dies. Thousands of training steps hold no more host memory (Python's
allocators, under tracemalloc) and no more device memory than the first ones."""
import gc
import sys
import weakref

import numpy as np
import pytest

import gpuarr
from conftest import DEVICES

# the emulated CUDA device runs each kernel on fibers: fewer steps there
STEPS = 1000 if gpuarr._core._gpu_mode()[0] == "emulated" else 2000


def _step(x, w, b, t, idx):
    h = gpuarr.tanh(x @ w + b)
    loss = ((h - t) ** 2).mean() + h[idx].sum() * 0.01 + gpuarr.logsumexp(h, axis=1).mean()
    loss.backward()
    with gpuarr.no_grad():
        w -= 0.01 * w.grad
        b -= 0.01 * b.grad
    w.grad = None
    b.grad = None


def _setup(device):
    rng = np.random.default_rng(0)
    x = gpuarr.asarray(rng.standard_normal((4, 3)), dtype="float32", device=device)
    t = gpuarr.asarray(rng.standard_normal((4, 2)), dtype="float32", device=device)
    w = gpuarr.array(rng.standard_normal((3, 2)), dtype="float32", device=device,
                     requires_grad=True)
    b = gpuarr.zeros(2, device=device, requires_grad=True)
    idx = gpuarr.asarray([0, 2, 2], device=device)
    return x, w, b, t, idx


# One device per mode: the CPU in the plain run, the last GPU in the GPU runs (the
# steps are what cost time, and the CPU's run is the same in every mode).
LAST = DEVICES[-1]


@pytest.mark.parametrize("device", [LAST], ids=[repr(LAST)])
def test_training_steps_hold_no_more_memory_over_thousands_of_steps(device):
    args = _setup(device)
    for _ in range(50):  # warm caches (allocator blocks, interned names, type caches)
        _step(*args)
    gc.collect()
    gpuarr.synchronize()
    dev_before = gpuarr.memory_stats(device)["allocated_bytes"]
    blocks = sys.getallocatedblocks()
    for _ in range(STEPS):
        _step(*args)
    gc.collect()
    gpuarr.synchronize()
    # Python's allocator blocks: a leak of one object per step would be thousands
    assert sys.getallocatedblocks() - blocks < 200
    assert gpuarr.memory_stats(device)["allocated_bytes"] == dev_before


def test_a_leaked_node_would_show(device):
    """The measure above sees a leak of one node per step."""
    args = _setup(device)
    kept = []
    gc.collect()
    blocks = sys.getallocatedblocks()
    for _ in range(300):
        x = args[1] * 2.0
        kept.append(x.grad_fn)
    assert sys.getallocatedblocks() - blocks >= 300


def test_backward_frees_the_graph_and_its_saved_arrays(device):
    x = gpuarr.ones(3, device=device, requires_grad=True)
    h = x.exp()
    saved = weakref.ref(h.grad_fn._unpack()[1])  # exp saves its result
    inner = weakref.ref(h)
    y = (h * 2.0).sum()
    del h
    assert inner() is not None  # kept by y's graph (MulBackward's operand)
    y.backward()
    gc.collect()
    # freed by backward, while y and its grad_fn still live
    assert saved() is None and inner() is None


def test_a_result_that_is_never_differentiated_frees_its_graph(device):
    x = gpuarr.ones(3, device=device, requires_grad=True)
    y = (x * 2.0).sin()
    inner = weakref.ref(y.grad_fn._unpack()[0][0])  # the product, kept for sin
    assert inner() is not None
    del y
    assert inner() is None  # by reference counting, no collection
