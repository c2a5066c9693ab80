"""gpuarr.testing: assertions for tests of code that uses gpuarr.

``assert_allclose`` and ``assert_array_equal`` compare arrays that live on any device
with NumPy's own assertions. Their copies to the host are the test's business, not
the code's: they are left out of ``gpuarr.transfer_stats()``, so a test can check
the ledger after comparing values. ``assert_transfers`` fails when a block of code
moves more data between devices than it should. ``count_kernels`` counts what the
CUDA plugin launched and waited for.
"""
import contextlib

import numpy as _np

from . import _core
from ._core import Array, Device
from ._devices import _uncounted, count_transfers

__all__ = ["assert_allclose", "assert_array_equal", "assert_transfers", "count_kernels"]

_DEFAULT_RTOL = {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}


def _host(x):
    if isinstance(x, Array):
        with _uncounted():
            return x.numpy()
    return x


def _check_device(actual, device):
    if device is None:
        return
    want = Device(device)
    got = actual.device if isinstance(actual, Array) else None
    if got != want:
        raise AssertionError(f"expected an array on {want!r}, got "
                             + (f"one on {got!r}" if got is not None
                                else f"a {type(actual).__name__}"))


def assert_allclose(actual, desired, rtol=None, atol=0, equal_nan=True, err_msg="",
                    device=None):
    """assert_allclose(actual, desired, rtol=None, atol=0, equal_nan=True, err_msg='', device=None)

    Fail unless ``|actual - desired| <= atol + rtol * |desired|`` elementwise (and
    the shapes agree), for gpuarr arrays on any device, NumPy arrays or scalars.
    ``rtol=None`` picks one from actual's dtype (1e-3 for float16, 1e-5 for float32
    and complex64, 1e-7 otherwise). With ``device``, actual must live there too.
    The copies to the host are not counted in ``transfer_stats()``."""
    _check_device(actual, device)
    a, d = _host(actual), _host(desired)
    if rtol is None:
        dt = str(actual.dtype) if isinstance(actual, Array) else str(_np.asarray(a).dtype)
        rtol = _DEFAULT_RTOL.get(dt, 1e-7)
    __tracebackhide__ = True
    _np.testing.assert_allclose(a, d, rtol=rtol, atol=atol, equal_nan=equal_nan,
                                err_msg=err_msg)


def assert_array_equal(actual, desired, err_msg="", strict=False, device=None):
    """assert_array_equal(actual, desired, err_msg='', strict=False, device=None)

    Fail unless the two have the same shape and equal elements (NaN equal to NaN),
    for gpuarr arrays on any device, NumPy arrays or scalars. ``strict`` also
    compares dtypes and forbids broadcasting a scalar. With ``device``, actual must
    live there. The copies to the host are not counted in ``transfer_stats()``."""
    _check_device(actual, device)
    __tracebackhide__ = True
    _np.testing.assert_array_equal(_host(actual), _host(desired), err_msg=err_msg,
                                   strict=strict)


@contextlib.contextmanager
def assert_transfers(max_h2d=None, max_d2h=None, max_d2d=None, max_syncs=None):
    """assert_transfers(max_h2d=None, max_d2h=None, max_d2d=None, max_syncs=None)

    A context manager: fail (AssertionError) at the end of the block when it made
    more host-to-device, device-to-host or device-to-device copies (or waits) than
    allowed; ``None`` means no limit. The message lists everything that crossed.
    It yields the counter of ``gpuarr.count_transfers()``::

        with gpuarr.testing.assert_transfers(max_d2h=1):
            log = [norm(x @ x) for _ in range(10)]
            print(gpuarr.stack(log).numpy())
    """
    limits = {"h2d": max_h2d, "d2h": max_d2h, "d2d": max_d2d, "syncs": max_syncs}
    with count_transfers() as t:
        yield t
    s = t.stats
    counts = {"h2d": s.h2d_count, "d2h": s.d2h_count, "d2d": s.d2d_count,
              "syncs": s.syncs}
    names = {"h2d": "host->device copies", "d2h": "device->host copies",
             "d2d": "device->device copies", "syncs": "waits for a device"}
    over = [f"{counts[k]} {names[k]} (at most {lim} allowed)"
            for k, lim in limits.items() if lim is not None and counts[k] > lim]
    if over:
        raise AssertionError("too many transfers: " + "; ".join(over)
                             + f"\nwhat crossed in the block: {s}")


_KERNEL_FIELDS = ("launches", "syncs", "h2d", "d2h")


class _KernelCounts:
    """What ``count_kernels()`` yields; read its fields after the block."""

    def __init__(self, device, start):
        self.device = device
        self.supported = start is not None
        self._start = start
        self._end = None

    def _now(self):
        if not self.supported:
            return None
        return self._end or _core._kernel_counters(self.device)

    def __getattr__(self, name):
        if name not in _KERNEL_FIELDS and name != "max_grid_blocks":
            raise AttributeError(name)
        now = self._now()
        if now is None:
            return 0
        if name == "max_grid_blocks":
            return now[name]
        return now[name] - self._start[name]

    def __repr__(self):
        if not self.supported:
            return f"<kernel counts on {self.device!r}: not counted on this device>"
        fields = ", ".join(f"{k}={getattr(self, k)}"
                           for k in _KERNEL_FIELDS + ("max_grid_blocks",))
        return f"<kernel counts on {self.device!r}: {fields}>"


@contextlib.contextmanager
def count_kernels(device):
    """count_kernels(device)

    A context manager that counts what the CUDA plugin did on ``device`` inside the
    block: ``launches`` (kernels, a cuBLAS call counting one), ``syncs`` (host waits:
    synchronize, a copy to the host, a check that reads a result back),
    ``h2d`` and ``d2h`` (copies to and from the device) and ``max_grid_blocks`` (the
    largest grid launched, in blocks). The counting is in the plugin's host code, so it
    is the same on a GPU and in the emulation. On the CPU and simulated GPUs nothing is
    counted: ``supported`` is False and every count is 0::

        with gpuarr.testing.count_kernels(x.device) as k:
            y = x + 1
        assert not k.supported or k.launches >= 1

    Blocks may not nest on one device (each resets ``max_grid_blocks``)."""
    device = Device(device)
    start = _core._kernel_counters(device, True)
    c = _KernelCounts(device, start)
    try:
        yield c
    finally:
        if c.supported:
            c._end = _core._kernel_counters(device)
