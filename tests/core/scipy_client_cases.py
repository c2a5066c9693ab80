"""SciPy's array API cases for tests/core/test_array_api_clients.py, run in a child
process: SciPy reads SCIPY_ARRAY_API once, when it is first imported, and another test
file may have imported it without. Prints, as JSON, each case's outcome on each device
of this process (the device mode comes from the environment):

  "ok"    the result is a gpuarr array on the input's device and matches NumPy's call;
  "host"  SciPy itself sent the data to NumPy (np.asarray), which a GPU array refuses
          with a TypeError naming the explicit copy;
  anything else: what went wrong.
"""
import json
import os
import sys

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402
import scipy.fft  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402

import gpuarr  # noqa: E402

_X = np.array([0.5, 2.0, 3.0, 8.0, 1.5, -1.0, 4.0, 2.5])
_SOS = scipy.signal.butter(2, 0.3, output="sos")

# name: (call on (data, sos), rtol)
CASES = {
    "stats.zscore": (lambda x, s: scipy.stats.zscore(x), 1e-12),
    "stats.skew": (lambda x, s: scipy.stats.skew(x), 1e-12),
    "stats.kurtosis": (lambda x, s: scipy.stats.kurtosis(x), 1e-12),
    "stats.moment": (lambda x, s: scipy.stats.moment(x, order=3), 1e-12),
    "stats.variation": (lambda x, s: scipy.stats.variation(x), 1e-12),
    "stats.gmean": (lambda x, s: scipy.stats.gmean(x * x), 1e-12),
    "stats.sem": (lambda x, s: scipy.stats.sem(x), 1e-12),
    "stats.ttest_1samp": (lambda x, s: scipy.stats.ttest_1samp(x, 1.0).pvalue, 1e-10),
    "stats.ttest_ind": (lambda x, s: scipy.stats.ttest_ind(x, 2 * x).pvalue, 1e-10),
    "stats.pearsonr": (lambda x, s: scipy.stats.pearsonr(x, x * x).pvalue, 1e-10),
    "stats.chisquare": (lambda x, s: scipy.stats.chisquare(x * x).pvalue, 1e-10),
    "stats.entropy": (lambda x, s: scipy.stats.entropy(x * x), 1e-12),
    "stats.hmean": (lambda x, s: scipy.stats.hmean(x * x), 1e-12),
    "stats.trim_mean": (lambda x, s: scipy.stats.trim_mean(x, 0.1), 1e-12),
    "stats.median_abs_deviation": (lambda x, s: scipy.stats.median_abs_deviation(x), 1e-12),
    "stats.iqr": (lambda x, s: scipy.stats.iqr(x), 1e-12),
    "stats.rankdata": (lambda x, s: scipy.stats.rankdata(x), 1e-12),
    "stats.circmean": (lambda x, s: scipy.stats.circmean(x), 1e-12),
    "stats.quantile": (lambda x, s: scipy.stats.quantile(x, 0.3), 1e-12),
    "special.logsumexp": (lambda x, s: scipy.special.logsumexp(x), 1e-12),
    "special.softmax": (lambda x, s: scipy.special.softmax(x), 1e-12),
    "special.erf": (lambda x, s: scipy.special.erf(x), 1e-12),
    "special.log_softmax": (lambda x, s: scipy.special.log_softmax(x), 1e-12),
    "signal.fftconvolve": (lambda x, s: scipy.signal.fftconvolve(x, x[:3]), 1e-10),
    "fft.rfft": (lambda x, s: scipy.fft.rfft(x), 1e-12),
    "integrate.trapezoid": (lambda x, s: scipy.integrate.trapezoid(x), 1e-12),
    "signal.convolve": (lambda x, s: scipy.signal.convolve(x, x[:3]), 1e-10),
    "signal.lfilter": (lambda x, s: scipy.signal.lfilter(x[:2], x[2:4], x), 1e-10),
    "fft.dct": (lambda x, s: scipy.fft.dct(x), 1e-12),
    "signal.detrend": (lambda x, s: scipy.signal.detrend(x), 1e-10),
    "signal.sosfilt": (lambda x, s: scipy.signal.sosfilt(s, x), 1e-10),
    "signal.sosfilt_zi": (lambda x, s: scipy.signal.sosfilt_zi(s), 1e-10),
}


def _outcome(call, rtol, device):
    want = np.asarray(call(_X, _SOS))
    x = gpuarr.asarray(_X, device=device)
    sos = gpuarr.asarray(_SOS, device=device)
    try:
        with gpuarr.default_device(device):
            got = call(x, sos)
    except TypeError as e:
        if device.type != "cpu" and "x.numpy()" in str(e):
            return "host"
        return f"{type(e).__name__}: {e}"
    except Exception as e:  # reported to the test, which shows it
        return f"{type(e).__name__}: {e}"
    if not isinstance(got, gpuarr.Array) or got.device != device:
        return f"result {type(got).__name__} on {getattr(got, 'device', None)!r}"
    if not np.allclose(got.numpy(), want, rtol=rtol, atol=1e-12):
        return f"{got.numpy()!r} != NumPy's {want!r}"
    return "ok"


def main():
    devices = [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]
    out = {name: {repr(d): _outcome(call, rtol, d) for d in devices}
           for name, (call, rtol) in CASES.items()}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
