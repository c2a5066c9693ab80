#!/usr/bin/env python3
"""Static report of the CUDA plugin's machine code: what each kernel costs a GPU.

Reads the SASS of one architecture (sm_90 unless told) from the built plugin with
cuobjdump (``-res-usage`` and ``-sass``; the toolkit's, or the PyPI wheels
``nvidia-cuda-cuobjdump`` and ``nvidia-cuda-nvdisasm``) and prints, per kernel:
registers, spilled bytes (local memory and spill stores/loads), static shared memory,
the theoretical occupancy at the block size the plugin launches it with, and the
widths of its global loads and stores. A summary line gives the fraction of byte-wide
global accesses over all kernels and the kernels that use warp shuffles.

Usage:
    python tools/cuda_report.py [PLUGIN.so] [--arch sm_90] [--kernels] [--json]

Occupancy follows the documented per-multiprocessor limits of sm_80 and sm_90: 65536
registers allocated per warp in units of 256, 2048 resident threads (64 warps), 32
resident blocks, 228 KiB of shared memory on sm_90 (164 KiB on sm_80), 1 KiB of
shared memory reserved per block.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

LIMITS = {
    "sm_80": {"regs": 65536, "threads": 2048, "blocks": 32, "smem": 164 * 1024},
    "sm_90": {"regs": 65536, "threads": 2048, "blocks": 32, "smem": 228 * 1024},
}
REG_UNIT = 256  # registers are allocated per warp in units of 256
SMEM_PER_BLOCK_RESERVED = 1024

# Threads per block each kernel is launched with (the plugin's launch geometry:
# ga_cuda_launch_dims and GA_RED_BLOCK give 256, in the emulated build too; exceptions
# by name prefix).
DEFAULT_BLOCK = 256
BLOCK_BY_PREFIX = [
    ("k_reverse", 128),  # the self-test's shared-memory kernel
    ("k_nonzero_offsets", 32),  # one thread scans the tile counts
    ("k_gemm", 256),
]


@dataclass
class Kernel:
    name: str
    mangled: str
    regs: int = 0
    stack: int = 0
    shared: int = 0
    local: int = 0
    block: int = DEFAULT_BLOCK
    occupancy: float = 0.0
    spill_ops: int = 0
    widths: Dict[str, int] = field(default_factory=dict)  # "LDG.8" -> count
    shfl: int = 0
    f2f_half: int = 0  # hardware float -> half conversions (F2F/F2FP.F16.F32/F64)

    @property
    def spills(self) -> bool:
        return self.local > 0 or self.spill_ops > 0


def find_tool(name: str) -> Optional[str]:
    """The toolkit's tool on PATH, else the PyPI wheel's (site-packages/nvidia/cu*/bin)."""
    found = shutil.which(name)
    if found:
        return found
    try:
        import nvidia  # type: ignore[import-not-found]
    except ImportError:
        return None
    for root in list(getattr(nvidia, "__path__", [])):
        for sub in sorted(os.listdir(root), reverse=True):
            cand = os.path.join(root, sub, "bin", name)
            if os.access(cand, os.X_OK):
                return cand
    return None


def default_plugin() -> Optional[str]:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for cand in (
        os.path.join(here, "python", "gpuarr", "libgpuarr_cuda.so"),
        os.path.join(here, "build", "dev", "csrc", "cuda", "libgpuarr_cuda.so"),
    ):
        if os.path.exists(cand):
            return cand
    return None


def demangle(names: List[str]) -> Dict[str, str]:
    filt = shutil.which("c++filt")
    if not filt or not names:
        return {n: n for n in names}
    out = subprocess.run([filt], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def occupancy(k: Kernel, arch: str) -> float:
    lim = LIMITS[arch]
    warps = (k.block + 31) // 32
    by_threads = lim["threads"] // (warps * 32)
    regs_per_warp = ((max(k.regs, 1) * 32 + REG_UNIT - 1) // REG_UNIT) * REG_UNIT
    by_regs = (lim["regs"] // regs_per_warp) // warps
    smem = k.shared + SMEM_PER_BLOCK_RESERVED
    by_smem = lim["smem"] // smem
    blocks = min(by_threads, by_regs, by_smem, lim["blocks"])
    return blocks * warps * 32 / lim["threads"]


def block_for(name: str) -> int:
    for prefix, block in BLOCK_BY_PREFIX:
        if name.startswith(prefix):
            return block
    return DEFAULT_BLOCK


_RES = re.compile(r"^\s*Function (\S+):\s*$")
_USE = re.compile(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")
_FUNC = re.compile(r"^\s*Function : (\S+)\s*$")
# a global (LDG/STG) or generic (LD/ST) memory instruction and its modifiers
_MEM = re.compile(r"\b(LDG|STG|LD|ST)((?:\.[A-Z0-9_]+)*)\s")
_SHFL = re.compile(r"\bSHFL\.")
_F2F_HALF = re.compile(r"\bF2FP?\.F16\.F(32|64)\b")  # F2FP...PACK_AB on sm_90
_SPILL = re.compile(r"\b(STL|LDL)\b")

_WIDTH = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128}


def access_width(mods: str) -> int:
    for m in mods.split("."):
        if m in _WIDTH:
            return _WIDTH[m]
    return 32


def analyse(plugin: str, arch: str) -> List[Kernel]:
    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is None:
        raise SystemExit("cuobjdump not found: pip install nvidia-cuda-cuobjdump "
                         "nvidia-cuda-nvdisasm")
    env = dict(os.environ)
    nvdisasm = find_tool("nvdisasm")
    if nvdisasm is not None:
        env["PATH"] = os.path.dirname(nvdisasm) + os.pathsep + env.get("PATH", "")
    res = subprocess.run([cuobjdump, "-arch", arch, "-res-usage", plugin],
                         capture_output=True, text=True, env=env, check=True).stdout
    kernels: Dict[str, Kernel] = {}
    current = None
    for line in res.splitlines():
        m = _RES.match(line)
        if m:
            current = m.group(1)
            continue
        u = _USE.search(line)
        if u and current is not None:
            kernels[current] = Kernel(name=current, mangled=current, regs=int(u.group(1)),
                                      stack=int(u.group(2)), shared=int(u.group(3)),
                                      local=int(u.group(4)))
            current = None
    sass = subprocess.run([cuobjdump, "-arch", arch, "-sass", plugin],
                          capture_output=True, text=True, env=env, check=True).stdout
    k: Optional[Kernel] = None
    for line in sass.splitlines():
        f = _FUNC.match(line)
        if f:
            k = kernels.setdefault(f.group(1), Kernel(name=f.group(1), mangled=f.group(1)))
            continue
        if k is None or "/*" not in line:
            continue
        for mm in _MEM.finditer(line):
            key = f"{mm.group(1)}.{access_width(mm.group(2))}"
            k.widths[key] = k.widths.get(key, 0) + 1
        if _SHFL.search(line):
            k.shfl += 1
        if _F2F_HALF.search(line):
            k.f2f_half += 1
        if _SPILL.search(line):
            k.spill_ops += 1
    names = demangle(list(kernels))
    for mangled, kern in kernels.items():
        kern.name = names[mangled]
        kern.block = block_for(kern.name)
        kern.occupancy = occupancy(kern, arch)
    return sorted(kernels.values(), key=lambda x: x.name)


def summary(kernels: List[Kernel]) -> Dict[str, object]:
    total = byte = glob = glob_byte = 0
    for k in kernels:
        for key, n in k.widths.items():
            op, width = key.split(".")
            total += n
            byte += n if width == "8" else 0
            if op in ("LDG", "STG"):
                glob += n
                glob_byte += n if width == "8" else 0
    return {
        "kernels": len(kernels),
        "accesses": total,
        "byte_wide": byte,
        "byte_wide_fraction": byte / total if total else 0.0,
        "global_accesses": glob,
        "global_byte_wide_fraction": glob_byte / glob if glob else 0.0,
        "vector_128": sum(k.widths.get("LDG.128", 0) + k.widths.get("STG.128", 0)
                          + k.widths.get("LD.128", 0) + k.widths.get("ST.128", 0)
                          for k in kernels),
        "kernels_with_shfl": sum(1 for k in kernels if k.shfl),
        "kernels_spilling": sum(1 for k in kernels if k.spills),
        "min_occupancy": min((k.occupancy for k in kernels), default=0.0),
        "max_registers": max((k.regs for k in kernels), default=0),
    }


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plugin", nargs="?", default=None, help="libgpuarr_cuda.so")
    ap.add_argument("--arch", default="sm_90", choices=sorted(LIMITS))
    ap.add_argument("--kernels", action="store_true", help="one line per kernel")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)
    plugin = args.plugin or default_plugin()
    if plugin is None:
        print("no CUDA plugin found: build it with tools/dev-build.sh -DGPUARR_CUDA=ON",
              file=sys.stderr)
        return 2
    kernels = analyse(plugin, args.arch)
    s = summary(kernels)
    if args.json:
        print(json.dumps({"summary": s, "kernels": [asdict(k) for k in kernels]}))
        return 0
    if args.kernels:
        print(f"{'regs':>4} {'spill':>5} {'smem':>6} {'block':>5} {'occ':>5}  "
              f"accesses  kernel")
        for k in kernels:
            w = " ".join(f"{key}:{n}" for key, n in sorted(k.widths.items()))
            print(f"{k.regs:4d} {k.local + k.spill_ops:5d} {k.shared:6d} {k.block:5d} "
                  f"{k.occupancy:5.0%}  {w}{' SHFL' if k.shfl else ''}  {k.name}")
    print(f"{args.arch}: {s['kernels']} kernels, {s['accesses']} global/generic "
          f"loads+stores, {s['byte_wide_fraction']:.1%} byte-wide "
          f"(LDG/STG only: {s['global_byte_wide_fraction']:.1%} of "
          f"{s['global_accesses']}), {s['vector_128']} 128-bit; "
          f"{s['kernels_with_shfl']} kernels use SHFL; {s['kernels_spilling']} use local "
          f"memory (LDL/STL: a spill or a local array; ptxas -warn-spills tells which); "
          f"registers <= {s['max_registers']}; min occupancy {s['min_occupancy']:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
