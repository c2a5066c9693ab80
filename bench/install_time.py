"""How long `pip install .` takes, with and without the CUDA plugin (issue 43: a laptop's
install under 90 s on 2 cores). Each row builds a wheel from a fresh copy of this
checkout (no build folder, no compiler cache) and reports its wall time and the CPU
seconds of the build's processes: on a busy machine the wall time grows and the CPU
time does not, and on an idle 2-core machine the wall time is about half the CPU time
(the build runs two compile jobs at a time).

    python bench/install_time.py                 # every row
    python bench/install_time.py --only off,nogpu

Rows: `off` (GPUARR_CUDA=OFF: the core only), `nogpu` (the default on a machine with
the CUDA toolkit and no GPU visible: PTX only), `onegpu` (what a machine with one H100
builds: CUDAARCHS=90-real), `portable` (GPUARR_CUDA_PORTABLE=ON: a class's wheel).
Needs the CUDA toolkit for all but `off`; `pip wheel --no-build-isolation`, so the
build requirements (scikit-build-core, numpy) must be installed.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ROWS = {
    "off": ("GPUARR_CUDA=OFF: the core only", {"GPUARR_CUDA": "OFF"}),
    "nogpu": ("default, no GPU visible: PTX only", {"GPUARR_CUDA_IGNORE_GPUS": "1"}),
    "onegpu": ("one GPU's architecture (CUDAARCHS=90-real)", {"CUDAARCHS": "90-real"}),
    "portable": ("GPUARR_CUDA_PORTABLE=ON: sm_75/80/90/100/120 + PTX",
                 {"GPUARR_CUDA_PORTABLE": "ON"}),
}


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def build(env_extra):
    """(wall s, CPU s) of `pip wheel .` from a fresh copy of the tracked files."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                               capture_output=True).stdout.decode().split("\0")
        for f in filter(None, files):
            os.makedirs(os.path.dirname(os.path.join(src, f)) or src, exist_ok=True)
            if os.path.isfile(os.path.join(ROOT, f)):
                shutil.copy2(os.path.join(ROOT, f), os.path.join(src, f))
        env = {k: v for k, v in os.environ.items()
               if k not in ("CUDAARCHS", "GPUARR_CUDA", "GPUARR_CUDA_PORTABLE",
                            "CCACHE_DIR") and not k.startswith("CMAKE_")}
        env["CCACHE_DISABLE"] = "1"  # what a user's first install pays
        if env_extra.pop("GPUARR_CUDA_IGNORE_GPUS", None):
            env["SKBUILD_CMAKE_DEFINE"] = "GPUARR_CUDA_IGNORE_GPUS=ON"
        env.update(env_extra)
        cpu0, t0 = children_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", ".", "-w", "dist",
                        "--no-build-isolation", "--no-deps"], cwd=src, env=env, check=True)
        return time.perf_counter() - t0, children_cpu() - cpu0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(ROWS), help="rows, comma-separated")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"`pip wheel .` from a fresh copy, {os.cpu_count()} cores, load average "
          f"{load:.1f} when it began\n")
    print("| build | wall s | CPU s |")
    print("| --- | ---: | ---: |")
    for name in args.only.split(","):
        what, env = ROWS[name]
        wall, cpu = build(dict(env))
        print(f"| {what} | {wall:.0f} | {cpu:.0f} |", flush=True)


if __name__ == "__main__":
    main()
