"""``python -m gpuarr``: the guided tour; ``python -m gpuarr info``: gpuarr.info();
``python -m gpuarr smi``: the GPUs and their memory, as nvidia-smi shows them.

Without a GPU the tour re-runs itself with ``GPUARR_SIMULATE_GPUS=2`` (two simulated
GPUs) and says so; set ``GPUARR_SIMULATE_GPUS`` yourself to choose.
"""
import os
import sys

import gpuarr  # already loaded: `python -m gpuarr` imports the package first

from . import _tour

_USAGE = """usage: python -m gpuarr [tour | info | smi] [--quick]

  tour   (default) walk through the GPUs chapter with real output
  info   what this machine and build have (gpuarr.info())
  smi    the GPUs, their memory and this process's arrays (as nvidia-smi)
  --quick  smaller matrices in the timing table
"""


def main(argv=None):
    """main(argv=None)

    The command line of ``python -m gpuarr``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    quick = "--quick" in argv
    args = [a for a in argv if a != "--quick"]
    cmd = args[0] if args else "tour"
    if cmd in ("-h", "--help", "help") or len(args) > 1:
        print(_USAGE)
        return 0 if cmd in ("-h", "--help", "help") else 2
    if cmd == "info":
        gpuarr.info()
        return 0
    if cmd == "smi":
        from ._smi import smi

        smi()
        return 0
    if cmd != "tour":
        print(_USAGE, file=sys.stderr)
        return 2
    if not any(v in os.environ for v in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE")):
        if gpuarr.num_gpus() == 0:
            # The device list is fixed at first use, so simulating GPUs needs a fresh
            # process.
            print("No GPU found; re-running the tour with GPUARR_SIMULATE_GPUS=2 "
                  "(two simulated GPUs).", flush=True)
            env = dict(os.environ, GPUARR_SIMULATE_GPUS="2")
            os.execve(sys.executable, [sys.executable, "-m", "gpuarr", *argv], env)
    failed = _tour.run(sizes=(8, 64, 256) if quick else (8, 128, 512))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
