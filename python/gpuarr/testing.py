"""gpuarr.testing: assertions for tests of code that uses gpuarr, and for graders.

``assert_allclose`` and ``assert_array_equal`` compare arrays that live on any device
with NumPy's own assertions. Their copies to the host are the test's business, not
the code's: they are left out of ``gpuarr.transfer_stats()``, so a test can check
the ledger after comparing values (a counting block still sees them: code under test
cannot hide a copy). ``assert_transfers`` fails when a block of code moves more data
between devices than it should; ``assert_work`` when a device did less work in a
block than it should (``count_work`` counts it on every device kind);
``count_kernels`` counts what the CUDA plugin launched and waited for.
``assert_numpy`` and ``assert_on_device`` check what a result is, in words.
"""
import contextlib
import linecache
import os
import sys

import numpy as _np

from . import _core
from ._core import Array, Device, DeviceMismatchError, cpu, gpu
from ._devices import (TransferStats, _astuple, _total_stats, _uncounted,
                       count_transfers, num_gpus)

__all__ = ["assert_allclose", "assert_array_equal", "assert_transfers", "count_kernels",
           "count_work", "assert_work", "WorkCounts", "assert_numpy", "assert_on_device",
           "describe"]

# Bound at import, before any code under test runs: replacing gpuarr._core's functions
# later changes nothing here.
_work_counters = _core._work_counters
_kernel_counters = _core._kernel_counters

_DEFAULT_RTOL = {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _host(x):
    if isinstance(x, Array):
        with _uncounted():
            return x.numpy()
    return x


def describe(x):
    """describe(x)

    What ``x`` is, in words, never its values: ``"a gpuarr array (float32, shape
    (2, 3)) on gpu(0)"``, ``"a NumPy array (numpy.ndarray, float64, shape (50,)) on the
    host"``, ``"a list of 50 items"``, ``"a float"``. Graders' messages use it."""
    if isinstance(x, Array):
        return f"a gpuarr array ({x.dtype}, shape {tuple(x.shape)}) on {x.device!r}"
    if isinstance(x, _np.ndarray):
        kind = "a NumPy array" if type(x) is _np.ndarray else f"a {type(x).__name__}"
        return f"{kind} (numpy.ndarray, {x.dtype}, shape {x.shape}) on the host"
    if isinstance(x, (list, tuple, dict)):
        n = len(x)
        return f"a {type(x).__name__} of {n} item{'' if n == 1 else 's'}"
    if x is None:
        return "None"
    return f"a {type(x).__name__}"


def _check_device(actual, device, what="the result"):
    __tracebackhide__ = True
    if device is None:
        return
    want = Device(device)
    got = actual.device if isinstance(actual, Array) else None
    if got != want:
        raise AssertionError(f"{what} should be a gpuarr array on {want!r}; got "
                             f"{describe(actual)}")


def assert_on_device(actual, device, what="the result", shape=None, dtype=None):
    """assert_on_device(actual, device, what='the result', shape=None, dtype=None)

    Fail unless ``actual`` is a gpuarr array on ``device`` (and, when given, of that
    shape and dtype), with a message in words: ``"the result should be a gpuarr array on
    gpu(1); got a gpuarr array (float32, shape (2, 3)) on cpu(0)"``."""
    __tracebackhide__ = True
    _check_device(actual, device, what)
    _check_shape_dtype(actual, what, shape, dtype)


def assert_numpy(actual, what="the result", shape=None, dtype=None):
    """assert_numpy(actual, what='the result', shape=None, dtype=None)

    Fail unless ``actual`` is a NumPy array (exactly ``numpy.ndarray``; and, when
    given, of that shape, and of that dtype or one of a tuple of dtypes), with a
    message in words: ``"the log should be a NumPy array (numpy.ndarray); got a gpuarr
    array (float32, shape (50,)) on cpu(0)"``."""
    __tracebackhide__ = True
    if type(actual) is not _np.ndarray:
        raise AssertionError(f"{what} should be a NumPy array (numpy.ndarray); got "
                             f"{describe(actual)}")
    _check_shape_dtype(actual, what, shape, dtype)


def _check_shape_dtype(actual, what, shape, dtype):
    __tracebackhide__ = True
    if shape is not None and tuple(actual.shape) != tuple(shape):
        raise AssertionError(f"{what} should have shape {tuple(shape)}; got "
                             f"{describe(actual)}")
    if dtype is not None:
        allowed = dtype if isinstance(dtype, tuple) else (dtype,)
        names = [str(_np.dtype(str(d))) for d in allowed]
        if str(actual.dtype) not in names:
            raise AssertionError(f"{what} should have dtype {' or '.join(names)}; got "
                                 f"{describe(actual)}")


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
    tracer (a debugger, coverage) is active. With ``track_work`` it also notes the work
    queued on every device when the first wait in the block was seen
    (``first_wait``: ((file, line), work so far))."""

    def __init__(self, track_work=False):
        self.by_line = {}  # (file, line) -> TransferStats
        self.track_work = track_work
        self.first_wait = None
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
        now = _total_stats()
        if (self.track_work and self.first_wait is None and self._last is not None
                and now.syncs > self._last.syncs):
            self.first_wait = (self._loc, _work_total())
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
        self._last = _total_stats()
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


def _work_total():
    return sum(sum(_work_counters(d).values()) for d in _devices_of_process())


class assert_transfers:
    """assert_transfers(max_h2d=None, max_d2h=None, max_d2d=None, max_syncs=None, max_h2d_bytes=None, max_d2h_bytes=None, waits_last=False)

    A context manager: fail (AssertionError) at the end of the block when it made
    more host-to-device, device-to-host or device-to-device copies (or waits), or
    moved more bytes to or from the host, than allowed; ``None`` means no limit.
    Every copy made while the block is open counts, by any thread (a reset of the
    ledger inside it changes nothing). The message names the source line of each copy
    over the budget and lists everything that crossed. It yields the counter of
    ``gpuarr.count_transfers()``::

        with gpuarr.testing.assert_transfers(max_d2h=1, max_d2h_bytes=400):
            log = [norm(x @ x) for _ in range(100)]
            print(gpuarr.stack(log).numpy())

    With ``waits_last``, the block also fails when the host waited for a device (a
    ``synchronize()``, a read) before all of the block's work was queued: work queued
    on two devices before one wait runs on both at once, work queued after a wait
    does not overlap what came before it. (This needs the line tracer: under a
    debugger or coverage it is not checked.)

    A budget that depends on the result (the bytes of a log whose dtype the code
    chose) is checked after the block with ``check``::

        budget = assert_transfers(max_d2h=1)
        with budget:
            log = norm_log(A, 50)
        budget.check(max_d2h_bytes=log.nbytes, why=f"the log itself, 50 {log.dtype} values")
    """

    def __init__(self, max_h2d=None, max_d2h=None, max_d2d=None, max_syncs=None,
                 max_h2d_bytes=None, max_d2h_bytes=None, waits_last=False):
        self.limits = {"h2d": max_h2d, "d2h": max_d2h, "d2d": max_d2d,
                       "syncs": max_syncs, "h2d_bytes": max_h2d_bytes,
                       "d2h_bytes": max_d2h_bytes}
        self.waits_last = waits_last
        self._counter = None

    def __enter__(self):
        """__enter__(self)

        Start counting; returns the counter (``t.d2h_count``, ``t.stats``, ...)."""
        self._counting = count_transfers()
        self._counter = self._counting.__enter__()
        self._lines = _LineLedger(track_work=self.waits_last)
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
        self._raise_if_over(self.limits, {})
        if self.waits_last and self._lines.first_wait is not None:
            (file, line), queued = self._lines.first_wait
            later = _work_total() - queued
            if later > 0:
                src = linecache.getline(file, line).strip() if file else ""
                raise AssertionError(
                    f"the host waited for a device before all the work was queued: "
                    f"{_plural(later, 'operation was', 'operations were')} queued after "
                    f"the first wait, at {os.path.basename(file or '?')}:{line}"
                    + (f"\n      {src}" if src else "")
                    + "\nQueue the work on every device first, then wait once at the "
                      "end (work queued after a wait cannot overlap the work before it)")
        return False

    def check(self, why=None, **limits):
        """check(self, why=None, **limits)

        After the block: fail as the block's end would when what crossed in it passes
        one of these further limits (``max_h2d``, ``max_d2h``, ``max_d2d``,
        ``max_syncs``, ``max_h2d_bytes``, ``max_d2h_bytes``, as in the constructor). ``why`` says where the limit comes from (``"the
        log itself, 50 float64 values"``) and shows beside it in the message."""
        __tracebackhide__ = True
        if self._counter is None:
            raise RuntimeError("assert_transfers.check() comes after the with block")
        keys = {k[len("max_"):]: v for k, v in limits.items()}
        unknown = [k for k in keys if k not in _FIELDS]
        if unknown or any(not k.startswith("max_") for k in limits):
            raise TypeError(f"check() takes why= and the max_* limits of "
                            f"assert_transfers; got {sorted(limits)}")
        self._raise_if_over(keys, {k: why for k in keys} if why else {})

    def _raise_if_over(self, limits, why):
        __tracebackhide__ = True
        s = self._counter.stats
        over = [k for k, lim in limits.items()
                if lim is not None and getattr(s, _FIELDS[k][0]) > lim]
        if not over:
            return
        words = [f"{_plural(getattr(s, _FIELDS[k][0]), *_FIELDS[k][1:])} "
                 f"(at most {limits[k]} allowed{': ' + why[k] if k in why else ''})"
                 for k in over]
        where = self._lines.lines(over)
        raise AssertionError(
            "too many transfers: " + "; ".join(words)
            + ("\nwhere they were made:\n" + "\n".join(where) if where else "")
            + f"\nwhat crossed in the block: {s}")


# kind -> (one, many): the words of count_work's kinds (GA_WORK_KINDS in ga_device.h)
_WORK_WORDS = {
    "elementwise": ("elementwise operation", "elementwise operations"),
    "reductions": ("reduction", "reductions"),
    "matmuls": ("matrix product", "matrix products"),
    "random": ("random fill", "random fills"),
    "indexing": ("indexing operation", "indexing operations"),
    "sorting": ("sort", "sorts"),
    "linalg": ("factorisation", "factorisations"),
    "fft": ("FFT", "FFTs"),
}


class WorkCounts:
    """The operations one device executed in a ``count_work`` block, by kind:
    ``elementwise`` (loops, fills, copies within the device), ``reductions`` (and
    scans), ``matmuls`` (matrix products: each matrix of a batched product counts),
    ``random``, ``indexing`` (gather, scatter, nonzero, arange), ``sorting``, ``linalg``
    (factorisations), ``fft``; and ``total``."""

    __slots__ = tuple(_WORK_WORDS)

    def __init__(self, **counts):
        for k in _WORK_WORDS:
            setattr(self, k, counts.get(k, 0))

    @property
    def total(self):
        """Every operation, of every kind."""
        return sum(getattr(self, k) for k in _WORK_WORDS)

    def __eq__(self, other):
        """__eq__(other)

        The same counts of every kind."""
        return (isinstance(other, WorkCounts)
                and all(getattr(self, k) == getattr(other, k) for k in _WORK_WORDS))

    __hash__ = None

    def __str__(self):
        """__str__()

        The counts in words, the zeros left out: ``"1 matrix product, 2 reductions"``,
        or ``"nothing"``."""
        parts = [_plural(getattr(self, k), *_WORK_WORDS[k]) for k in _WORK_WORDS
                 if getattr(self, k)]
        return ", ".join(parts) if parts else "nothing"

    def __repr__(self):
        """__repr__()

        ``<WorkCounts: ...>`` with the counts in words."""
        return f"<WorkCounts: {self}>"


def _devices_of_process():
    return [cpu()] + [gpu(i) for i in range(num_gpus())]


class _WorkBlock:
    """What ``count_work()`` yields: ``w[device]`` is that device's WorkCounts."""

    def __init__(self, devices):
        self.devices = devices
        self._start = {d: _work_counters(d) for d in devices}
        self._end = None

    def _now(self):
        return self._end if self._end is not None else {d: _work_counters(d)
                                                        for d in self.devices}

    def __getitem__(self, device):
        d = Device(device)
        if d not in self._start:
            raise KeyError(f"{d!r} was not counted in this block (counted: "
                           f"{', '.join(map(repr, self.devices))})")
        now = self._now()[d]
        return WorkCounts(**{k: now[k] - self._start[d][k] for k in _WORK_WORDS})

    def __str__(self):
        return "; ".join(f"{d!r}: {self[d]}" for d in self.devices)

    def __repr__(self):
        return f"<work: {self}>"


@contextlib.contextmanager
def count_work(*devices):
    """count_work(*devices)

    A context manager that counts the operations each device executed inside the
    block (every device of the process when none is named), on every device kind: the
    CPU, simulated, emulated and real GPUs. The core counts each operation it hands a
    device, by kind (``WorkCounts``), by any thread; the counting is always on and
    costs a few nanoseconds per operation. ``w[device]`` reads one device's counts::

        with gpuarr.testing.count_work() as w:
            y = x @ x
        assert w[x.device].matmuls == 1

    Blocks may nest."""
    devs = [Device(d) for d in devices] or _devices_of_process()
    block = _WorkBlock(devs)
    try:
        yield block
    finally:
        block._end = {d: _work_counters(d) for d in devs}


class assert_work:
    """assert_work(device, elsewhere=None, **at_least)

    A context manager for graders: fail (AssertionError) at the end of the block unless
    ``device`` executed at least the given numbers of operations of each kind
    (``matmuls=50, reductions=50``; ``total=`` counts every kind; the kinds are
    ``WorkCounts``'s), and, with ``elsewhere``, every other device at most that many
    operations in all. The message says what each device did. A
    ``DeviceMismatchError`` raised in the block becomes a failure that says to move
    the data to ``device``, the one the exercise gives (not to the CPU)::

        with assert_transfers(max_d2h=1), assert_work(device, matmuls=steps):
            log = norm_log(A, steps)

    It yields the ``count_work`` block (``w[device].matmuls``)."""

    def __init__(self, device, elsewhere=None, **at_least):
        self.device = Device(device)
        unknown = [k for k in at_least if k not in _WORK_WORDS and k != "total"]
        if unknown:
            raise TypeError(f"assert_work: unknown kinds of work {unknown}; the kinds are "
                            f"{', '.join(list(_WORK_WORDS) + ['total'])}")
        self.at_least = at_least
        self.elsewhere = elsewhere

    def __enter__(self):
        """__enter__(self)

        Start counting on every device; returns the block."""
        devs = _devices_of_process()
        if self.device not in devs:
            devs.append(self.device)
        self._counting = count_work(*devs)
        self._block = self._counting.__enter__()
        return self._block

    def __exit__(self, exc_type, exc, tb):
        """__exit__(self, exc_type, exc, tb)

        Stop counting; raise AssertionError when the device did too little, or
        another device too much; turn a DeviceMismatchError into advice."""
        __tracebackhide__ = True
        self._counting.__exit__(exc_type, exc, tb)
        if exc_type is not None and issubclass(exc_type, DeviceMismatchError):
            raise AssertionError(
                f"{exc}\nIn this exercise the work belongs on {self.device!r}, the device "
                f"it gives: move each array that lives elsewhere there, with "
                f"x.to({self.device!r}) (moving it to the CPU instead would compute on "
                f"the host)") from exc
        if exc_type is not None:
            return False
        w = self._block
        mine = w[self.device]
        short = []
        for k, n in self.at_least.items():
            got = mine.total if k == "total" else getattr(mine, k)
            if got < n:
                one, many = ("operation", "operations") if k == "total" else _WORK_WORDS[k]
                short.append(f"{_plural(got, one, many)} (at least {n} expected)")
        others = [d for d in w.devices if d != self.device]
        busy = sum(w[d].total for d in others)
        problems = []
        if short:
            problems.append(f"too little work on {self.device!r}: " + "; ".join(short))
            if busy:
                problems.append(f"(it ran on {', '.join(repr(d) for d in others if w[d].total)}"
                                f" instead: compute where the data of the exercise lives)")
            elif not mine.total:
                problems.append("(no device did it: was it computed with NumPy on the "
                                "host, or not at all?)")
        if self.elsewhere is not None and busy > self.elsewhere:
            problems.append(f"work done on other devices than {self.device!r}: "
                            f"{_plural(busy, 'operation', 'operations')} (at most "
                            f"{self.elsewhere} allowed)")
        if problems:
            raise AssertionError("\n".join(problems) + f"\nwork done in the block: {w}")
        return False


_KERNEL_FIELDS = ("launches", "syncs", "h2d", "d2h", "graph_launches", "graph_kernels")


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
        return self._end or _kernel_counters(self.device)

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
    ``h2d`` and ``d2h`` (copies to and from the device), ``max_grid_blocks`` (the
    largest grid launched, in blocks), ``graph_launches`` (CUDA graphs launched: a
    captured step's replay; each also counts as one launch) and ``graph_kernels`` (the
    kernels those graphs ran, which ``launches`` does not count). The counting is in the plugin's host code, so it
    is the same on a GPU and in the emulation. On the CPU and simulated GPUs nothing is
    counted: ``supported`` is False and every count is 0::

        with gpuarr.testing.count_kernels(x.device) as k:
            y = x + 1
        assert not k.supported or k.launches >= 1

    Blocks may not nest on one device (each resets ``max_grid_blocks``)."""
    device = Device(device)
    start = _kernel_counters(device, True)
    c = _KernelCounts(device, start)
    try:
        yield c
    finally:
        if c.supported:
            c._end = _kernel_counters(device)
