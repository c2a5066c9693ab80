"""Grades ex2_roundtrip.py: the parameters go through a real .npz file, both ways."""
import zipfile

import numpy as np

import gpuarr as ga
from gpuarr.testing import assert_on_device, assert_transfers


def fresh_params(rng):
    """Parameters with fresh values (bits that must survive: -0.0, a tiny float32,
    an integer counter)."""
    weight = rng.standard_normal((4, 3)).astype(np.float32)
    bias = np.array([rng.standard_normal(), -0.0, 3.5e-38], np.float32)
    step = np.array(rng.integers(1, 10**9), np.int64)
    return {"weight": weight, "bias": bias, "step": step}


def assert_same_bits(loaded, expected, device):
    __tracebackhide__ = True
    if not isinstance(loaded, dict) or set(loaded) != set(expected):
        got = sorted(loaded) if isinstance(loaded, dict) else type(loaded).__name__
        raise AssertionError(f"the loaded parameters should be a dict with the names "
                             f"{sorted(expected)}; got {got}")
    for name, value in expected.items():
        assert_on_device(loaded[name], device, f"the loaded {name!r}", shape=value.shape,
                         dtype=value.dtype)
        if loaded[name].numpy().tobytes() != value.tobytes():
            raise AssertionError(f"the loaded {name!r} differs from the file's, bit for bit")


def test_save_writes_an_npz_file(student, gpuarr_device, gpuarr_rng, tmp_path):
    ex = student("ex2_roundtrip")
    expected = fresh_params(gpuarr_rng)
    params = {k: ga.asarray(v, device=gpuarr_device) for k, v in expected.items()}
    path = tmp_path / f"params-{gpuarr_rng.integers(10**9)}.npz"
    with assert_transfers(max_h2d=0):
        ex.save_params(params, str(path))
    if not path.is_file():
        raise AssertionError(f"save_params wrote no file at the path it was given ({path})")
    if not zipfile.is_zipfile(path):
        raise AssertionError(f"the file save_params wrote is not a .npz file (NumPy's "
                             f"format is a zip archive of .npy files); write it with "
                             f"gpuarr.save")
    with np.load(path) as f:
        saved = {k: f[k] for k in f.files}
    if set(saved) != set(expected):
        raise AssertionError(f"the file should hold the names {sorted(expected)}; it holds "
                             f"{sorted(saved)}")
    for name, value in expected.items():
        if saved[name].dtype != value.dtype or saved[name].tobytes() != value.tobytes():
            raise AssertionError(f"the file's {name!r} differs from the parameter, bit "
                                 f"for bit")


def test_load_reads_the_file(student, gpuarr_device, gpuarr_rng, tmp_path):
    ex = student("ex2_roundtrip")
    # a file written here, with values the code cannot know but by reading it
    expected = fresh_params(gpuarr_rng)
    path = tmp_path / f"params-{gpuarr_rng.integers(10**9)}.npz"
    np.savez(path, **expected)
    with assert_transfers(max_d2h=0, max_d2d=0):
        loaded = ex.load_params(str(path), gpuarr_device)
    assert_same_bits(loaded, expected, gpuarr_device)


def test_parameters_round_trip_onto_any_device(student, gpuarr_device, gpuarr_rng,
                                               tmp_path):
    ex = student("ex2_roundtrip")
    expected = fresh_params(gpuarr_rng)
    params = {k: ga.asarray(v, device=ga.try_gpu()) for k, v in expected.items()}
    path = str(tmp_path / "params.npz")
    ex.save_params(params, path)
    assert_same_bits(ex.load_params(path, gpuarr_device), expected, gpuarr_device)
