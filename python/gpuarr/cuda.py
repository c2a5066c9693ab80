"""gpuarr.cuda: the current GPU, GPU counts and memory, in PyTorch's names.

``gpuarr.cuda.set_device(1)`` / ``with gpuarr.cuda.device(1):`` choose where a bare
``x.cuda()`` or ``net.cuda()`` goes (docs/DESIGN.md, "The current GPU"); the memory
functions read ``gpuarr.memory_stats`` of one GPU. Every GPU kind answers: real CUDA,
simulated (``GPUARR_SIMULATE_GPUS``) and emulated (``GPUARR_CUDA_EMULATE``).
"""
from . import _core
from ._current_device import current_device, device, set_device

__all__ = ["device_count", "is_available", "current_device", "set_device", "device",
           "synchronize", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "mem_get_info"]


def device_count():
    """device_count()

    The number of GPUs (``gpuarr.num_gpus()``): real, simulated or emulated, after
    ``CUDA_VISIBLE_DEVICES``."""
    return _core.num_gpus()


def is_available():
    """is_available()

    True when there is at least one GPU (of any kind)."""
    return _core.num_gpus() > 0


def _gpu(d, what):
    """gpu(i) of ``d``: None (the current GPU), a number, a Device or a string."""
    if d is None:
        return _core.gpu(current_device())
    if isinstance(d, int) and not isinstance(d, bool):
        return _core.gpu(d)
    dev = _core.Device(d)
    if dev.type != "gpu":
        raise ValueError(f"{what}: {dev!r} is not a GPU; use gpuarr.memory_stats(cpu()) "
                         f"for the host")
    return dev


def synchronize(device=None):
    """synchronize(device=None)

    Wait until the work queued on GPU ``device`` (default: the current GPU) is done."""
    _core.synchronize(_gpu(device, "synchronize"))


def memory_allocated(device=None):
    """memory_allocated(device=None)

    Bytes that this process's arrays hold on GPU ``device`` now (default: the
    current GPU): what they asked for, before the allocator rounds it up."""
    return _core._memory_stats(_gpu(device, "memory_allocated"))["array_bytes"]


def max_memory_allocated(device=None):
    """max_memory_allocated(device=None)

    The most bytes this process's arrays held at once on GPU ``device`` since the
    start or the last ``reset_peak_memory_stats(device)``."""
    return _core._memory_stats(_gpu(device, "max_memory_allocated"))["peak_array_bytes"]


def reset_peak_memory_stats(device=None):
    """reset_peak_memory_stats(device=None)

    Start ``max_memory_allocated(device)`` again from what the arrays hold now."""
    _core._reset_peak_memory(_gpu(device, "reset_peak_memory_stats"))


def memory_reserved(device=None):
    """memory_reserved(device=None)

    Bytes GPU ``device``'s cache holds (in use by arrays, or free for reuse);
    ``gpuarr.empty_cache()`` gives the free part back."""
    return _core._memory_stats(_gpu(device, "memory_reserved"))["reserved_bytes"]


def mem_get_info(device=None):
    """mem_get_info(device=None)

    ``(free_bytes, total_bytes)`` of GPU ``device``: its memory, and what of it this
    process's cache does not hold (other processes' use of a real GPU is not
    counted: ``nvidia-smi`` shows it)."""
    s = _core._memory_stats(_gpu(device, "mem_get_info"))
    total = s["total_bytes"]
    return max(total - s["reserved_bytes"], 0), total
