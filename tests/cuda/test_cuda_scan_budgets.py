"""Scans that fill every GPU (issue 45, item 4): a budget per shape.

On emulated CUDA (132 multiprocessors unless GPUARR_CUDA_EMULATE_SMS says otherwise) or
a GPU, every cumulative_sum / cumulative_prod shape launches at least as many blocks as
the GPU has multiprocessors whenever it has that many tiles of work (2048 elements for
8-byte accumulators, 1024 for 16-byte ones and for floats summed into integers:
csrc/cuda/kernels/k_scan.cu), in one launch and with no host wait; the answers are
checked against NumPy (a budget met with a wrong answer is no budget). Before issue 45
a column scan of 2048 x 1024 ran 4 blocks (a thread per column) and a row scan of
1024 x 2048 ran 128 (a warp per row). Skipped on the CPU and simulated GPUs, where
nothing is counted.
"""
import numpy as np
import pytest

import gpuarr
from conftest import needs_cuda_devices
from test_cuda_scans import _check, _data

pytestmark = needs_cuda_devices


@pytest.fixture
def dev():
    d = gpuarr.gpu(0)
    gpuarr.synchronize(d)  # nothing pending from an earlier test
    return d


SMS = 132  # the emulator's count (an H100's), as in test_cuda_budgets.py


def _scan_budget(dev, a, axis, op="cumulative_sum", out=None, tile=2048):
    x = gpuarr.asarray(a, device=dev)
    kw = {"axis": axis}
    if out is not None:
        kw["dtype"] = getattr(gpuarr, out)
    with gpuarr.testing.count_kernels(dev) as k:
        c = getattr(gpuarr, op)(x, **kw)
    tiles = -(-a.size // tile)
    assert tiles >= SMS, (a.shape, tiles)  # the case is one the issue covers
    assert k.launches == 1 and k.syncs == 0 and k.d2h == 0, k
    assert k.max_grid_blocks >= SMS, (a.shape, axis, k)
    _check(c.numpy(), a, axis, op, out)
    return k


# the two shapes of the issue cut to 136 tiles (emulation is slow; the same kernels and
# geometry as at 2048 x 1024 and 1024 x 2048, which ran 4 and 128 blocks before), and the
# others it names: many short rows, rows too few for a block per 8 of them, one long
# row, every axis of a 3-d array (66^3: columns of 66 steps, two chunks each, so the
# column tiles look back)
SHAPES = {
    "columns": ((544, 512), 0),    # 16 x 9 tiles of 32 columns x 64 rows (2 blocks before)
    "rows": ((136, 2048), 1),      # a tile a row (17 blocks before: a warp a row)
    "many short rows": ((32768, 10), 1),
    "few medium rows": ((1024, 300), 1),
    "one long row": ((300_000,), 0),
    "3-d axis 0": ((66, 66, 66), 0),
    "3-d axis 1": ((66, 66, 66), 1),
    "3-d axis 2": ((66, 66, 66), 2),
}


@pytest.mark.parametrize("case", list(SHAPES))
def test_every_scan_shape_fills_the_gpu_in_one_launch_without_a_wait(dev, case):
    shape, axis = SHAPES[case]
    _scan_budget(dev, _data(shape, "float32", 45), axis)


@pytest.mark.parametrize("dtype, op, out, shape", [
    ("bool", "cumulative_sum", None, (544, 512)),
    ("float16", "cumulative_sum", None, (544, 512)),
    ("complex64", "cumulative_prod", None, (544, 256)),
    ("complex128", "cumulative_sum", None, (544, 256)),
    ("float32", "cumulative_sum", "int64", (544, 256)),
])
def test_column_scans_of_every_accumulator_fill_the_gpu(dev, dtype, op, out, shape):
    # 136 tiles along axis 0: 2048-element tiles of 32 columns x 64 rows for 8-byte
    # accumulators, 1024-element ones (32 rows) for complex128 partial results and for
    # floats summed into integers (ga_scan_tile_items)
    a = _data(shape, dtype, 46)
    if op == "cumulative_prod":
        a = (1 + 1e-3 * a).astype(dtype)
    if out is not None:
        a = np.round(np.abs(a) * 50).astype(dtype)  # exact in the integer sum
    _scan_budget(dev, a, 0, op, out, tile=2048 if shape[1] == 512 else 1024)
