"""Pickling keeps the values, the dtype and the device."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import gpuarr
from conftest import ALL_DTYPES


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_pickle_round_trip_keeps_values_dtype_and_device(device, dtype):
    a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    x = gpuarr.asarray(a, device=device)
    y = pickle.loads(pickle.dumps(x))
    assert y.device == device and y.dtype == dtype and y.shape == (3, 4)
    np.testing.assert_array_equal(y.numpy(), a)


def test_pickle_of_strided_and_0d(device):
    x = gpuarr.asarray(np.arange(10.0)[::-3], device=device)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(x)).numpy(), [9.0, 6.0, 3.0, 0.0])
    z = gpuarr.asarray(np.float64(2.5), device=device)
    assert pickle.loads(pickle.dumps(z)).shape == ()


def test_unpickled_array_is_independent():
    x = gpuarr.asarray(np.zeros(3))
    y = pickle.loads(pickle.dumps(x))
    assert y._storage_id != x._storage_id


def test_unpickling_onto_a_missing_gpu_says_how_to_fix_it(tmp_path):
    code = ("import pickle, gpuarr; "
            "open(r'%s', 'wb').write(pickle.dumps(gpuarr.ones(2, device=gpuarr.gpu(1))))"
            % (tmp_path / "x.pkl"))
    env = dict(os.environ, GPUARR_SIMULATE_GPUS="2")
    env.pop("GPUARR_CUDA_EMULATE", None)  # emulation would win over simulation
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    env = dict(os.environ)
    env.pop("GPUARR_SIMULATE_GPUS", None)
    env.pop("GPUARR_CUDA_EMULATE", None)
    load = "import pickle; pickle.load(open(r'%s', 'rb'))" % (tmp_path / "x.pkl")
    r = subprocess.run([sys.executable, "-c", load], env=env, capture_output=True, text=True)
    if r.returncode == 0:
        pytest.skip("this machine has two real GPUs: the array loaded")
    assert "gpuarr.load" in r.stderr and "GPUARR_SIMULATE_GPUS" in r.stderr
