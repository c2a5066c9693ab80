"""Devices: values, counting, fallbacks, the default device, moves and copies between
devices, the mismatch rule, memory statistics and gpuarr.info()."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import gpuarr

# Subprocesses import the same gpuarr as these tests: installed, or a source tree.
PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))


def run_python(code, **env):
    """Run code in a fresh interpreter (the device list is fixed once per process)."""
    e = dict(os.environ, PYTHONPATH=PYDIR)
    for k in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE"):
        e.pop(k, None)
    e.update({k: str(v) for k, v in env.items()})
    r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


# --- devices are values --------------------------------------------------------------

def test_device_reprs_are_kind_and_index():
    assert (repr(gpuarr.cpu()), repr(gpuarr.gpu()), repr(gpuarr.gpu(1))) == \
        ("cpu(0)", "gpu(0)", "gpu(1)")


def test_devices_compare_and_hash_by_value():
    assert gpuarr.gpu() == gpuarr.gpu(0)
    assert gpuarr.gpu(1) == gpuarr.gpu(1) and gpuarr.gpu(0) != gpuarr.gpu(1)
    assert gpuarr.cpu() != gpuarr.gpu(0)
    assert len({gpuarr.gpu(1), gpuarr.gpu(1), gpuarr.cpu(), gpuarr.cpu()}) == 2
    assert {gpuarr.gpu(1): "b"}[gpuarr.Device("gpu:1")] == "b"


@pytest.mark.parametrize("text, expected", [
    ("cpu", "cpu(0)"), ("cpu:0", "cpu(0)"), ("gpu", "gpu(0)"), ("gpu:1", "gpu(1)"),
    ("cuda", "gpu(0)"), ("cuda:1", "gpu(1)"),
])
def test_device_from_string(text, expected):
    assert repr(gpuarr.Device(text)) == expected


def test_cuda_string_names_the_same_device_as_gpu():
    assert gpuarr.Device("cuda:1") == gpuarr.gpu(1)


@pytest.mark.parametrize("bad", ["tpu", "gpu:", "gpu:x", "cuda:-1", ""])
def test_bad_device_strings_raise_value_error_with_the_forms(bad):
    with pytest.raises(ValueError, match="'gpu:1'"):
        gpuarr.Device(bad)


def test_there_is_one_cpu_and_negative_gpus_do_not_exist():
    with pytest.raises(ValueError, match="only one CPU"):
        gpuarr.Device("cpu:1")
    with pytest.raises(ValueError, match=">= 0"):
        gpuarr.gpu(-1)


def test_device_type_and_index_attributes():
    assert gpuarr.gpu(3).type == "gpu" and gpuarr.gpu(3).index == 3
    assert gpuarr.cpu().type == "cpu" and gpuarr.cpu().index == 0


def test_building_a_missing_gpu_never_fails():
    d = gpuarr.gpu(9)
    assert repr(d) == "gpu(9)"


def test_using_a_missing_gpu_lists_the_devices_that_exist():
    with pytest.raises(Exception) as e:
        gpuarr.asarray(np.ones(3), device=gpuarr.gpu(9))
    msg = str(e.value)
    assert "gpu(9)" in msg and "cpu(0)" in msg
    for i in range(gpuarr.num_gpus()):
        assert f"gpu({i})" in msg


def test_devices_pickle_by_value():
    import pickle

    assert pickle.loads(pickle.dumps(gpuarr.gpu(1))) == gpuarr.gpu(1)


# --- how many GPUs ---------------------------------------------------------------------

def test_num_gpus_is_a_non_negative_int():
    n = gpuarr.num_gpus()
    assert isinstance(n, int) and n >= 0


def test_num_gpus_follows_gpuarr_simulate_gpus():
    assert run_python("import gpuarr; print(gpuarr.num_gpus())",
                      GPUARR_SIMULATE_GPUS=2) == "2"
    assert run_python("import gpuarr; print(gpuarr.num_gpus())",
                      GPUARR_SIMULATE_GPUS=0) == "0"


def test_without_a_driver_or_plugin_num_gpus_is_zero_and_does_not_raise():
    # Forcing zero visible CUDA devices gives the "no GPU" answer on any machine.
    out = run_python("import gpuarr; print(gpuarr.num_gpus(), gpuarr.try_gpu())",
                     CUDA_VISIBLE_DEVICES="")
    assert out == "0 cpu(0)"


def test_try_gpu_falls_back_to_the_cpu():
    assert gpuarr.try_gpu(10) == gpuarr.cpu()
    n = gpuarr.num_gpus()
    assert gpuarr.try_gpu() == (gpuarr.gpu(0) if n else gpuarr.cpu())


def test_try_all_gpus_lists_every_gpu_or_the_cpu():
    n = gpuarr.num_gpus()
    expected = [gpuarr.gpu(i) for i in range(n)] or [gpuarr.cpu()]
    assert gpuarr.try_all_gpus() == expected


def test_try_gpu_in_a_process_with_two_simulated_gpus():
    out = run_python("import gpuarr as g; print(g.try_gpu(), g.try_gpu(1), g.try_gpu(10), "
                     "g.try_all_gpus())", GPUARR_SIMULATE_GPUS=2)
    assert out == "gpu(0) gpu(1) cpu(0) [gpu(0), gpu(1)]"


# --- the default device ----------------------------------------------------------------

def test_default_device_is_the_cpu():
    assert gpuarr.get_default_device() == gpuarr.cpu()
    assert gpuarr.asarray(np.ones(2)).device == gpuarr.cpu()


def test_with_device_sets_the_default_for_creation(device):
    with device:
        assert gpuarr.get_default_device() == device
        x = gpuarr.asarray(np.ones(3))
    assert x.device == device
    assert gpuarr.get_default_device() == gpuarr.cpu()


def test_with_device_blocks_nest(two_gpus):
    g0, g1 = two_gpus
    with g0:
        with g1:
            assert gpuarr.asarray(np.ones(1)).device == g1
        assert gpuarr.asarray(np.ones(1)).device == g0
    assert gpuarr.asarray(np.ones(1)).device == gpuarr.cpu()


def test_with_device_is_per_thread(gpu_device):
    inside, seen = threading.Event(), threading.Event()
    result = {}

    def other():
        inside.wait(5)
        result["default"] = gpuarr.get_default_device()
        result["placed"] = gpuarr.asarray(np.ones(1)).device
        seen.set()

    t = threading.Thread(target=other)
    t.start()
    with gpu_device:
        inside.set()
        seen.wait(5)
    t.join()
    assert result == {"default": gpuarr.cpu(), "placed": gpuarr.cpu()}


def test_with_device_restores_the_default_after_an_exception(device):
    with pytest.raises(KeyError):
        with device:
            raise KeyError("x")
    assert gpuarr.get_default_device() == gpuarr.cpu()


def test_set_default_device_is_global_and_with_overrides_it(gpu_device):
    try:
        gpuarr.set_default_device(gpu_device)
        assert gpuarr.asarray(np.ones(1)).device == gpu_device
        with gpuarr.cpu():
            assert gpuarr.asarray(np.ones(1)).device == gpuarr.cpu()
    finally:
        gpuarr.set_default_device(gpuarr.cpu())
    assert gpuarr.get_default_device() == gpuarr.cpu()


def test_set_default_device_to_a_missing_gpu_fails_and_changes_nothing():
    with pytest.raises(Exception, match="gpu\\(9\\)"):
        gpuarr.set_default_device(gpuarr.gpu(9))
    assert gpuarr.get_default_device() == gpuarr.cpu()


def test_device_attribute_is_read_only():
    x = gpuarr.asarray(np.ones(2))
    with pytest.raises(AttributeError):
        x.device = gpuarr.gpu(0)


# --- to, copyto, cuda, cpu -----------------------------------------------------------------

def test_to_the_same_device_returns_self(device):
    x = gpuarr.asarray(np.arange(3.0), device=device)
    assert x.to(device) is x and x.to_device(device) is x
    assert x.to(repr(device).replace("(", ":").rstrip(")")) is x


def test_to_another_device_makes_a_new_array_with_the_values(device):
    a = np.arange(6.0).reshape(2, 3)
    x = gpuarr.asarray(a)
    y = x.to(device)
    assert y.device == device and x.device == gpuarr.cpu()
    np.testing.assert_array_equal(y.numpy(), a)


def test_copyto_a_device_always_copies(device):
    x = gpuarr.asarray(np.arange(4.0), device=device)
    y = x.copyto(device)
    assert y is not x and y.device == device
    assert y._storage_id != x._storage_id
    np.testing.assert_array_equal(y.numpy(), x.numpy())


def test_copyto_an_array_copies_into_it_across_devices(device):
    src = gpuarr.asarray(np.arange(4.0, dtype=np.float32), device=gpuarr.cpu())
    dst = gpuarr.asarray(np.zeros(4, np.float32), device=device)
    storage = dst._storage_id
    out = src.copyto(dst)
    assert out is dst and dst._storage_id == storage and dst.device == device
    np.testing.assert_array_equal(dst.numpy(), np.arange(4.0))
    np.testing.assert_array_equal(src.numpy(), np.arange(4.0))


def test_copyto_between_two_gpus_into_an_existing_array(two_gpus):
    g0, g1 = two_gpus
    src = gpuarr.asarray(np.arange(5, dtype=np.int32), device=g0)
    dst = gpuarr.asarray(np.zeros(5, np.int32), device=g1)
    src.copyto(dst)
    assert dst.device == g1 and src.device == g0
    np.testing.assert_array_equal(dst.numpy(), np.arange(5))


def test_copyto_an_array_of_another_shape_fails(device):
    src = gpuarr.asarray(np.arange(4.0), device=device)
    dst = gpuarr.asarray(np.zeros(3), device=device)
    with pytest.raises(ValueError):
        src.copyto(dst)


def test_copyto_without_a_target_says_what_it_needs():
    with pytest.raises(TypeError, match="target"):
        gpuarr.asarray(np.ones(1)).copyto(None)


def test_the_source_of_a_copy_is_unchanged_and_stays_put(device):
    a = np.arange(6, dtype=np.float32)
    x = gpuarr.asarray(a, device=device)
    ptr, storage = x._data_ptr, x._storage_id
    for target in [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]:
        x.to(target)
        x.copyto(target)
    assert x.device == device and x._data_ptr == ptr and x._storage_id == storage
    np.testing.assert_array_equal(x.numpy(), a)


def test_cuda_and_cpu_methods(gpu_device):
    x = gpuarr.asarray(np.arange(3.0))
    y = x.cuda()
    assert y.device == gpuarr.gpu(0)
    assert y.cuda(0) is y
    assert x.cpu() is x
    z = y.cpu()
    assert z.device == gpuarr.cpu()
    np.testing.assert_array_equal(z.numpy(), np.arange(3.0))


def test_moving_to_a_missing_gpu_fails_with_the_device_list():
    x = gpuarr.asarray(np.ones(2))
    with pytest.raises(Exception, match="cpu\\(0\\)"):
        x.to(gpuarr.gpu(9))
    with pytest.raises(Exception, match="gpu\\(9\\)"):
        x.cuda(9)


# --- no implicit transfers ------------------------------------------------------------------

def test_mixing_devices_raises_device_mismatch_error_naming_both(gpu_device):
    x = gpuarr.asarray(np.ones(3, np.float32))
    y = gpuarr.asarray(np.ones(3, np.float32), device=gpu_device)
    with pytest.raises(gpuarr.DeviceMismatchError) as e:
        x + y
    msg = str(e.value)
    assert "cpu(0)" in msg and repr(gpu_device) in msg and ".to(" in msg


def test_device_mismatch_error_is_a_value_error():
    assert issubclass(gpuarr.DeviceMismatchError, ValueError)


def test_two_gpus_do_not_mix(two_gpus):
    g0, g1 = two_gpus
    x = gpuarr.asarray(np.ones(3, np.float32), device=g0)
    y = gpuarr.asarray(np.ones(3, np.float32), device=g1)
    for op in (lambda: x + y, lambda: x * y, lambda: y - x):
        with pytest.raises(gpuarr.DeviceMismatchError, match="gpu\\(0\\).*gpu\\(1\\)|"
                                                            "gpu\\(1\\).*gpu\\(0\\)"):
            op()


def test_python_scalars_join_the_operation_on_its_device(device):
    x = gpuarr.asarray(np.array([1.0, 2.0], np.float32), device=device)
    for y in (x + 1, 2 * x, x - 0.5, x / 2, x ** 2):
        assert y.device == device and y.dtype == gpuarr.float32


def test_numpy_array_with_a_gpu_array_is_a_mismatch(gpu_device):
    x = gpuarr.asarray(np.ones(3, np.float32), device=gpu_device)
    with pytest.raises((gpuarr.DeviceMismatchError, TypeError)):
        x + np.ones(3, np.float32)


def test_numpy_asarray_of_a_gpu_array_raises_type_error_pointing_to_numpy(gpu_device):
    x = gpuarr.asarray(np.ones(3), device=gpu_device)
    with pytest.raises(TypeError, match="numpy\\(\\)"):
        np.asarray(x)


# --- memory statistics ------------------------------------------------------------------------

MEM_KEYS = {"allocated_bytes", "reserved_bytes", "peak_allocated_bytes", "total_bytes",
            "alloc_calls"}


def test_memory_stats_has_the_documented_keys(device):
    s = gpuarr.memory_stats(device)
    assert MEM_KEYS <= set(s)
    assert all(isinstance(v, int) and v >= 0 for v in s.values())


def test_memory_stats_allocated_goes_up_and_down_and_peak_remembers(device):
    before = gpuarr.memory_stats(device)
    x = gpuarr.asarray(np.zeros(100_000, np.float32), device=device, copy=True)
    during = gpuarr.memory_stats(device)
    assert during["allocated_bytes"] >= before["allocated_bytes"] + x.nbytes
    assert during["peak_allocated_bytes"] >= during["allocated_bytes"]
    del x
    after = gpuarr.memory_stats(device)
    assert after["allocated_bytes"] <= during["allocated_bytes"] - 400_000
    assert after["peak_allocated_bytes"] >= during["allocated_bytes"]


def test_memory_stats_defaults_to_the_default_device(device):
    with device:
        assert gpuarr.memory_stats().keys() == gpuarr.memory_stats(device).keys()


def test_memory_stats_of_a_missing_gpu_fails():
    with pytest.raises(Exception, match="gpu\\(9\\)"):
        gpuarr.memory_stats(gpuarr.gpu(9))


def test_empty_cache_keeps_arrays_valid(device):
    x = gpuarr.asarray(np.arange(10.0), device=device)
    y = gpuarr.asarray(np.arange(1000.0), device=device)
    del y
    gpuarr.empty_cache(device)
    gpuarr.empty_cache()
    np.testing.assert_array_equal(x.numpy(), np.arange(10.0))
    s = gpuarr.memory_stats(device)
    assert s["reserved_bytes"] >= s["allocated_bytes"]


def test_synchronize_accepts_nothing_a_device_or_a_string(device):
    gpuarr.synchronize()
    gpuarr.synchronize(device)
    gpuarr.synchronize(repr(device).replace("(", ":").rstrip(")"))


# --- info -------------------------------------------------------------------------------------

def test_info_prints_version_build_devices_and_reason(capsys):
    gpuarr.info()
    out = capsys.readouterr().out
    assert f"gpuarr {gpuarr.__version__}" in out
    assert "CUDA plugin:" in out and "CPU BLAS:" in out and "CPU threads:" in out
    assert "cpu(0)" in out and "CPU" in out
    for i in range(gpuarr.num_gpus()):
        assert f"gpu({i})" in out
    mode, reason = gpuarr._core._gpu_mode()
    if mode != "cuda":
        assert "why CUDA is not in use" in out


def test_info_says_gpus_are_simulated():
    out = run_python("import gpuarr; gpuarr.info()", GPUARR_SIMULATE_GPUS=2)
    assert "simulated" in out and "gpu(1)" in out and "gpu(2)" not in out
    assert "GPUARR_SIMULATE_GPUS=2" in out


def test_info_reports_whether_the_cuda_plugin_is_compiled():
    from gpuarr import _info

    here = os.path.dirname(gpuarr._core.__file__)
    built = os.path.exists(os.path.join(here, "libgpuarr_cuda.so"))
    text = _info.report()
    assert ("CUDA plugin:    compiled" in text) == built


def test_python_m_gpuarr_info_prints_the_report():
    e = dict(os.environ, PYTHONPATH=PYDIR, GPUARR_SIMULATE_GPUS="1")
    e.pop("GPUARR_CUDA_EMULATE", None)  # emulation would win over simulation
    r = subprocess.run([sys.executable, "-m", "gpuarr", "info"], env=e,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "gpuarr" in r.stdout and "gpu(0)" in r.stdout and "gpu(1)" not in r.stdout


def test_cuda_visible_devices_is_documented_as_cudas_business():
    from gpuarr import _devices

    assert "CUDA_VISIBLE_DEVICES" in _devices.__doc__


def test_info_gives_plain_reasons_for_no_cuda():
    from gpuarr._info import _plain_reason

    loader = ("the CUDA backend (libgpuarr_cuda.so) could not be loaded: libcudart.so.13: "
              "cannot open shared object file")
    assert _plain_reason(loader, plugin_built=False).startswith(
        "built without CUDA: nvcc was not found when gpuarr was installed")
    # a reason the emulated plugin gave stays, even when the real plugin was not built
    assert _plain_reason("the NVIDIA driver is too old: ...", plugin_built=False) is None
    assert "no NVIDIA driver" in _plain_reason(loader, plugin_built=True)
    # the plugin's own reasons are plain already: kept as they are
    assert _plain_reason("driver too old: driver 12.2, runtime 13.0; ...", True) is None
    assert _plain_reason("no CUDA device (the NVIDIA driver 13.0 found no GPU)", True) is None


def test_info_without_the_plugin_says_built_without_cuda():
    import os

    if os.path.exists(os.path.join(os.path.dirname(gpuarr._core.__file__),
                                   "libgpuarr_cuda.so")):
        pytest.skip("this build has the CUDA plugin")
    out = run_python("import gpuarr; gpuarr.info()")
    assert "why CUDA is not in use: built without CUDA: nvcc was not found" in out
    assert "cannot open shared object file" in out.split("(details:")[1]  # kept, second


# --- simulated GPUs turned on when there is none ----------------------------------------

def test_simulate_gpus_if_none_works_after_the_first_device_query():
    if gpuarr._core._gpu_mode()[0] == "cuda":
        pytest.skip("this machine has a GPU")
    out = run_python(
        "import gpuarr\n"
        "print(gpuarr.num_gpus(), gpuarr.simulate_gpus_if_none(2), gpuarr.num_gpus())\n"
        "x = gpuarr.ones(3, device=gpuarr.gpu(1)); print(x.device)\n"
        "print(gpuarr.simulate_gpus_if_none(3), gpuarr.num_gpus())\n")
    assert out.split("\n")[:3] == ["0 True 2", "gpu(1)", "False 2"]


def test_simulate_gpus_if_none_leaves_a_choice_of_the_environment_alone():
    out = run_python("import gpuarr; print(gpuarr.simulate_gpus_if_none(2), "
                     "gpuarr.num_gpus())", GPUARR_SIMULATE_GPUS=0)
    assert out.strip() == "False 0"
    out = run_python("import gpuarr; print(gpuarr.simulate_gpus_if_none(2), "
                     "gpuarr.num_gpus())", GPUARR_SIMULATE_GPUS=1)
    assert out.strip() == "False 1"
    with pytest.raises(ValueError, match="between 1 and"):
        gpuarr.simulate_gpus_if_none(0)


def test_the_missing_gpu_error_names_the_first_device_query_as_the_trigger():
    if gpuarr._core._gpu_mode()[0] == "cuda":
        pytest.skip("this machine has a GPU")
    out = run_python(
        "import os, gpuarr\n"
        "gpuarr.num_gpus()\n"
        "os.environ['GPUARR_SIMULATE_GPUS'] = '2'   # too late\n"
        "try:\n"
        "    gpuarr.ones(2, device=gpuarr.gpu(1))\n"
        "except Exception as e:\n"
        "    print(e)\n")
    assert "before importing gpuarr" not in out
    assert "only before the process's first device query" in out
    assert "gpuarr.simulate_gpus_if_none(2)" in out


def test_to_given_the_gpu_function_says_to_call_it():
    with pytest.raises(TypeError, match=r"got the function gpuarr\.gpu itself: call it, "
                                        r"gpu\(\) or gpu\(1\)"):
        gpuarr.ones(2).to(gpuarr.gpu)
    with pytest.raises(TypeError, match=r"gpuarr\.cpu itself: call it, cpu\(\)"):
        gpuarr.zeros(2, device=gpuarr.cpu)


@pytest.mark.parametrize("fn", [gpuarr.Array.to, gpuarr.Array.copyto, gpuarr.try_gpu,
                                gpuarr.Device], ids=["to", "copyto", "try_gpu", "Device"])
def test_help_of_the_device_moves_has_an_example(fn):
    doc = fn.__doc__
    assert "Example::" in doc or "::\n" in doc, doc
    if fn in (gpuarr.Array.to, gpuarr.Device):
        assert "cuda:0" in doc
    assert gpuarr.Device("cuda:0") == gpuarr.gpu(0)
