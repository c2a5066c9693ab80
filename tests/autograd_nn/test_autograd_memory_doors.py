"""The doors out of an array's memory (issue 44, item 1): NumPy's __array__, the
buffer protocol, __dlpack__ and _data_ptr give a view that host code can write
without autograd's in-place check or version counter seeing it, so a write through
one would give a silent wrong gradient. For an array that requires grad under grad
mode each door refuses (RuntimeError naming detach()/numpy()), on every device;
copies still work, and arrays that do not require grad keep their zero-copy views."""
import ctypes

import numpy as np
import pytest

import gpuarr
from gpuarr import autograd


def leaf(device):
    return gpuarr.asarray([1.0, 2.0, 3.0], dtype="float32", device=device,
                          requires_grad=True)


DOORS = {
    "np.asarray": np.asarray,
    "memoryview": memoryview,
    "np.from_dlpack": np.from_dlpack,
    "__array__": lambda x: x.__array__(),
    "__dlpack__": lambda x: x.__dlpack__(),
    "__dlpack__ versioned": lambda x: x.__dlpack__(max_version=(1, 0)),
    "ctypes via _data_ptr": lambda x: (ctypes.c_float * 3).from_address(x._data_ptr),
}


@pytest.mark.parametrize("door", list(DOORS))
def test_each_door_refuses_an_array_that_requires_grad(device, door):
    x = leaf(device)
    with pytest.raises(RuntimeError, match=r"requires grad.*detach\(\)\.numpy\(\)"):
        DOORS[door](x)


@pytest.mark.parametrize("door", list(DOORS))
def test_a_parameter_and_a_view_of_it_are_refused_too(device, door):
    p = gpuarr.nn.Parameter(gpuarr.ones((2, 3), device=device))
    with pytest.raises(RuntimeError, match="requires grad"):
        DOORS[door](p)
    with pytest.raises(RuntimeError, match="requires grad"):
        DOORS[door](p[0])  # a recorded view requires grad as well


def test_the_write_that_gave_a_wrong_gradient_cannot_happen():
    # the report: a write through np.asarray(x) passed the in-place check and
    # backward returned [200, 4, 6] instead of [2, 4, 6]
    x = leaf(gpuarr.cpu())
    y = (x * x).sum()
    with pytest.raises(RuntimeError):
        np.asarray(x)[0] = 100.0
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 4, 6])


def test_the_doors_open_outside_grad_mode_and_on_a_detached_array():
    x = leaf(gpuarr.cpu())
    with gpuarr.no_grad():
        assert np.asarray(x).tolist() == [1, 2, 3]
        assert memoryview(x).tolist() == [1, 2, 3]
    d = x.detach()  # the user takes charge of the memory
    assert np.from_dlpack(d).tolist() == [1, 2, 3]
    assert (ctypes.c_float * 3).from_address(d._data_ptr)[2] == 3.0
    np.asarray(d)[0] = 5.0  # a zero-copy view, as for any array without grad
    assert x.detach().numpy().tolist() == [5, 2, 3]


def test_copies_are_not_refused(device):
    x = leaf(device)
    assert x.detach().numpy().tolist() == [1, 2, 3]
    if device.type == "cpu":
        c = x.__array__(copy=True)
        c[0] = 7.0  # a copy: the array is unchanged
        assert c.tolist() == [7, 2, 3] and x.detach().numpy().tolist() == [1, 2, 3]
        assert np.from_dlpack(x, copy=True).tolist() == [1, 2, 3]


def test_an_attach_grad_parameter_is_open_outside_record():
    # MXNet lets its parameters be written outside record(), so their doors stay open
    x = gpuarr.asarray([1.0, 2.0], dtype="float32")
    x.attach_grad()
    assert np.asarray(x).tolist() == [1, 2]
    with autograd.record():
        with pytest.raises(RuntimeError, match="requires grad"):
            np.asarray(x)


def test_arrays_without_grad_keep_their_zero_copy_host_views():
    x = gpuarr.asarray([1.0, 2.0, 3.0], dtype="float32")
    np.asarray(x)[0] = 9.0
    memoryview(x)[1] = 8.0
    np.from_dlpack(x)[2] = 7.0
    assert x.numpy().tolist() == [9, 8, 7]
    assert (ctypes.c_float * 3).from_address(x._data_ptr)[0] == 9.0
