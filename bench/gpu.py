"""How fast is gpuarr on this GPU? One table, every number synchronised.

    python bench/gpu.py [--device I] [--quick] [--rounds N] [--allow-simulated]

Rows (each timed as: warm up, synchronise, run the operation in a loop, synchronise
once, best of --rounds):

  copy            device-to-device copy of a large array: the bandwidth ceiling
  elementwise     add, multiply by a scalar, exp: GB/s and the fraction of the copy's
  reduction       sum, max, and a row sum of a matrix: GB/s and fraction of copy
  matmul          float32 (and float16) GEMM through gpuarr (cuBLAS underneath) in
                  TFLOP/s, next to CuPy and PyTorch on the same GPU when importable
  launch          time per tiny operation (a 1-element add) in a loop of many,
                  synchronised once: what every small kernel costs at least
  transfer        host-to-device (gpuarr.asarray(host, device=gpu)) and
                  device-to-host (x.numpy()) GB/s of a large array; gpuarr stages
                  through pinned host memory
  exercise 1      the chapter's exercise: n x n matmul on the CPU against each GPU,
                  by size, in milliseconds

Without a real CUDA GPU (gpuarr._core._gpu_mode()[0] != "cuda") it says so and exits 0.
With --allow-simulated it runs the same table on simulated or emulated GPUs, labelled
as such: their numbers are CPU numbers and say nothing about GPUs (this is how the
script itself is tested). Benchmarks are not tests: nothing here asserts.
"""
import argparse
import sys
import time

import numpy as np

import gpuarr
from gpuarr import _core

GB = 1e9


def timed(fn, device, rounds, min_time):
    """Best seconds per call of fn on device: warm up, then loops of doubling length
    until one lasts min_time, synchronising only at the ends of a loop."""
    fn()
    gpuarr.synchronize(device)
    best = float("inf")
    for _ in range(rounds):
        n = 1
        while True:
            gpuarr.synchronize(device)
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            gpuarr.synchronize(device)
            dt = time.perf_counter() - t0
            if dt >= min_time or n >= 1 << 20:
                break
            n *= 2 if dt <= 0 else max(2, min(64, int(min_time / dt * 1.2)))
        best = min(best, dt / n)
    return best


def timed_foreign(fn, sync, rounds, min_time):
    """timed() for another library, with its own synchronisation."""
    fn()
    sync()
    best = float("inf")
    for _ in range(rounds):
        n = 1
        while True:
            sync()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            sync()
            dt = time.perf_counter() - t0
            if dt >= min_time or n >= 1 << 20:
                break
            n *= 2 if dt <= 0 else max(2, min(64, int(min_time / dt * 1.2)))
        best = min(best, dt / n)
    return best


class Table:
    def __init__(self, label):
        self.label = label
        self.rows = []

    def add(self, group, what, size, seconds, rate, vs=""):
        self.rows.append((group, what, size, _fmt_time(seconds), rate, vs))

    def note(self, group, what, text):
        self.rows.append((group, what, "", "", text, ""))

    def print(self):
        head = ("group", "operation", "size", "time", "rate", "vs reference")
        widths = [max(len(str(r[i])) for r in self.rows + [head]) for i in range(6)]
        line = "  ".join("{:<%d}" % w for w in widths)
        print(line.format(*head))
        print("  ".join("-" * w for w in widths))
        for r in self.rows:
            print(line.format(*r).rstrip())


def _fmt_time(s):
    if s == "" or s is None:
        return ""
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.2f} s"


def _fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def bench_bandwidth(t, dev, n, rounds, min_time):
    x = gpuarr.random.uniform(size=(n,), device=dev)
    y = gpuarr.random.uniform(size=(n,), device=dev)
    out = gpuarr.empty((n,), device=dev)
    nb = x.nbytes
    size = f"{n} f32 ({_fmt_bytes(nb)})"

    s = timed(lambda: x.copyto(dev), dev, rounds, min_time)
    copy_bw = 2 * nb / s  # read + write
    t.add("copy", "device-to-device copy", size, s, f"{copy_bw / GB:.1f} GB/s", "1.00 (ceiling)")

    for what, fn, traffic in [
        ("add x + y", lambda: gpuarr.add(x, y, out=out), 3 * nb),
        ("multiply x * 2.0", lambda: gpuarr.multiply(x, 2.0, out=out), 2 * nb),
        ("exp(x)", lambda: gpuarr.exp(x, out=out), 2 * nb),
    ]:
        s = timed(fn, dev, rounds, min_time)
        bw = traffic / s
        t.add("elementwise", what, size, s, f"{bw / GB:.1f} GB/s", f"{bw / copy_bw:.2f} of copy")

    rows = max(1, n // 1024)
    m = gpuarr.reshape(x[: rows * 1024], (rows, 1024))
    for what, fn, traffic, sz in [
        ("sum(x)", lambda: gpuarr.sum(x), nb, size),
        ("max(x)", lambda: gpuarr.max(x), nb, size),
        ("sum(m, axis=1)", lambda: gpuarr.sum(m, axis=1), m.nbytes,
         f"{rows}x1024 f32"),
    ]:
        s = timed(fn, dev, rounds, min_time)
        bw = traffic / s
        t.add("reduction", what, sz, s, f"{bw / GB:.1f} GB/s", f"{bw / copy_bw:.2f} of copy")


def bench_matmul(t, dev, n, rounds, min_time, real_cuda):
    flops = 2.0 * n**3
    ref = None
    for dtype in ("float32", "float16"):
        a = gpuarr.random.uniform(size=(n, n), dtype=dtype, device=dev)
        b = gpuarr.random.uniform(size=(n, n), dtype=dtype, device=dev)
        s = timed(lambda: a @ b, dev, rounds, min_time)
        rate = flops / s
        if dtype == "float32":
            ref = rate
        t.add("matmul", f"gpuarr {dtype} (cuBLAS)", f"{n}x{n}", s,
              f"{rate / 1e12:.3f} TFLOP/s", "reference" if dtype == "float32"
              else f"{rate / ref:.2f}x f32")
    if not real_cuda:
        t.note("matmul", "cupy / torch", "skipped: not a real CUDA GPU")
        return
    try:
        import cupy as cp
    except ImportError:
        t.note("matmul", "cupy float32", "not installed")
    else:
        with cp.cuda.Device(dev.index):
            ca = cp.random.random((n, n), dtype=cp.float32)
            cb = cp.random.random((n, n), dtype=cp.float32)
            s = timed_foreign(lambda: ca @ cb, cp.cuda.Device(dev.index).synchronize,
                              rounds, min_time)
        t.add("matmul", "cupy float32", f"{n}x{n}", s, f"{flops / s / 1e12:.3f} TFLOP/s",
              f"gpuarr is {ref / (flops / s):.2f}x")
    try:
        import torch
    except ImportError:
        t.note("matmul", "torch float32", "not installed")
    else:
        if not torch.cuda.is_available():
            t.note("matmul", "torch float32", "installed without CUDA")
        else:
            td = torch.device("cuda", dev.index)
            ta = torch.rand((n, n), device=td)
            tb = torch.rand((n, n), device=td)
            s = timed_foreign(lambda: ta @ tb, lambda: torch.cuda.synchronize(td),
                              rounds, min_time)
            t.add("matmul", "torch float32", f"{n}x{n}", s,
                  f"{flops / s / 1e12:.3f} TFLOP/s", f"gpuarr is {ref / (flops / s):.2f}x")


def bench_launch(t, dev, loop, rounds):
    a = gpuarr.ones((1,), device=dev)
    b = gpuarr.ones((1,), device=dev)
    out = gpuarr.empty((1,), device=dev)

    def many_adds():
        for _ in range(loop):
            gpuarr.add(a, b, out=out)

    def many_ops():
        for _ in range(loop):
            a + 1.0

    cpu_ref = gpuarr.ones((1,))
    cpu_out = gpuarr.empty((1,))

    def many_cpu_adds():
        for _ in range(loop):
            gpuarr.add(cpu_ref, cpu_ref, out=cpu_out)

    s_cpu = timed(many_cpu_adds, gpuarr.cpu(), rounds, 0) / loop
    for what, fn in [("add(a, b, out=c), 1 element", many_adds),
                     ("a + 1.0 (new array), 1 element", many_ops)]:
        s = timed(fn, dev, rounds, 0) / loop
        t.add("launch", what, f"loop of {loop}", s, f"{1 / s / 1e3:.0f} k ops/s",
              f"{s / s_cpu:.1f}x the CPU's")


def bench_transfer(t, dev, n, rounds, min_time):
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    x = gpuarr.asarray(host, device=dev)
    size = _fmt_bytes(host.nbytes)
    s = timed(lambda: gpuarr.asarray(host, device=dev), dev, rounds, min_time)
    t.add("transfer", "h2d gpuarr.asarray(host, device=gpu)", size, s,
          f"{host.nbytes / s / GB:.2f} GB/s")
    s = timed(lambda: x.numpy(), dev, rounds, min_time)
    t.add("transfer", "d2h x.numpy()", size, s, f"{host.nbytes / s / GB:.2f} GB/s")


def bench_exercise1(t, sizes, rounds, min_time):
    devs = [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]
    for n in sizes:
        cpu_time = None
        for d in devs:
            a = gpuarr.random.uniform(size=(n, n), device=d)
            b = gpuarr.random.uniform(size=(n, n), device=d)
            s = timed(lambda: a @ b, d, rounds, min_time)
            if cpu_time is None:
                cpu_time = s
                vs = "reference"
            else:
                vs = f"{cpu_time / s:.2f}x the CPU's speed"
            t.add("exercise 1", f"matmul on {d!r}", f"{n}x{n}", s,
                  f"{2.0 * n**3 / s / 1e9:.1f} GFLOP/s", vs)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", type=int, default=0, help="the GPU to measure (default 0)")
    p.add_argument("--rounds", type=int, default=5, help="best of this many (default 5)")
    p.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    p.add_argument("--allow-simulated", action="store_true",
                   help="also run on simulated or emulated GPUs (labelled; CPU numbers)")
    args = p.parse_args(argv)

    ngpu = gpuarr.num_gpus()
    mode, reason = _core._gpu_mode()
    real = mode == "cuda"
    if not real and not args.allow_simulated:
        print(f"No real CUDA GPU here (GPU mode: {mode}: {reason}).")
        print("Nothing to measure; run with --allow-simulated to exercise the script "
              "on simulated GPUs.")
        return 0
    if ngpu == 0:
        print(f"No GPU at all (GPU mode: {mode}: {reason}); set GPUARR_SIMULATE_GPUS=1 "
              "to run the table on a simulated one.")
        return 0
    if args.device >= ngpu:
        print(f"--device {args.device}: this process has {ngpu} GPU(s)", file=sys.stderr)
        return 2
    dev = gpuarr.gpu(args.device)
    info = _core._device_info(dev)
    label = "" if real else f"  [{mode.upper()} GPU: these are CPU numbers, not GPU numbers]"
    print(f"gpuarr {gpuarr.__version__} on {dev!r}: {info.get('name', '?')} ({mode}){label}")
    if not real:
        print(f"NOTE: {reason}")

    if args.quick:
        n_bw, n_mm, loop, n_tr = 1 << 14, 64, 200, 1 << 18
        ex_sizes, min_time, rounds = (16, 64), 0.005, min(args.rounds, 2)
    elif real:
        n_bw, n_mm, loop, n_tr = 1 << 26, 4096, 10000, 1 << 26
        ex_sizes, min_time, rounds = (64, 256, 1024, 4096), 0.1, args.rounds
    else:
        n_bw, n_mm, loop, n_tr = 1 << 22, 512, 2000, 1 << 22
        ex_sizes, min_time, rounds = (64, 256, 512), 0.05, args.rounds

    t = Table(label)
    failed = []
    # A section that fails shows as a row (and the exit status is 1): the rest of the
    # table is still worth having.
    for group, fn, fargs in [
        ("copy/elementwise/reduction", bench_bandwidth, (t, dev, n_bw, rounds, min_time)),
        ("matmul", bench_matmul, (t, dev, n_mm, rounds, min_time, real)),
        ("launch", bench_launch, (t, dev, loop, rounds)),
        ("transfer", bench_transfer, (t, dev, n_tr, rounds, min_time)),
        ("exercise 1", bench_exercise1, (t, ex_sizes, rounds, min_time)),
    ]:
        try:
            fn(*fargs)
        except Exception as e:  # report and go on
            failed.append(group)
            t.note(group, "FAILED", f"{type(e).__name__}: {e}")
    print()
    t.print()
    if not real:
        print(f"\n(all rows above ran on {mode} GPUs: they check the script, not a GPU)")
    if failed:
        print(f"\nfailed sections: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
