"""What every shim relies on (gpuarr/compat/_shim.py and the scopes): wrappers keep
identity and in-place updates, scopes nest and are per thread, and no shim adds names
to gpuarr itself."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import gpuarr
import gpuarr.compat.tensorflow as tf
import gpuarr.compat.torch as torch


def test_no_shim_adds_a_member_to_gpuarr_array():
    # In a fresh process: this one may have loaded the shims already.
    code = ("import gpuarr; before = set(dir(gpuarr.Array)); "
            "import gpuarr.compat.torch, gpuarr.compat.mxnet, gpuarr.compat.tensorflow, "
            "gpuarr.compat.jax, gpuarr.compat.flax; print(sorted(set(dir(gpuarr.Array)) - before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_an_in_place_update_changes_the_array_itself(device):
    w = torch.ones(3, device=device)
    inner = w.array
    w -= 0.5 * torch.ones(3, device=device)
    assert w.array is inner
    np.testing.assert_array_equal(inner.numpy(), [0.5, 0.5, 0.5])


def test_a_result_that_is_the_same_array_is_the_same_wrapper(device):
    x = torch.ones(2, device=device)
    assert x.to(device) is x and x.detach() is not x


def test_operators_mix_wrappers_python_numbers_and_arrays(device):
    x = torch.tensor([1.0, 2.0], device=device)
    out = 2 * x + x.array - 1
    assert isinstance(out, torch.Tensor)
    np.testing.assert_array_equal(out.numpy(), [2.0, 5.0])


def test_tf_scopes_nest_and_restore_the_default_device(two_gpus):
    with tf.device("/GPU:0"):
        with tf.device("/GPU:1"):
            inner = tf.ones((1,)).array.device
            with tf.device("/GPU:1"):
                pass
            again = tf.ones((1,)).array.device
        outer = tf.ones((1,)).array.device
    assert (inner, again, outer) == (gpuarr.gpu(1), gpuarr.gpu(1), gpuarr.gpu(0))
    assert gpuarr.get_default_device() == gpuarr.cpu()


def test_the_current_cuda_device_is_per_thread(two_gpus):
    seen = {}

    def other():
        seen["other"] = torch.cuda.current_device()

    torch.cuda.set_device(1)
    try:
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert (torch.cuda.current_device(), seen["other"]) == (1, 0)
    finally:
        torch.cuda.set_device(0)


def test_a_bad_wrap_says_what_it_takes():
    with pytest.raises(TypeError, match="wraps a gpuarr.Array, not list"):
        torch.Tensor([1, 2])
