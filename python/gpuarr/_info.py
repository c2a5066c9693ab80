"""gpuarr.info(): what this machine and this build of gpuarr have.

The report answers the questions a student asks first: is the CUDA plugin built, which
BLAS does the CPU use, which devices exist, and, when there is no GPU, why not.
"""
import os
import sys

from . import _core

__all__ = ["info"]

_MODE_WORDS = {
    "none": "no GPU in use",
    "cuda": "real CUDA GPUs",
    "simulated": "simulated GPUs (GPUARR_SIMULATE_GPUS)",
    "emulated": "emulated CUDA (GPUARR_CUDA_EMULATE, a test harness)",
}


def _plugin_dir():
    return os.path.dirname(os.path.abspath(_core.__file__))


def _blas_text():
    try:
        value = _core._blas_info()
    except Exception as e:  # a diagnostic must not fail
        return f"unknown ({e})"
    path = value.get("path") if isinstance(value, dict) else None
    if not path:
        return "none loaded: matmul uses gpuarr's portable C GEMM (slower)"
    name = os.path.basename(path)
    where = ("bundled with NumPy" if "numpy.libs" in path else
             "scipy-openblas32 wheel" if "scipy_openblas32" in path else "")
    kind = "OpenBLAS" if "openblas" in name.lower() else "BLAS"
    return f"{kind} {where} ({name})".replace("  ", " ")


def _threads_text():
    n = _core._num_threads()
    for var in ("GPUARR_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var):
            return f"{n} (capped by {var}={os.environ[var]})"
    return f"{n} (one per core; GPUARR_NUM_THREADS caps them)"


def _host_memory():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def _device_lines():
    lines = []
    try:
        n = _core.num_gpus()
    except ValueError:  # a misspelt GPUARR_SIMULATE_GPUS: the reason says how to fix it
        n = 0
    for dev in [_core.cpu()] + [_core.gpu(i) for i in range(n)]:
        try:
            d = _core._device_info(dev)
        except Exception as e:  # pragma: no cover - a diagnostic must not fail
            lines.append(f"  {dev!r:8} unavailable: {e}")
            continue
        kind = d.get("kind", "?")
        total = d.get("total_memory", 0) or (_host_memory() if kind == "CPU" else 0)
        extra = []
        if total:
            extra.append(f"{total / 2**30:.1f} GiB")
        cc = d.get("compute_capability", (0, 0))
        if cc and cc[0]:
            extra.append(f"compute capability {cc[0]}.{cc[1]}")
        tail = f" ({', '.join(extra)})" if extra else ""
        lines.append(f"  {dev!r:8} {kind:14} {d.get('name', '?')}{tail}")
    return n, lines


def _build_lines():
    """Architectures and compilers, from the module CMake writes at build time."""
    try:
        from . import _build_config as cfg
    except ImportError:  # a build that predates it
        return []
    lines = []
    if cfg.CUDA_ARCHITECTURES:
        lines.append(f"  CUDA archs:     {cfg.CUDA_ARCHITECTURES} (nvcc "
                     f"{cfg.CUDA_COMPILER_VERSION})")
    if cfg.CUDA_COMPILER_VERSION:
        lines.append(f"  CUDA toolkit:   {cfg.CUDA_COMPILER_VERSION} (the plugin's runtime; "
                     f"cuBLAS {cfg.CUDA_COMPILER_VERSION.split('.')[0]}.x at run time: "
                     f"{_cublas_text()})")
    lines.append(f"  C compiler:     {cfg.C_COMPILER}, {cfg.BUILD_TYPE}"
                 + (f", sanitizers {cfg.SANITIZE}" if cfg.SANITIZE else ""))
    return lines


def _plain_reason(reason, plugin_built):
    """Why there is no CUDA GPU in a student's words when the recorded reason is a
    loader's message; None when the reason is already plain (the CUDA plugin's own:
    no driver, driver too old, no GPU) or a choice (simulated, emulated)."""
    loader = (reason or "").startswith(
        "the CUDA backend (libgpuarr_cuda.so) could not be loaded")
    if not (loader or not reason):
        return None  # a plugin's own reason (an emulated one too): already plain
    if not plugin_built:
        return ("built without CUDA: nvcc was not found when gpuarr was installed "
                "(or GPUARR_CUDA=OFF); reinstall with nvcc on PATH to use a GPU")
    if loader:
        return ("the CUDA plugin is built but a library it needs is missing: no NVIDIA "
                "driver (libcuda.so.1), or the CUDA runtime was not installed with it")
    return None


def _cublas_text():
    """Which cuBLAS this process loaded, and from where, read from /proc/self/maps:
    the plugin loads it at the first floating GEMM on a GPU, never to report it."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libcublas.so"):
                    return f"loaded {path}"
    except OSError:
        return "unknown (no /proc/self/maps)"
    return "not loaded (it is loaded at the first float GEMM on a CUDA GPU)"


def report():
    """report()

    The text that ``gpuarr.info()`` prints."""
    from . import __version__  # set at the end of gpuarr/__init__, after importing us

    plugin = os.path.join(_plugin_dir(), "libgpuarr_cuda.so")
    emu = os.path.join(_plugin_dir(), "libgpuarr_cuda_emu.so")
    mode, reason = _core._gpu_mode()
    n, dev_lines = _device_lines()
    out = [
        f"gpuarr {__version__}",
        f"  Python {sys.version.split()[0]}, module {_core.__file__}",
        "build:",
        "  CUDA plugin:    " + ("compiled (libgpuarr_cuda.so)" if os.path.exists(plugin)
                                else "not compiled (no libgpuarr_cuda.so next to _core)"),
        "  emulated CUDA:  " + ("compiled (libgpuarr_cuda_emu.so)" if os.path.exists(emu)
                                else "not compiled"),
        *_build_lines(),
        f"  CPU BLAS:       {_blas_text()}",
        f"  CPU threads:    {_threads_text()}",
        f"devices ({n} GPU{'s' if n != 1 else ''}; {_MODE_WORDS.get(mode, mode)}):",
        *dev_lines,
    ]
    if mode != "cuda":
        plain = _plain_reason(reason, os.path.exists(plugin)) if mode == "none" else None
        if plain:
            out.append(f"why CUDA is not in use: {plain}")
            out.append(f"  (details: {reason or 'no reason recorded'})")
        else:
            out.append(f"why CUDA is not in use: {reason or 'no reason recorded'}")
        if mode == "none":
            out.append("  (gpuarr.simulate_gpus_if_none(2), or GPUARR_SIMULATE_GPUS=2 set "
                       "before the first device query, simulates two GPUs)")
    else:
        out.append(f"CUDA: {reason}")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and "CUDA_VISIBLE_DEVICES" not in (reason or ""):
        # simulated and emulated GPUs say what the variable hid in their reason above
        out.append(f"CUDA_VISIBLE_DEVICES={visible!r} (the CUDA driver shows only these "
                   f"GPUs)")
    if n:
        from ._smi import table

        out.append("memory (as nvidia-smi):")
        out.extend("  " + t for t in table().splitlines())
    return "\n".join(out)


def info(file=None):
    """info(file=None)

    Print a readable report: gpuarr's version, build options (CUDA plugin, CPU
    BLAS, CPU threads), every device with its kind (CPU / CUDA / simulated /
    emulated CUDA), name and memory, and why CUDA is not in use when it is not."""
    print(report(), file=file if file is not None else sys.stdout)
