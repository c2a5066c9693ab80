"""Devices from Python: the chapter's helpers, the transfer ledger, memory.

``CUDA_VISIBLE_DEVICES`` chooses the GPUs, as in PyTorch: ``gpu(0)`` is the first
*visible* GPU and ``num_gpus()`` counts only visible ones. With real GPUs the CUDA
driver applies it; simulated (``GPUARR_SIMULATE_GPUS=N``) and emulated GPUs follow
the same rules (order, renumbering from 0, an empty value hides all, the first invalid
entry hides itself and the rest), read when gpuarr is imported: set it in the shell
or in ``os.environ`` before ``import gpuarr``. ``gpuarr.info()`` says which it hid.
"""
import contextlib
import threading
from dataclasses import dataclass

from . import _core
from ._core import cpu, gpu, num_gpus

__all__ = [
    "try_gpu", "try_all_gpus", "transfer_stats", "TransferStats", "count_transfers",
    "memory_stats", "empty_cache", "warn_on_transfers", "reset_transfer_stats",
    "simulate_gpus_if_none",
    "device_kind",
]

_KIND_WORDS = {"CPU": "cpu", "CUDA": "cuda", "simulated": "simulated",
               "emulated CUDA": "emulated"}


def device_kind(device):
    """device_kind(device)

    What serves ``device``: ``"cpu"``; ``"cuda"`` (a real NVIDIA GPU);
    ``"simulated"`` (``GPUARR_SIMULATE_GPUS``: host memory and CPU kernels behind
    a queue and a worker thread per device, so counts of copies and waits, overlap
    between devices and the ``synchronize()`` lesson are real, but speed against
    the CPU is not); or ``"emulated"`` (``GPUARR_CUDA_EMULATE``: the CUDA backend's
    own code run on the CPU, a slow test harness). Raises the usual device error
    for a GPU that does not exist."""
    return _KIND_WORDS[_core._device_info(device)["kind"]]


def try_gpu(i=0):
    """try_gpu(i=0)

    ``gpu(i)`` if it exists, else ``cpu()``. Never raises. Code written with it runs
    on any machine::

        net = net.to(gpuarr.try_gpu())        # gpu(0), or the CPU without a GPU
        X = gpuarr.ones((2, 3), device=gpuarr.try_gpu(1))
    """
    return gpu(i) if num_gpus() >= i + 1 else cpu()


def simulate_gpus_if_none(n=2, model=None):
    """simulate_gpus_if_none(n=2, model=None)

    When this machine has no GPU, simulate ``n`` (as ``GPUARR_SIMULATE_GPUS=n`` would)
    and return True; with a GPU, or when ``GPUARR_SIMULATE_GPUS`` is set, change
    nothing and return False. Unlike the variable it works at any time, also after
    the first device query: without a GPU no array can live on one. The first cell
    of a notebook that teaches with two GPUs::

        if gpuarr.simulate_gpus_if_none(2):
            print("no GPU here: gpuarr simulates", gpuarr.num_gpus())

    ``model`` ("T4", "A100" or "H100", as ``GPUARR_SIMULATE_GPUS=2:T4``) gives the
    simulated GPUs the performance model of that GPU: every operation then also gets
    a modeled time (``gpuarr.device_model``, ``Event.elapsed_time(clock="modeled")``,
    ``gpuarr.profile()``). An unknown name is a ValueError listing the known ones."""
    if model is not None and not isinstance(model, str):
        raise TypeError(f"simulate_gpus_if_none: model must be a GPU model's name "
                        f"(a str such as 'T4'), not {type(model).__name__}")
    return _core._simulate_gpus_if_none(n, model)


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
        """__sub__(other)

        Field by field difference: ``after - before`` is what happened in between."""
        return TransferStats(*(getattr(self, f) - getattr(other, f)
                               for f in self.__dataclass_fields__))

    def __str__(self):
        """__str__()

        One line with copies and bytes per direction, and the number of waits."""
        def copies(n):
            return f"{n} cop{'y' if n == 1 else 'ies'}"

        return (f"host->device: {copies(self.h2d_count)}, {self.h2d_bytes} bytes; "
                f"device->host: {copies(self.d2h_count)}, {self.d2h_bytes} bytes; "
                f"device->device: {copies(self.d2d_count)}, {self.d2d_bytes} bytes; "
                f"waits: {self.syncs}")


# Transfers the library makes for itself and keeps out of the user's ledger (the
# host copies of gpuarr.testing's comparisons). The C ledger cannot be set, only
# reset, so the hidden part is subtracted here. Only transfer_stats() hides them: a
# counting block (count_transfers, assert_transfers) reads the C ledger's totals,
# which neither a hidden copy nor a reset inside the block can change, so code under
# test cannot copy data out of sight of the block that grades it.
_hidden_lock = threading.Lock()
_hidden = TransferStats()


def _raw_stats():
    return TransferStats(*_core._transfer_stats())


_transfer_totals = _core._transfer_totals  # bound once: a patched _core changes nothing


def _total_stats():
    """Everything that crossed since the process started, hidden copies included."""
    return TransferStats(*_transfer_totals())


def transfer_stats():
    """transfer_stats()

    The transfer ledger since the start (or the last ``reset_transfer_stats()``):
    a TransferStats with h2d_bytes, h2d_count, d2h_bytes, d2h_count, d2d_bytes,
    d2d_count and syncs. Printing, ``item()``, ``float()``, ``bool()`` and
    ``numpy()`` of device arrays count too."""
    with _hidden_lock:
        return _raw_stats() - _hidden


def reset_transfer_stats():
    """reset_transfer_stats()

    Set every counter of the transfer ledger to 0."""
    global _hidden
    with _hidden_lock:
        _core.reset_transfer_stats()
        _hidden = TransferStats()


@contextlib.contextmanager
def _uncounted():
    """Transfers made inside the block do not show in ``transfer_stats()``."""
    global _hidden
    before = _raw_stats()
    try:
        yield
    finally:
        with _hidden_lock:
            _hidden = TransferStats(*(a + b for a, b in
                                      zip(_astuple(_hidden), _astuple(_raw_stats() - before))))


def _astuple(s):
    return tuple(getattr(s, f) for f in TransferStats.__dataclass_fields__)


class _Counter:
    """What ``count_transfers()`` yields; its fields read the ledger's difference."""

    def __init__(self):
        self._start = _total_stats()
        self._end = None

    @property
    def stats(self):
        return (self._end or _total_stats()) - self._start

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
    transfers made inside the block, by any thread. Every copy counts, also those
    that ``transfer_stats()`` leaves out (gpuarr.testing's comparisons), and
    ``reset_transfer_stats()`` inside the block changes nothing."""
    c = _Counter()
    try:
        yield c
    finally:
        c._end = _total_stats()


def memory_stats(device=None):
    """memory_stats(device=None)

    A dict for one device (default: the default device) with
    ``allocated_bytes`` (in use by arrays now), ``reserved_bytes`` (held by the
    device's cache, in use or free for reuse), ``peak_allocated_bytes`` (the most
    in use at once), ``total_bytes`` (the device's memory, 0 when unknown; a simulated GPU's is
    ``GPUARR_SIMULATE_GPU_MEMORY``, its model's or 16 GiB), ``alloc_calls``
    (requests made to the system allocator), and for a GPU ``array_bytes``,
    ``peak_array_bytes`` and ``array_count`` (this process's arrays there:
    ``gpuarr.cuda.memory_allocated`` and ``max_memory_allocated``)."""
    return _core._memory_stats(device)


def empty_cache(device=None):
    """empty_cache(device=None)

    Give cached device blocks back to the system (one device, or every GPU). A
    CUDA allocation that a live array uses part of stays; its free parts stay
    cached."""
    if device is not None:
        _core._empty_cache(device)
        return
    for i in range(num_gpus()):
        _core._empty_cache(gpu(i))


class _WarnSetting:
    """What ``warn_on_transfers()`` returns: the previous setting (truthy like it),
    and a context manager that restores it at the end of a ``with`` block."""

    def __init__(self, previous):
        self.previous = bool(previous)

    def __bool__(self):
        return self.previous

    def __eq__(self, other):
        return self.previous == other

    def __hash__(self):
        return hash(self.previous)

    def __repr__(self):
        return repr(self.previous)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _core._set_warn_transfers(self.previous)
        return False


def warn_on_transfers(enabled=True):
    """warn_on_transfers(enabled=True)

    Emit ``gpuarr.TransferWarning`` when printing, ``item()``, ``float()``,
    ``int()`` or ``bool()`` reads a device array, to find the line that makes a loop
    slow (off by default; ``numpy()`` is explicit and never warns). Returns the
    previous setting, which also works as a context manager that restores it::

        with gpuarr.warn_on_transfers():
            train_one_epoch()
    """
    return _WarnSetting(_core._set_warn_transfers(bool(enabled)))
