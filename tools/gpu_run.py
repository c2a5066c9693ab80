#!/usr/bin/env python3
"""The prepared GPU run: build, test, check and measure gpuarr on a machine with an
NVIDIA GPU, within a deadline, leaving at most 8 files in one folder.

    tools/gpu_run.sh [--out DIR] [--deadline SECONDS] [--steps a,b,...]
    tools/gpu_run.sh --rehearse [--prebuilt]      # the same steps on emulated CUDA
    python tools/gpu_run.py --check DIR           # did a rehearsal pass? (CI)
    python tools/gpu_run.py --collect DIR         # results -> bench/results/<date>-<gpu>/
    python tools/gpu_run.py --prepare             # before the visit: the plugin, to carry

Steps, in order (each with its own time limit, cut to what the deadline leaves; a step
that cannot get its minimum is skipped with a note, never run over the deadline):

  detect       nvidia-smi (name, compute capability -> CUDAARCHS, driver), nvcc, cmake,
               ninja, compute-sanitizer, cuobjdump, and the Python packages present
  build        tools/dev-build.sh for the GPU found (GPUARR_CUDA=ON, no emulated
               plugin, warnings not errors); no network: nothing is installed. If the
               configure step itself fails, pip --no-build-isolation --no-deps into a
               folder of build/ instead (the machine's scikit-build-core)
  smoke        import gpuarr, gpuarr.info(), one operation on gpu(0): is it the GPU?
  cuda_report  tools/cuda_report.py --kernels on the plugin just built (static, no GPU;
               it runs on a spare core beside the tests)
  tests        the suite on the real GPU (pytest-xdist and pytest-timeout when present),
               reported test by test as it runs (tools/gpu_run_report.py)
  bench        bench/gpu.py with CuPy and PyTorch side by side, as JSON and markdown
  sanitizer    compute-sanitizer memcheck, racecheck and synccheck on a short selection

Files left in the output folder ($OUT, else --out, else build/gpu-run/out):
  summary.md        every step's status and time, failures, skip reasons, the bench table
  tests.jsonl       one line per test (tools/gpu_run_report.py)
  bench.json        bench/gpu.py's records
  bench.md          the same, gpuarr, CuPy and PyTorch side by side
  sanitizer.txt     the three tools' output (or why they could not run)
  build.log         the build's output (its last lines when long)
  cuda_report.txt   the static report of the plugin's sm_XX code
  run.log           the console of every step (their tails when long)

The exit status is 0 whatever happens (the summary says what failed), except for
--check, which is how CI fails a broken rehearsal.

--rehearse runs the same steps here with no GPU: gpuarr's emulated CUDA devices
(GPUARR_CUDA_EMULATE), a few small tests, bench/gpu.py --quick; the sanitizer and the
CuPy/PyTorch comparison are reported as absent. --prebuilt skips the build and uses the
gpuarr that Python imports as it is (CI's installed wheel).
"""
from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools")
sys.path.insert(0, TOOLS)

import gpu_run_report  # noqa: E402

STEPS = ["detect", "build", "smoke", "cuda_report", "tests", "bench", "sanitizer"]

# Seconds: (most, least) per step on the GPU machine. The least is what the step needs
# to be worth starting; the sum of the most is over the deadline on purpose: steps that
# finish early leave their time to the later ones.
LIMITS = {
    "detect": (30, 5),
    "build": (300, 60),  # sm_90 only, 16 cores: the CUDA plugin's k_elementwise.cu leads
    "smoke": (60, 10),
    "cuda_report": (150, 10),  # cuobjdump + parsing: ~1 CPU-minute, beside the tests
    "tests": (210, 40),
    "bench": (160, 40),
    "sanitizer": (150, 30),
}
RESERVE = 10  # seconds kept back for the summary
DEADLINE = 540  # 9 minutes: the lead's command gets timeout_s=600
REHEARSE_DEADLINE = 420

# The suite on the GPU, in this order (xdist hands out tests in collection order, so
# these come first when time runs short): the CUDA files, the textbook, the core, then
# everything else. pytest drops the duplicates that `tests` adds back.
GPU_TESTS = ["tests/cuda/test_cuda_kernels.py", "tests/cuda/test_cuda_sort.py",
             "tests/cuda/test_cuda_budgets.py", "tests/cuda/test_cuda_graphs.py",
             "tests/cuda/test_cuda_budgets_index.py",
             "tests/cuda/test_cuda_allocator.py", "tests/cuda/test_cuda_copies.py",
             "tests/cuda/test_cuda_plugin.py", "tests/cuda/test_cuda_unaligned.py",
             "tests/textbook/test_textbook_pytorch.py",
             "tests/textbook/test_textbook_gluon.py",
             "tests/textbook/test_textbook_mxnet_np.py",
             "tests/textbook/test_textbook_exercises.py",
             "tests/textbook/test_textbook_checklist.py",
             "tests/core/test_array_basics.py", "tests/core/test_elementwise.py",
             "tests/core/test_indexing.py", "tests/core/test_reduce.py",
             "tests/core/test_sorting.py", "tests/core/test_linalg.py",
             "tests/core/test_linalg_lapack.py", "tests/core/test_fft.py",
             "tests/core/test_matmul.py", "tests/devices/test_dlpack.py",
             "tests/devices/test_async_ordering.py",
             "tests/devices/test_device_twins.py", "tests"]
# the notebooks need nbclient and a kernel, and take minutes; the rest of the suite runs
GPU_TESTS_IGNORE = ["tests/textbook/test_notebooks.py"]
# On emulated CUDA the rehearsal runs a few quick tests: it checks the plumbing (the
# report, the limits), not gpuarr (CI's emulated suite does that).
REHEARSE_TESTS = ["tests/cuda/test_cuda_kernels.py", "-k",
                  "uniform_same_seed or full_reductions_of_odd_sizes or cumsum_and_cumprod"]
PER_TEST_TIMEOUT = 120  # pytest-timeout: a test that hangs on the GPU ends its worker

# compute-sanitizer: tests with no subprocess (the tool follows this process only) that
# launch the hand-written kernels (reductions, scans, sort, gathers, elementwise)
SANITIZER_TESTS = {
    "memcheck": ["tests/cuda/test_cuda_kernels.py", "tests/cuda/test_cuda_sort.py", "-k",
                 "not fills_the_device and not second_device"],
    "racecheck": ["tests/cuda/test_cuda_kernels.py", "tests/cuda/test_cuda_sort.py", "-k",
                  "reduction or cumsum or nonzero or argmax or tiles or merge"],
    "synccheck": ["tests/cuda/test_cuda_kernels.py", "tests/cuda/test_cuda_sort.py", "-k",
                  "reduction or cumsum or nonzero or tiles or merge"],
}
SANITIZER_ERROR_EXIT = 86  # --error-exitcode: the tool found errors
SANITIZER_SHARE = {"memcheck": 0.45, "racecheck": 0.35, "synccheck": 0.2}
# what compute-sanitizer prints when it cannot work on this machine (seen on gVisor:
# "Device not supported", then error 999)
SANITIZER_CANNOT = re.compile(r"Device not supported|not supported on this|Unable to|"
                              r"error 999|Target application terminated before first "
                              r"instrumented API call|Failed to initialize", re.I)

LOG_TAIL = 300  # lines of a step's output kept in run.log
BUILD_TAIL = 400


class Run:
    """The state of one run: where files go, the deadline, every step's outcome."""

    def __init__(self, args):
        self.args = args
        self.rehearse = args.rehearse
        self.t0 = time.monotonic()
        default = REHEARSE_DEADLINE if self.rehearse else DEADLINE
        self.deadline = self.t0 + (args.deadline if args.deadline else default)
        self.out = os.path.abspath(args.out or os.environ.get("OUT") or
                                   os.path.join(ROOT, "build", "gpu-run", "out"))
        self.work = os.path.join(ROOT, "build", "gpu-run")
        os.makedirs(self.out, exist_ok=True)
        os.makedirs(self.work, exist_ok=True)
        self.steps: Dict[str, Dict[str, object]] = {}
        self.facts: Dict[str, object] = {}
        self.py = sys.executable
        self.env = self._base_env()
        self.pythonpath: List[str] = [] if args.prebuilt else [os.path.join(ROOT, "python")]
        self.runlog = open(self.path("run.log"), "w", encoding="utf-8")
        self.plugin: Optional[str] = None
        self.gpu_ok = False
        self.bg = None  # (step, job, started, limit, done(rc, out, timed_out))

    def path(self, name):
        return os.path.join(self.out, name)

    def _base_env(self):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # The chosen Python's folder first: pip's cmake and ninja live there
        env["PATH"] = os.pathsep.join([os.path.dirname(self.py), env.get("PATH", "")])
        for k in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE", "GPUARR_STRICT_SKIPS"):
            env.pop(k, None)
        if self.rehearse:
            env["GPUARR_CUDA_EMULATE"] = "2"
            env["GPUARR_CUDA_EMULATE_WATCHDOG"] = "120"
        return env

    def child_env(self, extra=None):
        env = dict(self.env)
        env["PYTHONPATH"] = os.pathsep.join(self.pythonpath + [TOOLS] +
                                            ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                                             else []))
        env.update(extra or {})
        return env

    def elapsed(self):
        return time.monotonic() - self.t0

    def left(self):
        return self.deadline - time.monotonic() - RESERVE

    def log(self, text=""):
        print(text, flush=True)
        self.runlog.write(text + "\n")
        self.runlog.flush()

    def budget(self, step) -> Optional[float]:
        most, least = LIMITS[step]
        left = self.left()
        if left < least:
            return None
        return min(most, left)

    def start(self, cmd, *, log_name, env=None, cwd=ROOT):
        """Start cmd in its own process group, its output going to
        build/gpu-run/<log_name>; finish() waits for it."""
        self.log(f"$ {' '.join(cmd)}")
        logf = os.path.join(self.work, log_name)
        f = open(logf, "w", encoding="utf-8", errors="replace")
        try:
            p = subprocess.Popen(cmd, cwd=cwd, env=env or self.child_env(), stdout=f,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            f.write(f"could not start: {e}\n")
            p = None
        return p, f, logf

    def finish(self, job, limit) -> Tuple[int, str, bool]:
        """Wait at most `limit` seconds for a started job (then end its process group):
        (returncode, output, timed_out)."""
        p, f, logf = job
        timed_out = False
        if p is None:
            rc = 127
        else:
            try:
                rc = p.wait(timeout=max(0.0, limit))
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(p)
                try:
                    rc = p.wait(timeout=10)
                except subprocess.TimeoutExpired:  # stuck in the driver: leave it
                    rc = -9
        f.close()
        return rc, open(logf, encoding="utf-8", errors="replace").read(), timed_out

    def run(self, cmd, limit, *, log_name="last.log", env=None) -> Tuple[int, str, bool]:
        """Run cmd for at most `limit` seconds: (returncode, output, timed_out)."""
        self.log(f"(limit {limit:.0f} s)")
        return self.finish(self.start(cmd, log_name=log_name, env=env), limit)

    def join_background(self):
        """Wait for the step started in the background (the static report runs beside
        the tests: it needs no GPU, only a core) within its limit and the deadline."""
        if self.bg is None:
            return
        step, job, t, limit, done = self.bg
        self.bg = None
        rc, out, timed_out = self.finish(job, min(limit - (time.monotonic() - t), self.left()))
        status, note = done(rc, out, timed_out)
        self.record(step, status, time.monotonic() - t, note + " (beside the tests)")

    def record(self, step, status, seconds, note=""):
        self.steps[step] = {"status": status, "seconds": round(seconds, 1), "note": note}
        self.log(f"=== {step}: {status} in {seconds:.1f} s{': ' + note if note else ''}")

    def tail_to_log(self, out, lines=LOG_TAIL):
        got = out.splitlines()
        if len(got) > lines:
            self.log(f"[... {len(got) - lines} lines before; the whole output is in "
                     f"build/gpu-run/]")
        for ln in got[-lines:]:
            self.log(ln)


def _kill_group(p):
    """End the process group this run started (pytest and its workers, the sanitizer
    and its target): TERM, up to 5 s for the leader to go, then KILL for whatever of
    the group is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        if sig == signal.SIGTERM:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


def _which(name, extra_dirs=(), path=None):
    """`name` on `path` (default: this process's PATH), else in one of extra_dirs
    (globs allowed)."""
    found = shutil.which(name, path=path)
    if found:
        return found
    for d in extra_dirs:
        for cand in glob.glob(os.path.join(d, name)):
            if os.access(cand, os.X_OK):
                return cand
    return None


def _version_of(dist):
    import importlib.metadata as md
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def _capture(cmd, timeout=20) -> Tuple[int, str]:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, (r.stdout + r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, str(e)


# --- steps --------------------------------------------------------------------------------


def step_detect(r: Run, limit):
    f = r.facts
    f["python"] = f"{platform.python_version()} ({r.py})"
    f["machine"] = f"{platform.machine()}, {os.cpu_count()} CPUs, kernel {platform.release()}"
    path = r.env["PATH"]  # the chosen Python's folder first (pip's cmake and ninja)
    smi = _which("nvidia-smi", ["/usr/local/nvidia/bin", "/usr/bin"], path)
    gpus = []
    if smi:
        rc, out = _capture([smi, "--query-gpu=name,compute_cap,driver_version,memory.total",
                            "--format=csv,noheader"])
        if rc == 0:
            for line in out.splitlines():
                parts = [p.strip() for p in line.split(",")]
                if len(parts) >= 4:
                    gpus.append({"name": parts[0], "cc": parts[1], "driver": parts[2],
                                 "memory": parts[3]})
        else:
            f["nvidia-smi"] = f"failed: {out[-300:]}"
        rc, full = _capture([smi])
        r.log(full)
    f["gpus"] = gpus
    caps = sorted({g["cc"].replace(".", "") for g in gpus if re.fullmatch(r"\d+\.\d+", g["cc"])})
    if caps:
        f["CUDAARCHS"] = ";".join(f"{c}-real" for c in caps)
        f["arch"] = f"sm_{caps[0]}"
    elif not r.rehearse:
        # the lent machines are Hopper: build for it rather than for every architecture
        f["CUDAARCHS"] = "90-real"
        f["arch"] = "sm_90"
        f["note_arch"] = "nvidia-smi gave no compute capability: built for sm_90"
    cuda_dirs = [os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin"),
                 "/usr/local/cuda/bin", "/usr/local/cuda-*/bin", "/opt/nvidia/*/bin"]
    nvcc = _which("nvcc", cuda_dirs, path)
    f["nvcc"] = nvcc
    if nvcc:
        r.env["PATH"] = os.pathsep.join([os.path.dirname(nvcc), r.env["PATH"]])
        # the toolkit's lib64 is one of the places the plugin looks for cuBLAS,
        # cuSOLVER and cuFFT (csrc/cuda/ga_cublas_paths.h)
        r.env.setdefault("CUDA_HOME", os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
        rc, out = _capture([nvcc, "--version"])
        m = re.search(r"release ([\d.]+), V([\d.]+)", out)
        f["nvcc_version"] = m.group(2) if m else out[-200:]
    nvcc_dir = os.path.dirname(nvcc) if nvcc else "/usr/local/cuda/bin"
    san_dirs = [nvcc_dir, os.path.join(os.path.dirname(nvcc_dir), "compute-sanitizer"),
                "/usr/local/cuda/compute-sanitizer", "/opt/nvidia/*/compute-sanitizer"]
    for tool, dirs in (("compute-sanitizer", san_dirs), ("cuobjdump", [nvcc_dir]),
                       ("nvdisasm", [nvcc_dir]), ("cmake", []), ("ninja", [])):
        f[tool] = _which(tool, dirs, r.env["PATH"])
    for tool in ("cmake", "ninja"):
        if f[tool]:
            f[tool + "_version"] = (_capture([f[tool], "--version"])[1] + "\n").splitlines()[0][:80]
    pk = {}
    for dist in ("numpy", "scikit-build-core", "cmake", "ninja", "pytest", "pytest-xdist",
                 "pytest-timeout", "hypothesis", "cupy-cuda13x", "cupy-cuda12x", "torch",
                 "nvidia-cublas", "nvidia-cublas-cu12"):
        v = _version_of(dist)
        if v:
            pk[dist] = v
    f["packages"] = pk
    for k in ("gpus", "CUDAARCHS", "nvcc", "nvcc_version", "compute-sanitizer", "cuobjdump",
              "cmake", "ninja", "packages"):
        r.log(f"{k}: {f.get(k)}")
    if not r.rehearse and not gpus:
        return "FAILED", "nvidia-smi shows no GPU: the GPU steps will say what they find"
    if r.rehearse:
        return "ok", "rehearsal: emulated CUDA" + (f", {len(gpus)} GPU(s) seen" if gpus else "")
    g = gpus[0]
    return "ok", f"{g['name']}, sm_{g['cc'].replace('.', '')}, driver {g['driver']}, {g['memory']}"


def step_build(r: Run, limit):
    if r.args.prebuilt:
        rc, out = _capture([r.py, "-c", "import gpuarr; print(gpuarr.__file__)"])
        _write_build_log(r, f"--prebuilt: no build; gpuarr imported from {out}\n")
        return ("ok" if rc == 0 else "FAILED"), f"prebuilt: {out.splitlines()[-1] if out else '?'}"
    env = r.child_env({"GPUARR_DEV_PYTHON": r.py,
                       "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)})
    carried, why = False, ""
    if r.rehearse:
        # build/dev with dev-build.sh's defaults: the developer's own build, so the
        # rehearsal's build is incremental (seconds)
        env.update(GPUARR_CUDA="OFF")
        env.pop("GPUARR_DEV_SUFFIX", None)
        extra = ["-DGPUARR_CUDA_EMU=ON"]
    else:
        # warnings are not errors on a machine whose compilers CI never saw
        env.update(GPUARR_CUDA="ON", GPUARR_DEV_SUFFIX="gpu", GPUARR_WERROR="OFF")
        if r.facts.get("CUDAARCHS"):
            env["CUDAARCHS"] = str(r.facts["CUDAARCHS"])
        extra = ["-DGPUARR_CUDA_EMU=OFF"]
        carried, why = carried_plugin(r.facts.get("CUDAARCHS"))
        r.log(f"carried plugin ({CARRY}): {why}")
        if carried:
            env["GPUARR_CUDA"] = "OFF"  # the core only: the plugin came built
    if not (r.facts.get("ninja") and r.facts.get("cmake")):
        rc, out, timed_out = 127, "tools/dev-build.sh needs cmake and ninja on the PATH", False
    else:
        rc, out, timed_out = r.run(["bash", "tools/dev-build.sh", *extra], limit,
                                   log_name="build.log", env=env)
    log = out
    if not r.rehearse and carried and rc == 0:
        for name in ("libgpuarr_cuda.so", "_build_config.py"):
            shutil.copyfile(os.path.join(ROOT, CARRY, name),
                            os.path.join(ROOT, "python", "gpuarr", name))
        log += f"\n--- the CUDA plugin and its _build_config.py copied from {CARRY}: {why}\n"
    bdir = os.path.join(ROOT, "build", "dev-gpu" if not r.rehearse else "dev")
    if rc != 0 and not timed_out and not os.path.exists(os.path.join(bdir, "build.ninja")):
        # the configure step failed (no ninja, an old cmake): scikit-build-core instead
        left = r.left() - sum(LIMITS[s][1] for s in ("smoke", "tests"))
        if _version_of("scikit-build-core") and left > 60:
            site = os.path.join(r.work, "site")
            shutil.rmtree(site, ignore_errors=True)
            env2 = dict(env, CMAKE_ARGS=" ".join(extra))
            rc, out2, timed_out = r.run(
                [r.py, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                 "--no-index", "--target", site, "."], left, log_name="build-pip.log", env=env2)
            log += "\n--- dev-build.sh failed to configure; pip --no-build-isolation:\n" + out2
            if rc == 0:
                r.pythonpath = [site]
    _write_build_log(r, log)
    status = "ok" if rc == 0 else ("TIMED OUT" if timed_out else "FAILED")
    ninja_steps = re.findall(r"^\[(\d+)/(\d+)\]", log, re.M)
    note = f"{ninja_steps[-1][0]}/{ninja_steps[-1][1]} build steps" if ninja_steps else ""
    if rc != 0 and not timed_out:
        errs = [ln for ln in log.splitlines()
                if re.search(r"error:|error \w+:|CMake Error|^FAILED:|needs cmake", ln)]
        note = (note + "; " if note else "") + (errs[0][:200] if errs else f"exit {rc}")
    if not r.rehearse and carried:
        note = (note + "; " if note else "") + f"the core only: CUDA plugin carried ({why})"
    for d in r.pythonpath:
        cand = os.path.join(d, "gpuarr", "libgpuarr_cuda.so")
        if os.path.exists(cand):
            r.plugin = cand
    return status, note


# --- a CUDA plugin built before the visit (--prepare), carried with the call ------------
#
# The plugin for one architecture is minutes of CPU time in two files (k_elementwise.cu,
# k_reduce.cu: ~2 CPU-minutes each on this project's machines), a third of the visit's
# 9 minutes. Built here before the visit from the same sources and carried (`carry`), it
# leaves the GPU machine only the core to compile; the stamp's hash of the sources must
# match the tree there, else the plugin is built there as usual.
CARRY = "build/gpu-carry"
SOURCES = ("csrc", "cmake", "CMakeLists.txt")


def source_hash() -> str:
    import hashlib
    h = hashlib.sha256()
    for top in SOURCES:
        path = os.path.join(ROOT, top)
        files = [path] if os.path.isfile(path) else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs)
        for f in files:
            rel = os.path.relpath(f, ROOT)
            if "__pycache__" in rel:
                continue
            h.update(rel.encode() + b"\0" + open(f, "rb").read() + b"\0")
    return h.hexdigest()


def carried_plugin(archs) -> Tuple[bool, str]:
    """(use it, why) for the plugin in CARRY."""
    try:
        stamp = json.load(open(os.path.join(ROOT, CARRY, "stamp.json"), encoding="utf-8"))
    except (OSError, ValueError):
        return False, "none carried: the plugin is built here"
    if not os.path.exists(os.path.join(ROOT, CARRY, "libgpuarr_cuda.so")):
        return False, "stamp without the plugin: built here"
    if stamp.get("sources") != source_hash():
        return False, "its sources differ from this tree's: built here"
    if archs and stamp.get("CUDAARCHS") != archs:
        return False, f"built for {stamp.get('CUDAARCHS')}, this GPU needs {archs}: built here"
    return True, f"nvcc {stamp.get('nvcc')}, {stamp.get('CUDAARCHS')}, sources match"


def prepare(archs="90-real") -> int:
    """Build the CUDA plugin here for `archs` (with -Werror, as CI) and stage it in
    CARRY with its stamp, for `carry` in the GPU visit's call."""
    env = dict(os.environ, GPUARR_DEV_SUFFIX="gpucarry", GPUARR_CUDA="ON", CUDAARCHS=archs,
               GPUARR_DEV_PYTHON=sys.executable)
    print(f"building the CUDA plugin for {archs} in build/dev-gpucarry (minutes) ...")
    r = subprocess.run(["bash", "tools/dev-build.sh", "-DGPUARR_CUDA_EMU=OFF",
                        "-DGPUARR_DEV_COPY=OFF"], cwd=ROOT, env=env)
    if r.returncode != 0:
        print("the build failed: nothing staged")
        return 1
    dest = os.path.join(ROOT, CARRY)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    built = os.path.join(ROOT, "build", "dev-gpucarry")
    shutil.copyfile(os.path.join(built, "csrc", "cuda", "libgpuarr_cuda.so"),
                    os.path.join(dest, "libgpuarr_cuda.so"))
    shutil.copyfile(os.path.join(built, "_build_config.py"),
                    os.path.join(dest, "_build_config.py"))
    nvcc = re.search(r'CUDA_COMPILER_VERSION = "([^"]*)"',
                     open(os.path.join(dest, "_build_config.py")).read())
    with open(os.path.join(dest, "stamp.json"), "w", encoding="utf-8") as f:
        json.dump({"sources": source_hash(), "CUDAARCHS": archs,
                   "nvcc": nvcc.group(1) if nvcc else "?"}, f)
    size = os.path.getsize(os.path.join(dest, "libgpuarr_cuda.so")) / 2**20
    print(f"staged in {CARRY} ({size:.1f} MiB): name it in the call's carry")
    return 0


def _write_build_log(r: Run, text):
    lines = text.splitlines()
    head = []
    if len(lines) > BUILD_TAIL:
        head = [f"[{len(lines) - BUILD_TAIL} earlier lines left out; the lines that name "
                "errors or warnings among them:]"]
        head += [ln for ln in lines[:-BUILD_TAIL] if re.search(r"error|warning", ln, re.I)][:100]
        head.append("[... the last lines:]")
    with open(r.path("build.log"), "w", encoding="utf-8") as f:
        f.write("\n".join(head + lines[-BUILD_TAIL:]) + "\n")


SMOKE = r"""
import sys, numpy as np, gpuarr
from gpuarr import _core
gpuarr.info()
mode, reason = _core._gpu_mode()
print("MODE", mode, gpuarr.num_gpus())
if gpuarr.num_gpus() == 0:
    sys.exit(3)
g = gpuarr.gpu(0)
x = gpuarr.arange(1000, dtype="float32", device=g)
s = float((x * 2).sum())
a = np.random.default_rng(0).random((64, 64), dtype=np.float32)
m = (gpuarr.asarray(a, device=g) @ gpuarr.asarray(a, device=g)).numpy()
err = float(np.abs(m - a @ a).max())
print("SUM", s, "GEMM_ERR", err)
import os
plugin = os.path.join(os.path.dirname(_core.__file__), "libgpuarr_cuda.so")
print("PLUGIN", plugin if os.path.exists(plugin) else "")
# issue 29, item 7: does the device contract a*b - c*d into an FMA in complex products?
# Then imag(z * conj(z)) is not exactly 0 as it is on the CPU (NumPy, gpuarr's CPU).
z = np.random.default_rng(1).standard_normal(4096).astype(np.float32).view(np.complex64)
zg = gpuarr.asarray(z, device=g)
print("FMA_IMAG_NONZERO", int(np.count_nonzero((zg * gpuarr.conj(zg)).numpy().imag)), z.size)
sys.exit(0 if s == 999000.0 and err < 1e-3 else 4)
"""


def step_smoke(r: Run, limit):
    rc, out, timed_out = r.run([r.py, "-c", SMOKE], limit, log_name="smoke.log")
    r.tail_to_log(out, 80)
    mode = re.search(r"^MODE (\S+) (\d+)", out, re.M)
    plugin = re.search(r"^PLUGIN (\S*)", out, re.M)
    if plugin and plugin.group(1):
        r.plugin = plugin.group(1)
    want = "emulated" if r.rehearse else "cuda"
    r.facts["gpu_mode"] = mode.group(1) if mode else "?"
    why = re.search(r"why CUDA is not in use: (.*)", out)
    if timed_out:
        return "TIMED OUT", "the first GPU operation did not return"
    if not mode or mode.group(1) != want:
        return "FAILED", (f"gpuarr's GPU mode is {mode.group(1) if mode else '?'}, not {want}"
                          + (f": {why.group(1)}" if why else "") +
                          "; the GPU steps are skipped")
    if rc != 0:
        return "FAILED", f"a sum or a 64x64 matmul on gpu(0) was wrong or raised (exit {rc})"
    r.gpu_ok = True
    fma = re.search(r"^FMA_IMAG_NONZERO (\d+) (\d+)", out, re.M)
    fma_note = (f"; imag(z * conj(z)) != 0 for {fma.group(1)} of {fma.group(2)} complex64 "
                "(0 on the CPU; issue 29, item 7)" if fma else "")
    return "ok", (f"gpuarr sees {mode.group(2)} {want} GPU(s); sum and GEMM agree with "
                  f"NumPy{fma_note}")


def step_cuda_report(r: Run, limit):
    plugin = r.plugin
    if not plugin:
        return "absent", "no libgpuarr_cuda.so was built (rehearsal without the real plugin)"
    arch = str(r.facts.get("arch") or "sm_90")
    sys.path.insert(0, TOOLS)
    import cuda_report
    if arch not in cuda_report.LIMITS:
        arch = "sm_90"
    if r.facts.get("cuobjdump") is None and cuda_report.find_tool("cuobjdump") is None:
        return "absent", "cuobjdump not found (toolkit or pip install nvidia-cuda-cuobjdump)"
    job = r.start([r.py, "tools/cuda_report.py", plugin, "--arch", arch, "--kernels"],
                  log_name="cuda_report.log")

    def done(rc, out, timed_out):
        with open(r.path("cuda_report.txt"), "w", encoding="utf-8") as f:
            f.write(out)
        last = out.strip().splitlines()[-1] if out.strip() else ""
        r.log(last)
        if timed_out:
            return "TIMED OUT", f"after {limit:.0f} s"
        return ("ok" if rc == 0 else "FAILED"), last[:300]
    r.bg = ("cuda_report", job, time.monotonic(), limit, done)
    return "started", ""


def _pytest_base(r: Run):
    cmd = [r.py, "-m", "pytest", "-p", "no:cacheprovider", "-p", "gpu_run_report", "-q",
           "-rfE"]
    return cmd


def step_tests(r: Run, limit):
    if not r.gpu_ok:
        return "skipped", "no GPU in gpuarr (see smoke)"
    report = r.path("tests.jsonl")
    open(report, "w").close()
    cmd = _pytest_base(r)
    pk = r.facts.get("packages", {})
    if r.rehearse:
        cmd += REHEARSE_TESTS
    else:
        # a file another branch renamed must not stop the run ("file not found")
        cmd += [t for t in GPU_TESTS if os.path.exists(os.path.join(ROOT, t))]
        cmd += [f"--ignore={p}" for p in GPU_TESTS_IGNORE]
        if "pytest-xdist" in pk:
            # a CUDA context per worker (~0.5 GB each); half the cores: the tests' own
            # CPU threads and the GPU's host side share the rest
            cmd += ["-n", str(max(2, min(8, (os.cpu_count() or 4) // 2)))]
        if "pytest-timeout" in pk:
            cmd += [f"--timeout={PER_TEST_TIMEOUT}", "--timeout-method=thread"]
    rc, out, timed_out = r.run(cmd, limit, log_name="tests.log",
                               env=r.child_env({"GPU_RUN_REPORT": report}))
    r.tail_to_log(out, 150)
    rep = gpu_run_report.read(report, os.path.join(ROOT, "tests", "conftest.py"))
    r.facts["tests"] = rep
    c = rep["counts"]
    counts = ", ".join(f"{n} {k}" for k, n in sorted(c.items())) or "no test reported"
    if timed_out:
        return "TIMED OUT", (f"{counts}; stopped at {limit:.0f} s, still running: "
                             f"{', '.join(rep['running'][:5]) or '?'}")
    bad = c.get("failed", 0) + c.get("error", 0) + c.get("collection error", 0)
    if rc not in (0, 1) and not bad:
        return "FAILED", f"pytest exit {rc}: {counts}; {out.strip().splitlines()[-1:]}"
    return ("ok" if bad == 0 and rc == 0 else "FAILED"), counts


def step_bench(r: Run, limit):
    if not r.gpu_ok:
        return "skipped", "no GPU in gpuarr (see smoke)"
    cmd = [r.py, "bench/gpu.py", "--json", r.path("bench.json"), "--markdown",
           r.path("bench.md"), "--budget", f"{max(10.0, limit - 25):.0f}"]
    if r.rehearse:
        cmd += ["--allow-simulated", "--quick"]
    else:
        cmd += ["--rounds", "3"]
    rc, out, timed_out = r.run(cmd, limit, log_name="bench.log")
    r.tail_to_log(out, 120)
    if timed_out:
        return "TIMED OUT", "bench.json/bench.md hold the sections that finished"
    notes = []
    if r.rehearse:
        notes.append("CuPy/PyTorch: absent (rehearsal: emulated GPU, CPU numbers)")
    else:
        peers = [ln for ln in out.splitlines() if "not installed" in ln or "without CUDA" in ln]
        notes += [p.split("  ")[-1].strip() for p in peers[:2]]
    if "skipped: the --budget" in out:
        notes.append("the budget ran out: later rows left out")
    fails = [ln.strip() for ln in out.splitlines() if "FAILED" in ln]
    notes += fails[:3]
    return ("ok" if rc == 0 else "FAILED"), "; ".join(notes)


def step_sanitizer(r: Run, limit):
    if r.rehearse:
        _write_sanitizer(r, ["rehearsal: no compute-sanitizer on emulated CUDA (it needs "
                             "a GPU). On the GPU machine this step runs:"] +
                         [f"  compute-sanitizer --tool {t} ... pytest {' '.join(sel)}"
                          for t, sel in SANITIZER_TESTS.items()])
        return "absent", "rehearsal: compute-sanitizer needs a GPU"
    tool = r.facts.get("compute-sanitizer")
    if not tool:
        _write_sanitizer(r, ["compute-sanitizer was not found (PATH, next to nvcc, "
                             "/usr/local/cuda/compute-sanitizer)"])
        return "absent", "compute-sanitizer not found"
    if not r.gpu_ok:
        _write_sanitizer(r, ["skipped: gpuarr found no GPU (see the smoke step)"])
        return "skipped", "no GPU in gpuarr"
    parts, notes, states, worst = [], [], [], "ok"
    start = time.monotonic()
    for name, sel in SANITIZER_TESTS.items():
        spent = time.monotonic() - start
        share = limit * SANITIZER_SHARE[name]
        if name == "synccheck":
            share = limit - spent  # what the other two left
        share = min(share, r.left())
        if share < 15:
            parts.append(f"===== {name}: skipped, {share:.0f} s left")
            notes.append(f"{name} skipped")
            continue
        cmd = [tool, "--tool", name, "--error-exitcode", str(SANITIZER_ERROR_EXIT),
               "--print-limit", "30",
               "--target-processes", "application-only", r.py, "-m", "pytest",
               "-p", "no:cacheprovider", "-q", "-x", "-p", "no:xdist", *sel]
        t = time.monotonic()
        rc, out, timed_out = r.run(cmd, share, log_name=f"sanitizer-{name}.log")
        took = time.monotonic() - t
        state, summary = sanitizer_state(rc, out, timed_out)
        states.append(state)
        notes.append(f"{name}: {state}" + (f" ({summary[-1]})" if summary else ""))
        if state == "ERRORS FOUND":
            worst = "FAILED"
        lines = out.splitlines()
        if len(lines) > 400:
            lines = lines[:150] + [f"[... {len(lines) - 350} lines ...]"] + lines[-200:]
        parts.append(f"===== {name}: {state}, {took:.0f} s\n$ {' '.join(cmd)}\n" +
                     "\n".join(lines))
    _write_sanitizer(r, parts)
    if states and all(st.startswith("could not attach") for st in states):
        worst = "absent"  # the tool refuses this machine (seen on gVisor GPU machines)
    return worst, "; ".join(notes)


def sanitizer_state(rc, out, timed_out) -> Tuple[str, List[str]]:
    """What one compute-sanitizer run found, and its SUMMARY lines."""
    summary = [ln.strip("= ").strip() for ln in out.splitlines()
               if "SUMMARY" in ln and ln.startswith("=")]
    if SANITIZER_CANNOT.search(out) and not summary:
        return "could not attach on this machine", summary
    if rc == SANITIZER_ERROR_EXIT:
        return "ERRORS FOUND", summary
    if timed_out:
        return "stopped at its time limit (errors printed up to then are below)", summary
    if rc == 0:
        return "clean", summary
    return f"tests failed under the tool (exit {rc})", summary


def _write_sanitizer(r: Run, parts):
    with open(r.path("sanitizer.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")


STEP_FUNCS = {"detect": step_detect, "build": step_build, "smoke": step_smoke,
              "cuda_report": step_cuda_report, "tests": step_tests, "bench": step_bench,
              "sanitizer": step_sanitizer}


# --- the summary ------------------------------------------------------------------------


def summary(r: Run, console=False) -> str:
    """summary.md; with console=True a shorter one for the end of the console (the
    `run` tool's reply keeps the last 12,000 characters): no bench table, 10 failures."""
    f = r.facts
    gpus = f.get("gpus") or []
    what = "REHEARSAL on emulated CUDA (no GPU: CPU numbers)" if r.rehearse else "GPU run"
    gpu = (f"{gpus[0]['name']} (sm_{gpus[0]['cc'].replace('.', '')}, driver "
           f"{gpus[0]['driver']}, {gpus[0]['memory']})" if gpus else "no GPU seen")
    L = [f"# gpuarr GPU run: {what}", "",
         f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
         f"- GPU: {gpu}", f"- machine: {f.get('machine')}",
         f"- python: {f.get('python')}",
         f"- nvcc: {f.get('nvcc_version') or 'not found'}; CUDAARCHS "
         f"{f.get('CUDAARCHS') or '(default)'}; compute-sanitizer "
         f"{'found' if f.get('compute-sanitizer') else 'not found'}",
         "- packages: " + ", ".join(f"{k} {v}" for k, v in (f.get("packages") or {}).items()),
         f"- total {r.elapsed():.0f} s of a {r.deadline - r.t0:.0f} s deadline", "",
         "| step | status | seconds | note |", "| --- | --- | ---: | --- |"]
    for s in STEPS:
        st = r.steps.get(s, {"status": "not run", "seconds": 0, "note": ""})
        note = str(st["note"]).replace("|", "/").replace("\n", " ")
        L.append(f"| {s} | {st['status']} | {st['seconds']} | {note} |")
    rep = f.get("tests")
    if rep:
        L += ["", "## Tests", "",
              "Counts: " + (", ".join(f"{n} {k}" for k, n in sorted(rep["counts"].items()))
                            or "none")]
        if rep["running"]:
            L.append(f"Still running when stopped: {', '.join(rep['running'][:10])}")
        shown, width = (10, 160) if console else (25, 300)
        if rep["failures"]:
            L += ["", f"Failures ({len(rep['failures'])}; messages in tests.jsonl):", ""]
            for fl in rep["failures"][:shown]:
                L.append(f"- `{fl['test']}` ({fl['outcome']}): "
                         f"{gpu_run_report.last_line(fl['message'])[:width]}")
            if len(rep["failures"]) > shown:
                L.append(f"- ... and {len(rep['failures']) - shown} more")
        if rep["skips"] and not console:
            L += ["", "Skip reasons (count):", ""]
            for reason, n in sorted(rep["skips"].items(), key=lambda kv: -kv[1])[:15]:
                flag = " **(not on the allow-list)**" if reason in rep["unlisted_skips"] else ""
                L.append(f"- {n} x {reason[:160]}{flag}")
    if os.path.exists(r.path("bench.md")) and not console:
        table = [ln for ln in open(r.path("bench.md"), encoding="utf-8").read().splitlines()
                 if ln.startswith("|")]
        L += ["", "## Bench (bench.md; gpuarr / cupy: gpuarr's time over CuPy's)", ""] + table
    if os.path.exists(r.path("cuda_report.txt")):
        lines = open(r.path("cuda_report.txt"), encoding="utf-8").read().strip().splitlines()
        if lines:
            L += ["", "## Static report (cuda_report.txt)", "", lines[-1]]
    files = sorted(set(os.listdir(r.out)) | {"summary.md"})
    L += ["", f"Files in the output folder ({len(files)}): {', '.join(files)}"]
    state = {"rehearse": r.rehearse, "gpu": gpus[0]["name"] if gpus else None,
             "date": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}",
             "steps": {k: v["status"] for k, v in r.steps.items()},
             "tests": (rep or {}).get("counts", {}), "seconds": round(r.elapsed(), 1)}
    L += ["", f"<!-- gpu_run: {json.dumps(state)} -->"]
    return "\n".join(L) + "\n"


def _state(out_dir):
    text = open(os.path.join(out_dir, "summary.md"), encoding="utf-8").read()
    m = re.search(r"<!-- gpu_run: (.*) -->", text)
    return text, (json.loads(m.group(1)) if m else None)


# What is committed of a run (bench/README.md): the results, not the logs; of the test
# report, the tests that did not pass.
COLLECT = ["summary.md", "bench.md", "bench.json", "sanitizer.txt", "cuda_report.txt"]


def collect(files_at, dest_root=None) -> int:
    """Copy a GPU run's results into bench/results/<date>-<gpu>/ (printed)."""
    try:
        _, state = _state(files_at)
    except OSError as e:
        print(f"no summary.md in {files_at}: {e}")
        return 1
    if not state:
        print("summary.md has no gpu_run state line")
        return 1
    gpu = re.sub(r"[^a-z0-9]+", "-", (state.get("gpu") or "no-gpu").lower()).strip("-")
    gpu = gpu.removeprefix("nvidia-")
    dest = os.path.join(dest_root or os.path.join(ROOT, "bench", "results"),
                        f"{state.get('date', 'undated')}-{gpu}")
    os.makedirs(dest, exist_ok=True)
    for name in COLLECT:
        src = os.path.join(files_at, name)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(dest, name))
    src = os.path.join(files_at, "tests.jsonl")
    if os.path.exists(src):
        with open(src, encoding="utf-8") as fi, \
                open(os.path.join(dest, "tests-not-passed.jsonl"), "w", encoding="utf-8") as fo:
            for line in fi:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if "start" not in rec and rec.get("outcome") != "passed":
                    fo.write(line)
    print(dest)
    return 0


def check(out_dir) -> int:
    """CI's verdict on a rehearsal: every step ran ok (the sanitizer reported absent),
    no test failed, the expected files and no more than 8."""
    try:
        text, state = _state(out_dir)
    except OSError as e:
        print(f"no summary.md: {e}")
        return 1
    if not state:
        print("summary.md has no gpu_run state line")
        return 1
    problems = []
    for s in STEPS:
        st = state["steps"].get(s)
        want = ("absent",) if s == "sanitizer" and state["rehearse"] else ("ok",)
        if s == "cuda_report":
            want = ("ok", "absent")  # absent: a rehearsal build without the real plugin
        if st not in want:
            problems.append(f"step {s}: {st} (want {' or '.join(want)})")
    tests = state.get("tests", {})
    if tests.get("passed", 0) == 0 or any(tests.get(k) for k in
                                          ("failed", "error", "collection error")):
        problems.append(f"tests: {tests}")
    files = sorted(os.listdir(out_dir))
    want_files = {"summary.md", "tests.jsonl", "bench.json", "bench.md", "sanitizer.txt",
                  "build.log", "run.log"}
    if len(files) > 8 or not want_files <= set(files):
        problems.append(f"files: {files}")
    print(text)
    if problems:
        print("the rehearsal of the GPU run failed:\n  " + "\n  ".join(problems))
        return 1
    print(f"the rehearsal of the GPU run passed in {state['seconds']} s")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rehearse", action="store_true",
                    help="run the steps on emulated CUDA here (no GPU)")
    ap.add_argument("--prebuilt", action="store_true",
                    help="no build: test the gpuarr Python imports as it is")
    ap.add_argument("--out", help="the output folder (default: $OUT, else build/gpu-run/out)")
    ap.add_argument("--deadline", type=float,
                    help=f"seconds for the whole run (default {DEADLINE}; rehearsal "
                         f"{REHEARSE_DEADLINE})")
    ap.add_argument("--steps", help="comma-separated subset of " + ",".join(STEPS) +
                    " (detect, build and smoke always run)")
    ap.add_argument("--check", metavar="DIR", help="check a rehearsal's output; exit 1 if bad")
    ap.add_argument("--prepare", nargs="?", const="90-real", metavar="CUDAARCHS",
                    help="here, before the visit: build the CUDA plugin (default 90-real) "
                         f"into {CARRY}, to carry with the call")
    ap.add_argument("--collect", metavar="DIR",
                    help="copy a GPU run's results (the folder that came back) into "
                         "bench/results/<date>-<gpu>/")
    args = ap.parse_args(argv)
    if args.check:
        return check(args.check)
    if args.collect:
        return collect(args.collect)
    if args.prepare:
        return prepare(args.prepare)
    wanted = set(STEPS) if not args.steps else {s.strip() for s in args.steps.split(",")}
    unknown = wanted - set(STEPS)
    r = Run(args)
    r.log(f"gpu_run: {'rehearsal' if r.rehearse else 'GPU run'}, output in {r.out}, "
          f"deadline {r.deadline - r.t0:.0f} s")
    if unknown:
        r.log(f"unknown steps ignored: {', '.join(sorted(unknown))}")
    try:
        for s in STEPS:
            if s == "bench":
                r.join_background()  # the static report: the bench wants a quiet host
            # detect, build and smoke always run: the others need what they make (on a
            # machine that has the build already, the build is a no-op)
            if s not in wanted and s not in ("detect", "build", "smoke"):
                r.record(s, "not asked", 0)
                continue
            limit = r.budget(s)
            if limit is None:
                r.record(s, "skipped", 0, f"{max(0, r.left()):.0f} s left before the "
                         f"deadline; the step needs at least {LIMITS[s][1]} s")
                continue
            r.log(f"\n=== {s} (at {r.elapsed():.0f} s, limit {limit:.0f} s)")
            t = time.monotonic()
            try:
                status, note = STEP_FUNCS[s](r, limit)
            except Exception as e:  # a bug here must not cost the rest of the run
                status, note = "FAILED", f"gpu_run.py raised {type(e).__name__}: {e}"
            if status != "started":
                r.record(s, status, time.monotonic() - t, note)
    finally:
        try:
            r.join_background()
        except Exception as e:
            r.log(f"the background step: {type(e).__name__}: {e}")
        with open(r.path("summary.md"), "w", encoding="utf-8") as fh:
            fh.write(summary(r))
        r.log("\n" + summary(r, console=True))
        r.runlog.close()
    return 0


if __name__ == "__main__":
    if {"--check", "--collect", "--prepare"} & set(a.split("=")[0] for a in sys.argv):
        sys.exit(main())
    try:
        main()
    except BaseException as e:  # always exit 0 on the GPU machine: the summary says why
        print(f"gpu_run.py: {type(e).__name__}: {e}")
    sys.exit(0)
