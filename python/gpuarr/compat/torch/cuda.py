"""``torch.cuda`` over gpuarr: counting GPUs, the current device, synchronize and
timing events, memory queries.

A GPU here is any of gpuarr's kinds (CUDA, simulated, emulated). The current device
and the memory queries are gpuarr.cuda's when this gpuarr has it; before that, the
current device is kept here, per thread, and the memory queries read
``gpuarr.memory_stats``: the same behaviour by either path.
"""
import contextlib
import threading

import gpuarr

from .._shim import outside

__getattr__ = outside("torch.cuda", __name__)
_local = threading.local()


def _gpuarr_cuda(name):
    """gpuarr.cuda.<name> when this gpuarr has it, else None."""
    return getattr(getattr(gpuarr, "cuda", None), name, None)


def _index(device):
    """A GPU index from an index, a Device, a 'cuda:i' string or None (the current)."""
    if device is None:
        return current_device()
    if isinstance(device, gpuarr.Device):
        if device.type == "cpu":
            raise ValueError("torch.cuda: expected a CUDA device, got cpu(0)")
        return device.index
    if isinstance(device, str):
        kind, _, num = device.partition(":")
        if kind not in ("cuda", "gpu"):
            raise ValueError(f"torch.cuda: expected a CUDA device, got {device!r}")
        return int(num) if num else current_device()
    return int(device)


def _check(i):
    n = device_count()
    if not 0 <= i < n:
        raise RuntimeError(f"torch.cuda: invalid device ordinal {i}: this process has "
                           f"{n} GPU(s) (set GPUARR_SIMULATE_GPUS=2 to simulate two)")
    return i


def is_available():
    """is_available()

    Whether this process has a GPU (``gpuarr.num_gpus() > 0``)."""
    return gpuarr.num_gpus() > 0


def device_count():
    """device_count()

    The number of GPUs (``gpuarr.num_gpus()``); 0 without one, never an error."""
    return gpuarr.num_gpus()


def current_device():
    """current_device()

    The index of the current GPU: where a bare ``.cuda()`` puts data (0 until
    ``set_device`` or ``with torch.cuda.device(i):`` says otherwise)."""
    fn = _gpuarr_cuda("current_device")
    if fn is not None:
        return fn()
    return getattr(_local, "index", 0)


def set_device(device):
    """set_device(device)

    Make GPU `device` the current one for this thread."""
    i = _check(_index(device))
    fn = _gpuarr_cuda("set_device")
    if fn is not None:
        return fn(i)
    _local.index = i


@contextlib.contextmanager
def device(device):
    """device(device)

    ``with torch.cuda.device(i):`` makes GPU i the current one inside the block."""
    i = _check(_index(device))
    fn = _gpuarr_cuda("device")
    if fn is not None:
        with fn(i):
            yield
        return
    before = current_device()
    _local.index = i
    try:
        yield
    finally:
        _local.index = before


def synchronize(device=None):
    """synchronize(device=None)

    Wait for the queued work of a GPU (default: the current one)."""
    gpuarr.synchronize(gpuarr.gpu(_check(_index(device))))


def get_device_name(device=None):
    """get_device_name(device=None)

    What serves the GPU and its name in gpuarr, such as 'simulated gpu(0)'."""
    d = gpuarr.gpu(_check(_index(device)))
    return f"{gpuarr.device_kind(d)} {d!r}"


def _stats(device):
    return gpuarr.memory_stats(gpuarr.gpu(_check(_index(device))))


def memory_allocated(device=None):
    """memory_allocated(device=None)

    Bytes the arrays on the GPU hold now."""
    fn = _gpuarr_cuda("memory_allocated")
    return fn(_index(device)) if fn is not None else _stats(device)["allocated_bytes"]


def max_memory_allocated(device=None):
    """max_memory_allocated(device=None)

    The most bytes arrays held at once on the GPU (since the last reset)."""
    fn = _gpuarr_cuda("max_memory_allocated")
    return fn(_index(device)) if fn is not None else _stats(device)["peak_allocated_bytes"]


def memory_reserved(device=None):
    """memory_reserved(device=None)

    Bytes gpuarr's cache holds on the GPU (in use or free for reuse)."""
    fn = _gpuarr_cuda("memory_reserved")
    return fn(_index(device)) if fn is not None else _stats(device)["reserved_bytes"]


def reset_peak_memory_stats(device=None):
    """reset_peak_memory_stats(device=None)

    Start ``max_memory_allocated`` afresh (gpuarr.cuda's; this gpuarr lacks it yet)."""
    fn = _gpuarr_cuda("reset_peak_memory_stats")
    if fn is None:
        raise NotImplementedError("torch.cuda.reset_peak_memory_stats needs "
                                  "gpuarr.cuda.reset_peak_memory_stats, which this gpuarr "
                                  "does not have yet: read gpuarr.memory_stats(d) before "
                                  "and after instead")
    return fn(_index(device))


def mem_get_info(device=None):
    """mem_get_info(device=None)

    (free, total) bytes of the GPU's memory."""
    fn = _gpuarr_cuda("mem_get_info")
    if fn is not None:
        return fn(_index(device))
    s = _stats(device)
    if not s["total_bytes"]:
        raise NotImplementedError("torch.cuda.mem_get_info: this gpuarr does not know this "
                                  "GPU's total memory yet (gpuarr.cuda.mem_get_info): read "
                                  "gpuarr.memory_stats(d) instead")
    return s["total_bytes"] - s["reserved_bytes"], s["total_bytes"]


def empty_cache():
    """empty_cache()

    Give the cached free blocks of every GPU back (``gpuarr.empty_cache``)."""
    for i in range(device_count()):
        gpuarr.empty_cache(gpuarr.gpu(i))


class Event:
    """Event(enable_timing=False, blocking=False, interprocess=False)

    ``torch.cuda.Event`` over ``gpuarr.Event``: ``record()`` places it after the work
    queued so far on the current GPU (PyTorch: on the current device's stream; gpuarr
    has one queue per device), ``elapsed_time(end)`` gives the milliseconds between two
    completed events made with ``enable_timing=True``, as the notes' timing recipe uses
    them. `blocking` changes only how CUDA waits, so it is accepted and has no effect
    here; events shared between processes are outside the chapter."""

    __slots__ = ("_event",)

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError("torch.cuda.Event(interprocess=True) is outside the "
                                      "GPU chapter: gpuarr's events live in one process")
        self._event = gpuarr.Event(enable_timing=enable_timing)

    def record(self, stream=None):
        """record(stream=None)

        Place the event after the work queued so far on the current GPU."""
        if stream is not None:
            raise ValueError("torch.cuda.Event.record: CUDA streams are outside the GPU "
                             "chapter; call record() to use the current GPU's queue")
        self._event.record(gpuarr.gpu(_check(current_device())))

    def query(self):
        """query()

        True when the work queued before the event is done; never waits."""
        return self._event.query()

    def synchronize(self):
        """synchronize()

        Wait until the work queued before the event is done."""
        self._event.synchronize()

    def elapsed_time(self, end_event):
        """elapsed_time(end_event)

        Milliseconds from this event to `end_event`, both recorded and completed."""
        if not isinstance(end_event, Event):
            raise TypeError(f"elapsed_time needs another torch.cuda.Event, not "
                            f"{type(end_event).__name__}")
        return self._event.elapsed_time(end_event._event)

    def __repr__(self):
        return f"torch.cuda.Event({self._event!r})"
