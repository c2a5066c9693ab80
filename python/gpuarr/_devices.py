"""Devices from Python: the chapter's helpers, the transfer ledger, memory."""
import contextlib
from dataclasses import dataclass

from . import _core
from ._core import cpu, gpu, num_gpus

__all__ = [
    "try_gpu", "try_all_gpus", "transfer_stats", "TransferStats", "count_transfers",
    "memory_stats", "empty_cache", "warn_on_transfers",
]


def try_gpu(i=0):
    """try_gpu(i=0)

    ``gpu(i)`` if it exists, else ``cpu()``. Never raises."""
    return gpu(i) if num_gpus() >= i + 1 else cpu()


def try_all_gpus():
    """try_all_gpus()

    Every GPU, or ``[cpu()]`` when there is none."""
    n = num_gpus()
    return [gpu(i) for i in range(n)] if n else [cpu()]


@dataclass(frozen=True)
class TransferStats:
    """Bytes and copies that crossed between host and devices, and waits."""

    h2d_bytes: int = 0
    h2d_count: int = 0
    d2h_bytes: int = 0
    d2h_count: int = 0
    d2d_bytes: int = 0
    d2d_count: int = 0
    syncs: int = 0

    def __sub__(self, other):
        return TransferStats(*(getattr(self, f) - getattr(other, f)
                               for f in self.__dataclass_fields__))

    def __str__(self):
        return (f"host->device: {self.h2d_count} copies, {self.h2d_bytes} bytes; "
                f"device->host: {self.d2h_count} copies, {self.d2h_bytes} bytes; "
                f"device->device: {self.d2d_count} copies, {self.d2d_bytes} bytes; "
                f"waits: {self.syncs}")


def transfer_stats():
    """transfer_stats()

    The transfer ledger since the start (or the last ``reset_transfer_stats()``):
    a TransferStats with h2d_bytes, h2d_count, d2h_bytes, d2h_count, d2d_bytes,
    d2d_count and syncs. Printing, ``item()``, ``float()``, ``bool()`` and
    ``numpy()`` of device arrays count too."""
    return TransferStats(*_core._transfer_stats())


class _Counter:
    """What ``count_transfers()`` yields; its fields read the ledger's difference."""

    def __init__(self):
        self._start = transfer_stats()
        self._end = None

    @property
    def stats(self):
        return (self._end or transfer_stats()) - self._start

    def __getattr__(self, name):
        if name in TransferStats.__dataclass_fields__:
            return getattr(self.stats, name)
        raise AttributeError(name)

    def __repr__(self):
        return f"<transfers: {self.stats}>"


@contextlib.contextmanager
def count_transfers():
    """count_transfers()

    ``with gpuarr.count_transfers() as t: ...`` then ``t.d2h_count`` etc. are the
    transfers made inside the block."""
    c = _Counter()
    try:
        yield c
    finally:
        c._end = transfer_stats()


def memory_stats(device=None):
    """memory_stats(device=None)

    A dict with allocated_bytes, reserved_bytes and peak_allocated_bytes (plus
    total_bytes and alloc_calls) for one device (default: the default device)."""
    return _core._memory_stats(device)


def empty_cache(device=None):
    """empty_cache(device=None)

    Give cached device blocks back to the system (one device, or every GPU)."""
    if device is not None:
        _core._empty_cache(device)
        return
    for i in range(num_gpus()):
        _core._empty_cache(gpu(i))


def warn_on_transfers(enabled=True):
    """warn_on_transfers(enabled=True)

    Emit ``gpuarr.TransferWarning`` when printing, ``item()``, ``float()``,
    ``int()`` or ``bool()`` reads a device array, to find the line that makes a loop
    slow. Returns the previous setting."""
    return _core._set_warn_transfers(enabled)
