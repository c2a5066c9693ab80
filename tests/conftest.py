"""Shared fixtures: every test that takes `device` runs on the CPU and on every GPU
this process has (real, simulated with GPUARR_SIMULATE_GPUS, or emulated CUDA with
GPUARR_CUDA_EMULATE). CI runs the suite with 0 GPUs, 2 simulated and 2 emulated."""
import numpy as np
import pytest

import gpuarr

ALL_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
NUMERIC_DTYPES = INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES


def _devices():
    return [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]


DEVICES = _devices()


@pytest.fixture(params=DEVICES, ids=[repr(d) for d in DEVICES])
def device(request):
    """Each device of this process: cpu(0), then gpu(0), gpu(1), ..."""
    return request.param


@pytest.fixture
def gpu_device():
    """A GPU (skips when the process has none)."""
    if gpuarr.num_gpus() == 0:
        pytest.skip("needs a GPU (set GPUARR_SIMULATE_GPUS=2 to simulate two)")
    return gpuarr.gpu(0)


@pytest.fixture
def two_gpus():
    if gpuarr.num_gpus() < 2:
        pytest.skip("needs two GPUs (set GPUARR_SIMULATE_GPUS=2 to simulate them)")
    return gpuarr.gpu(0), gpuarr.gpu(1)


def to_numpy(x):
    """The oracle's view of a gpuarr array (an explicit copy)."""
    return x.numpy() if isinstance(x, gpuarr.Array) else np.asarray(x)
