#!/usr/bin/env python3
"""Cross-build gpuarr's extension module (_core: the core and the binding, CPU and
simulated GPUs; no CUDA plugin) for another system with one compiler command, for the
checks of other platforms that CI runs on this Linux machine (tools/windows_wine.sh,
tools/linux_aarch64_qemu.sh, tools/macos_build.sh).

A user's build is CMake's (pip install .); this script exists because the target's
Python cannot run here at configure time (CMake's FindPython asks the interpreter),
and because a cross-build needs nothing of CMake but the compile flags, which it reads
from CMakeLists.txt (the warning and per-file options), so the two cannot drift apart.
As in CMake's build, the core (ga_*.c) is compiled without Python's include path.

    tools/cross_build.py --cc "zig cc -target x86_64-windows-gnu" --system windows \\
        --python-include DIR [--python-lib libpython313.a] --out DIR [--werror]
"""
import argparse
import concurrent.futures
import os
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
# the folders of the core library, in CMakeLists.txt's order, then the binding
CORE_LAYERS = ("core", "kernels", "runtime", "ops", "cpu", "sim")


def cmake_flags():
    """The warning flags of every target and the per-file options, from CMakeLists.txt."""
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"target_compile_options\(\$\{target\} PRIVATE(.*?)\)\s*\n", text, re.S)
    warnings = []
    for tok in m[1].split():
        # generator expressions: a GNU/Clang-only flag is ours (every cross compiler
        # here is GCC or Clang: -ffp-contract=off, "One arithmetic" in DESIGN.md);
        # the -Werror switch is --werror's
        g = re.fullmatch(r"\$<\$<C_COMPILER_ID:([^>]*)>:([^>]*)>", tok)
        if g:
            if {"GNU", "Clang"} & set(g[1].split(",")):
                warnings.append(g[2])
        elif not tok.startswith("$<"):
            warnings.append(tok)
    per_file = {}
    m = re.search(r"set_source_files_properties\(([^)]*?)PROPERTIES\s+COMPILE_OPTIONS\s+"
                  r'"([^"]*)"', text)
    for name in m[1].split():
        per_file[pathlib.Path(name).name] = m[2].split(";")
    return warnings, per_file


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", required=True, help="the C compiler command, with its target")
    ap.add_argument("--system", required=True, choices=["linux", "windows", "macos"])
    ap.add_argument("--python-include", required=True, action="append",
                    help="CPython's headers (pyconfig.h's folder too); may repeat")
    ap.add_argument("--python-lib", help="import library of python3XY.dll (Windows)")
    ap.add_argument("--suffix", help="the module's file suffix, e.g. .cp313-win_amd64.pyd")
    ap.add_argument("--out", required=True, help="folder for the module and _build_config.py")
    ap.add_argument("--werror", action="store_true", help="fail on any warning")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()

    cc = shlex.split(args.cc)
    out = pathlib.Path(args.out).resolve()
    obj_dir = out / "obj"
    obj_dir.mkdir(parents=True, exist_ok=True)
    warnings, per_file = cmake_flags()
    common = ["-std=gnu11", "-O3", "-DNDEBUG", *(f"-I{CSRC / d}" for d in CORE_LAYERS),
              *warnings]
    if args.werror:
        common.append("-Werror")
    if args.system != "windows":
        common.append("-fPIC")
    py_inc = [f"-I{d}" for d in args.python_include]

    jobs = []
    sources = [s for d in CORE_LAYERS for s in sorted((CSRC / d).glob("*.c"))]
    binding = sorted((CSRC / "binding").glob("*.c"))
    for src in sources + binding:
        flags = common + per_file.get(src.name, [])
        if src in binding:  # only the binding sees Python.h
            flags = flags + [f"-I{CSRC / 'binding'}"] + py_inc
        obj = obj_dir / (src.stem + ".o")
        jobs.append((src, cc + flags + ["-c", str(src), "-o", str(obj)], obj))

    def compile_one(job):
        src, cmd, _ = job
        r = subprocess.run(cmd, capture_output=True, text=True)
        return src, r.returncode, r.stderr

    failed = False
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for src, rc, err in pool.map(compile_one, jobs):
            if err.strip():
                sys.stderr.write(err)
            if rc != 0:
                print(f"cross_build: {src.name} failed to compile", file=sys.stderr)
                failed = True
    if failed:
        return 1

    suffix = args.suffix or {"windows": ".pyd", "macos": ".so", "linux": ".so"}[args.system]
    module = out / f"_core{suffix}"
    link = cc + ["-shared", "-o", str(module)] + [str(o) for _, _, o in jobs]
    if args.system == "windows":
        if not args.python_lib:
            ap.error("--python-lib is required for Windows")
        link.append(args.python_lib)
    elif args.system == "macos":
        # CPython's symbols come from the interpreter that loads the module
        link += ["-Wl,-undefined,dynamic_lookup"]
    else:
        link += ["-lm", "-lpthread", "-ldl"]
    r = subprocess.run(link, capture_output=True, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode != 0 or (args.werror and r.stderr.strip()):
        print("cross_build: the link failed" if r.returncode else
              "cross_build: the link warned", file=sys.stderr)
        return 1

    # what gpuarr.info() reports (CMake generates it from the same template)
    version = subprocess.run(cc + ["--version"], capture_output=True, text=True).stdout
    values = {"GA_CFG_CUDA_PLUGIN": "not compiled (cross-built without CUDA)",
              "GA_CFG_CUDA_ARCHS": "", "GA_CFG_CUDA_VERSION": "", "GPUARR_CUDA_EMU": "OFF",
              "CMAKE_C_COMPILER_ID": f"{args.cc} ({version.splitlines()[0] if version else '?'})",
              "CMAKE_C_COMPILER_VERSION": "", "CMAKE_BUILD_TYPE": "Release",
              "GPUARR_SANITIZE": ""}
    template = (ROOT / "cmake" / "build_config.py.in").read_text()
    (out / "_build_config.py").write_text(
        re.sub(r"@(\w+)@", lambda m: values.get(m[1], ""), template))
    print(f"cross_build: {module} ({module.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
