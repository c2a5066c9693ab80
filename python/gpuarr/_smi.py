"""``python -m gpuarr smi`` and the GPU table of ``gpuarr.info()``: nvidia-smi's view.

One row per GPU (index, name, kind, memory held / total) and, as nvidia-smi lists the
processes that use each GPU, this process's arrays on it. Every GPU kind answers: a
simulated GPU's memory is its simulated size (``GPUARR_SIMULATE_GPU_MEMORY``), an
emulated one's ``GPUARR_CUDA_EMULATE_MEMORY``.
"""
import os
import sys

from . import _core
from ._devices import device_kind

__all__ = ["smi"]


def _size(n):
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _rows():
    rows = []
    for i in range(_core.num_gpus()):
        d = _core.gpu(i)
        info = _core._device_info(d)
        s = _core._memory_stats(d)
        rows.append((i, info["name"], device_kind(d), s))
    return rows


def table():
    """table()

    The text of ``python -m gpuarr smi``: the GPUs, then this process's arrays."""
    rows = _rows()
    if not rows:
        mode, reason = _core._gpu_mode()
        return f"No GPU: {reason or 'no CUDA device'}"
    width = max(30, *(len(r[1]) for r in rows))
    line = "+" + "-" * (width + 48) + "+"
    out = [line,
           f"| GPU  {'Name':{width}}  {'Kind':9}  {'Memory used / total':>27} |",
           line]
    for i, name, kind, s in rows:
        used = f"{_size(s['reserved_bytes'])} / {_size(s['total_bytes'])}"
        out.append(f"| {i:3}  {name:{width}}  {kind:9}  {used:>27} |")
    out.append(line)
    out.append("Processes (this one; 'used' above also counts blocks its cache keeps):")
    out.append(f"  {'GPU':>3}  {'PID':>8}  {'Process':16}  {'Arrays':>6}  {'Array memory':>12}")
    name = os.path.basename(sys.argv[0] or sys.executable)[:16] or "python"
    for i, _, _, s in rows:
        if s["array_count"]:
            out.append(f"  {i:3}  {os.getpid():8}  {name:16}  {s['array_count']:6}  "
                       f"{_size(s['array_bytes']):>12}")
    if not any(s["array_count"] for *_, s in rows):
        out.append("  (no arrays on a GPU)")
    return "\n".join(out)


def smi(file=None):
    """smi(file=None)

    Print the table of ``python -m gpuarr smi``."""
    print(table(), file=file if file is not None else sys.stdout)
