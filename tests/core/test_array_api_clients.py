"""Libraries that take array API arrays, run on gpuarr arrays on every device and
checked against the same call on NumPy arrays (issue 46): xarray, einops
(einops.array_api), array-api-extra, and SciPy with SCIPY_ARRAY_API=1 (in a child
process: scipy_client_cases.py). Each call runs inside gpuarr.default_device(device),
the recipe for libraries that make helper arrays without device=. A result must be a
gpuarr array on the input's device with NumPy's values. What a library itself sends to
the host through np.asarray fails on a GPU with the TypeError naming the explicit copy;
those cases are listed here and in README's ecosystem section."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuarr

_REASON = "an array API client is not installed (pip install -e '.[test]')"
xr = pytest.importorskip("xarray", reason=_REASON)
einops = pytest.importorskip("einops.array_api", reason=_REASON)
xpx = pytest.importorskip("array_api_extra", reason=_REASON)
pytest.importorskip("scipy", reason=_REASON)

_A = np.array([[1.5, np.nan, 3.0, -2.0],
               [2.0, 5.0, np.nan, 1.0],
               [0.5, 2.0, 3.0, 8.0]])


def _da(v):
    return xr.DataArray(v, dims=("t", "s"))


# name: call on the data (NumPy's or gpuarr's); it returns an array
CASES = {
    # xarray's reductions skip NaN through np.nanmean, np.nansum, ...
    "xarray.mean": lambda v: _da(v).mean("t").data,
    "xarray.sum": lambda v: _da(v).sum("s").data,
    "xarray.max": lambda v: _da(v).max().data,
    "xarray.std": lambda v: _da(v).std("t").data,
    "xarray.var_ddof1": lambda v: _da(v).var("t", ddof=1).data,
    "xarray.median": lambda v: _da(v).median("t").data,
    "xarray.prod": lambda v: _da(v).prod("t").data,
    "xarray.cumsum": lambda v: _da(v).cumsum("t").data,
    "xarray.argmax": lambda v: _da(v).fillna(0).argmax("t").data,
    "xarray.count": lambda v: _da(v).count("t").data,
    "xarray.where": lambda v: xr.where(_da(v) > 1, _da(v), 0.0).data,
    "xarray.concat_diff": lambda v: xr.concat([_da(v)] * 2, "t").diff("t").data,
    "xarray.quantile": lambda v: _da(v).quantile([0.25, 0.5], "t").data,  # nanquantile
    "xarray.min": lambda v: _da(v).min("s").data,
    "xarray.round_clip": lambda v: _da(v).round(1).clip(0, 2.5).data,
    "xarray.fillna": lambda v: _da(v).fillna(0.5).data,
    "xarray.roll": lambda v: _da(v).roll(s=1).data,
    "xarray.coarsen": lambda v: _da(v).coarsen(s=2).mean().data,
    "xarray.groupby": lambda v: _da(v).assign_coords(t=[1, 1, 2]).groupby("t").mean().data,
    "einops.rearrange": lambda v: einops.rearrange(v, "t s -> s t"),
    "einops.reduce_mean": lambda v: einops.reduce(v, "t s -> s", "mean"),
    "einops.repeat": lambda v: einops.repeat(v, "t s -> t s r", r=2),
    "einops.reduce_max": lambda v: einops.reduce(v, "t (s r) -> t s", "max", r=2),
    "einops.pack": lambda v: einops.pack([v, v], "t *")[0],
    "xpx.nan_to_num": lambda v: xpx.nan_to_num(v),
    "xpx.at_set": lambda v: xpx.at(v)[0, 1].set(9.0),
    "xpx.at_min": lambda v: xpx.at(v)[0].min(2.0),
    "xpx.atleast_nd": lambda v: xpx.atleast_nd(v[0], ndim=3),
    "xpx.pad": lambda v: xpx.pad(v, 1),
    "xpx.cov": lambda v: xpx.cov(xpx.nan_to_num(v)),
    "xpx.kron": lambda v: xpx.kron(v, v),
    "xpx.sinc": lambda v: xpx.sinc(v),
    "xpx.isclose": lambda v: xpx.isclose(v, v + 1e-9),
    "xpx.apply_where": lambda v: xpx.apply_where(v > 1, v, lambda a: a * 2, fill_value=0.0),
    "xpx.setdiff1d": lambda v: xpx.setdiff1d(v[0], v[2]),
    "xpx.isin": lambda v: xpx.isin(v, v[2]),
    "xpx.nunique": lambda v: xpx.nunique(v),
    "xpx.one_hot": lambda v: xpx.one_hot(xpx.nan_to_num(v[2]).astype("int64"), 9),
}


@pytest.mark.parametrize("name", list(CASES))
def test_client_call_matches_numpy_on_the_device(device, name):
    want = np.asarray(CASES[name](_A))
    x = gpuarr.asarray(_A, device=device)
    with gpuarr.default_device(device):
        got = CASES[name](x)
    assert isinstance(got, gpuarr.Array), type(got)
    assert got.device == device
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_helper_arrays_need_the_default_device_scope(gpu_device):
    # xarray.where makes its fill value without device=: on cpu(0) unless scoped
    x = xr.DataArray(gpuarr.asarray(_A, device=gpu_device), dims=("t", "s"))
    with pytest.raises(gpuarr.DeviceMismatchError):
        xr.where(x > 1, x, 0.0)


# SciPy's cases that SciPy 1.17 itself sends through np.asarray for a namespace that
# is not CuPy, JAX or PyTorch (README's ecosystem section and docs/ecosystem.md list
# them). On a GPU each must still be refused with the TypeError that names the explicit
# copy (never a silent copy or a wrong answer); the case then reports itself as a skip
# for that reason, so the summary shows what SciPy keeps off the device.
SCIPY_ON_HOST = {"signal.detrend", "signal.sosfilt", "signal.sosfilt_zi", "signal.convolve",
                 "signal.lfilter", "fft.dct"}
ON_HOST_REASON = ("the client library itself sends this case to the host (np.asarray): "
                  "docs/ecosystem.md")


@pytest.fixture(scope="module")
def scipy_outcomes():
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    r = subprocess.run([sys.executable, os.path.join(here, "scipy_client_cases.py")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _names_without_importing_scipy():
    # the case table's keys, read from its source so that this process's SciPy is not
    # imported with SCIPY_ARRAY_API set behind another test's back
    import ast
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scipy_client_cases.py")
    tree = ast.parse(open(path).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "CASES":
            return [k.value for k in node.value.keys]
    raise AssertionError("scipy_client_cases.py has no CASES table")


@pytest.mark.parametrize("name", _names_without_importing_scipy())
def test_scipy_call_matches_numpy_on_the_device(device, name, scipy_outcomes):
    outcome = scipy_outcomes[name][repr(device)]
    if device.type != "cpu" and name in SCIPY_ON_HOST:
        assert outcome == "host", f"{name} now runs on the GPU: take it off SCIPY_ON_HOST"
        pytest.skip(ON_HOST_REASON)
    assert outcome == "ok"
