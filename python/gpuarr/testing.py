"""gpuarr.testing: assertions for tests of code that uses gpuarr.

``assert_allclose`` and ``assert_array_equal`` compare arrays that live on any device
with NumPy's own assertions. Their copies to the host are the test's business, not
the code's: they are left out of ``gpuarr.transfer_stats()``, so a test can check
the ledger after comparing values. ``assert_transfers`` fails when a block of code
moves more data between devices than it should. ``count_kernels`` counts what the
CUDA plugin launched and waited for.
"""
import contextlib
import linecache
import os
import sys

import numpy as _np

from . import _core
from ._core import Array, Device
from ._devices import TransferStats, _astuple, _uncounted, count_transfers, transfer_stats

__all__ = ["assert_allclose", "assert_array_equal", "assert_transfers", "count_kernels"]

_DEFAULT_RTOL = {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _host(x):
    if isinstance(x, Array):
        with _uncounted():
            return x.numpy()
    return x


def _describe(x):
    """A short description: shape, dtype and device, never the values."""
    if isinstance(x, Array):
        return f"a {x.dtype} array of shape {tuple(x.shape)} on {x.device!r}"
    if isinstance(x, _np.ndarray):
        return f"a NumPy array of shape {x.shape} (on the host)"
    return f"a {type(x).__name__}"


def _check_device(actual, device):
    __tracebackhide__ = True
    if device is None:
        return
    want = Device(device)
    got = actual.device if isinstance(actual, Array) else None
    if got != want:
        raise AssertionError(f"the result should live on {want!r}, but it is "
                             f"{_describe(actual)}")


def assert_allclose(actual, desired, rtol=None, atol=0, equal_nan=True, err_msg="",
                    device=None):
    """assert_allclose(actual, desired, rtol=None, atol=0, equal_nan=True, err_msg='', device=None)

    Fail unless ``|actual - desired| <= atol + rtol * |desired|`` elementwise (and
    the shapes agree), for gpuarr arrays on any device, NumPy arrays or scalars.
    ``rtol=None`` picks one from actual's dtype (1e-3 for float16, 1e-5 for float32
    and complex64, 1e-7 otherwise). With ``device``, actual must live there too.
    The copies to the host are not counted in ``transfer_stats()``."""
    __tracebackhide__ = True
    _check_device(actual, device)
    a, d = _host(actual), _host(desired)
    if rtol is None:
        dt = str(actual.dtype) if isinstance(actual, Array) else str(_np.asarray(a).dtype)
        rtol = _DEFAULT_RTOL.get(dt, 1e-7)
    _np.testing.assert_allclose(a, d, rtol=rtol, atol=atol, equal_nan=equal_nan,
                                err_msg=err_msg)


def assert_array_equal(actual, desired, err_msg="", strict=False, device=None):
    """assert_array_equal(actual, desired, err_msg='', strict=False, device=None)

    Fail unless the two have the same shape and equal elements (NaN equal to NaN),
    for gpuarr arrays on any device, NumPy arrays or scalars. ``strict`` also
    compares dtypes and forbids broadcasting a scalar. With ``device``, actual must
    live there. The copies to the host are not counted in ``transfer_stats()``."""
    __tracebackhide__ = True
    _check_device(actual, device)
    _np.testing.assert_array_equal(_host(actual), _host(desired), err_msg=err_msg,
                                   strict=strict)


_FIELDS = {  # limit name -> (ledger field, words for the report)
    "h2d": ("h2d_count", "host->device copy", "host->device copies"),
    "d2h": ("d2h_count", "device->host copy", "device->host copies"),
    "d2d": ("d2d_count", "device->device copy", "device->device copies"),
    "syncs": ("syncs", "wait for a device", "waits for a device"),
    "h2d_bytes": ("h2d_bytes", "byte host->device", "bytes host->device"),
    "d2h_bytes": ("d2h_bytes", "byte device->host", "bytes device->host"),
}


def _plural(n, one, many):
    return f"{n} {one if n == 1 else many}"


class _LineLedger:
    """Which source line made each copy: a tracer that reads the ledger at every line
    of the code under test (not gpuarr's own) and charges what changed to the line
    that ran last. Only for the thread that entered the block, and off when another
    tracer (a debugger, coverage) is active."""

    def __init__(self):
        self.by_line = {}  # (file, line) -> TransferStats
        self._last = None
        self._loc = None
        self._old = None
        self.active = False
        self._busy = False

    def _user(self, frame):
        f = frame.f_code.co_filename
        # "<string>" is generated code (a dataclass's __init__ runs inside the ledger)
        return not (f.startswith(_PACKAGE_DIR) or f.startswith("<")
                    or os.path.basename(f) in ("contextlib.py", "threading.py"))

    def _charge(self):
        now = transfer_stats()
        if self._loc is not None and now != self._last:
            prev = self.by_line.get(self._loc, TransferStats())
            self.by_line[self._loc] = TransferStats(
                *(a + b - c for a, b, c in zip(_astuple(prev), _astuple(now),
                                                _astuple(self._last))))
        self._last = now

    def _trace(self, frame, event, arg):
        if self._busy:  # the ledger's own frames
            return None
        self._busy = True
        try:
            return self._event(frame, event)
        finally:
            self._busy = False

    def _event(self, frame, event):
        if event == "call":
            return self._trace if self._user(frame) else None
        if event == "line":
            self._charge()
            self._loc = (frame.f_code.co_filename, frame.f_lineno)
        elif event == "return":
            self._charge()
            caller = frame.f_back
            if caller is not None and self._user(caller):
                self._loc = (caller.f_code.co_filename, caller.f_lineno)
        return self._trace

    def start(self, frame):
        if sys.gettrace() is not None:
            return
        self.active = True
        self._last = transfer_stats()
        self._frame = frame
        frame.f_trace = self._trace
        frame.f_trace_lines = True
        sys.settrace(self._trace)

    def stop(self):
        if not self.active:
            return
        sys.settrace(None)
        self._frame.f_trace = None
        self._frame = None
        self._charge()

    def lines(self, fields):
        out = []
        for (file, line), st in self.by_line.items():
            parts = [_plural(getattr(st, _FIELDS[k][0]), *_FIELDS[k][1:]) for k in fields
                     if getattr(st, _FIELDS[k][0])]
            if parts:
                src = linecache.getline(file, line).strip()
                out.append(f"  {os.path.basename(file)}:{line}: {', '.join(parts)}"
                           + (f"\n      {src}" if src else ""))
        return out


class assert_transfers:
    """assert_transfers(max_h2d=None, max_d2h=None, max_d2d=None, max_syncs=None, max_h2d_bytes=None, max_d2h_bytes=None)

    A context manager: fail (AssertionError) at the end of the block when it made
    more host-to-device, device-to-host or device-to-device copies (or waits), or
    moved more bytes to or from the host, than allowed; ``None`` means no limit.
    The message names the source line of each copy over the budget and lists
    everything that crossed. It yields the counter of ``gpuarr.count_transfers()``::

        with gpuarr.testing.assert_transfers(max_d2h=1, max_d2h_bytes=400):
            log = [norm(x @ x) for _ in range(100)]
            print(gpuarr.stack(log).numpy())
    """

    def __init__(self, max_h2d=None, max_d2h=None, max_d2d=None, max_syncs=None,
                 max_h2d_bytes=None, max_d2h_bytes=None):
        self.limits = {"h2d": max_h2d, "d2h": max_d2h, "d2d": max_d2d,
                       "syncs": max_syncs, "h2d_bytes": max_h2d_bytes,
                       "d2h_bytes": max_d2h_bytes}

    def __enter__(self):
        """__enter__(self)

        Start counting; returns the counter (``t.d2h_count``, ``t.stats``, ...)."""
        self._counting = count_transfers()
        self._counter = self._counting.__enter__()
        self._lines = _LineLedger()
        self._lines.start(sys._getframe(1))
        return self._counter

    def __exit__(self, exc_type, exc, tb):
        """__exit__(self, exc_type, exc, tb)

        Stop counting and raise AssertionError when a limit was passed."""
        __tracebackhide__ = True
        self._lines.stop()
        self._counting.__exit__(exc_type, exc, tb)
        if exc_type is not None:
            return False
        s = self._counter.stats
        over = [k for k, lim in self.limits.items()
                if lim is not None and getattr(s, _FIELDS[k][0]) > lim]
        if not over:
            return False
        words = [f"{_plural(getattr(s, _FIELDS[k][0]), *_FIELDS[k][1:])} "
                 f"(at most {self.limits[k]} allowed)" for k in over]
        where = self._lines.lines(over)
        raise AssertionError(
            "too many transfers: " + "; ".join(words)
            + ("\nwhere they were made:\n" + "\n".join(where) if where else "")
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
