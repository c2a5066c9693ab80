"""Every function of SciPy's array-API table for scipy.special
(`scipy.special._support_alternative_backends`, 92 in SciPy 1.17), called through
SciPy on gpuarr arrays, for tests/core/test_special_scipy_dispatch.py. Runs in a child
process: SciPy reads SCIPY_ARRAY_API once, when it is first imported.

Prints, as JSON, {name: {device: outcome}} for the CPU device and each GPU of this
process (the device mode comes from the environment), where the outcome is

  "ok"  SciPy's function returned a gpuarr array on the arguments' device, of SciPy's
        dtype, with SciPy's values on NumPy arrays, and the transfer ledger counted no
        copy while it ran (SciPy found gpuarr.special and the work stayed there);
  anything else: what went wrong.

The arguments come from SciPy's own table (its count of arguments and which are
integers); their values are a few points mixed across domains: the accuracy of each
function is tests/core/test_special.py's, here what counts is where the work ran.
"""
import json
import os
import sys

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402
import scipy.special  # noqa: E402
from scipy.special import _support_alternative_backends as _alt  # noqa: E402

import gpuarr  # noqa: E402

_FLOATS = np.array([0.55, 0.7, 0.95, 1.5, 3.25])
# multigammaln's d is a Python int in SciPy (the dimension, not an array)
_PYTHON_INT = {"multigammaln": {1: 2}}
# what a function reads back from the device by design: multigammaln's check that every
# a > (d - 1) / 2 (SciPy raises ValueError otherwise) is one bool (docs/special.md)
_READS_BACK = {"multigammaln": 1}
_INFO = {nfo.func.__name__: nfo for nfo in _alt._special_funcs}


def _numpy_args(name):
    nfo = _INFO["psi" if name == "digamma" else name]
    ints = nfo.int_only or (False,) * nfo.n_args
    args = []
    for i in range(nfo.n_args):
        if i in _PYTHON_INT.get(name, {}):
            args.append(_PYTHON_INT[name][i])
        elif ints[i]:
            # shifted per position, so that bdtr's k and n (say) differ
            args.append(np.arange(1, 6, dtype=np.int64) + i)
        else:
            args.append(_FLOATS + 0.125 * i)
    return args


def _outcome(name, device):
    fn = getattr(scipy.special, name)
    args = _numpy_args(name)
    want = np.asarray(fn(*args))
    dev_args = [gpuarr.asarray(a, device=device) if isinstance(a, np.ndarray) else a
                for a in args]
    gpuarr.synchronize()
    try:
        with gpuarr.count_transfers() as t:
            got = fn(*dev_args)
            gpuarr.synchronize()
    except Exception as e:  # reported to the test, which shows it
        return f"{type(e).__name__}: {e}"
    copies = t.h2d_count + t.d2h_count + t.d2d_count
    allowed = _READS_BACK.get(name, 0) if device.type != "cpu" else 0
    if not isinstance(got, gpuarr.Array) or got.device != device:
        return f"result {type(got).__name__} on {getattr(got, 'device', None)!r}"
    if copies > allowed:
        return f"{copies} copies while it ran (ledger: {t.stats})"
    if np.dtype(got.dtype) != want.dtype:
        return f"dtype {got.dtype} where SciPy gives {want.dtype}"
    if not np.allclose(got.numpy(), want, rtol=1e-8, atol=0, equal_nan=True):
        return f"{got.numpy()!r} != SciPy's {want!r}"
    return "ok"


def main():
    devices = [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]
    json.dump({name: {repr(d): _outcome(name, d) for d in devices}
               for name in _alt.__all__}, sys.stdout)


if __name__ == "__main__":
    main()
