"""The guided tour of the GPUs chapter: ``python -m gpuarr``.

Each step shows a few lines of code, runs them, and prints what they give, with a
sentence on why. It runs on whatever the machine has: real GPUs, or (when there are
none) two simulated GPUs, which ``__main__`` arranges by re-running the tour with
``GPUARR_SIMULATE_GPUS=2``.
"""
import sys
import time
import traceback

import gpuarr
from gpuarr import nn


def _say(text=""):
    print(text)


def _code(src):
    for line in src.strip("\n").splitlines():
        print("    >>> " + line)


def _title(n, text):
    print()
    print(f"{n}. {text}")
    print("-" * (len(text) + 3))


def step_devices():
    _title(1, "Devices are values")
    _say("A device names where data lives: the CPU (all cores, main memory) or one GPU")
    _say("(one card and its memory). Building one never fails; it is checked only when")
    _say("data is placed there.")
    _code("gpuarr.cpu(), gpuarr.gpu(), gpuarr.gpu(1)")
    print("   ", (gpuarr.cpu(), gpuarr.gpu(), gpuarr.gpu(1)))
    _code("gpuarr.num_gpus()")
    print("   ", gpuarr.num_gpus())
    mode = gpuarr.device_kind(gpuarr.gpu()) if gpuarr.num_gpus() else "none"
    _code("gpuarr.device_kind(gpuarr.try_gpu())")
    print("   ", repr(gpuarr.device_kind(gpuarr.try_gpu())))
    if mode == "simulated":
        _say("These GPUs are SIMULATED: they keep their memory in host RAM and compute")
        _say("with the CPU, but follow every rule of a real GPU (placement, explicit")
        _say("copies, transfer accounting) and keep time like one: each has a queue")
        _say("and a worker thread, so operations return at once and synchronize() or")
        _say("a host read waits for them.")
    elif mode == "emulated":
        _say("These GPUs are EMULATED CUDA devices (GPUARR_CUDA_EMULATE, a test")
        _say("harness): the CUDA backend's own kernels run on the CPU, one thread at a")
        _say("time. Every rule holds; the speed means nothing.")
    elif mode == "none":
        _say("No GPU here (gpuarr.info() says why); everything below falls back to")
        _say("the CPU.")


def step_try_gpu():
    _title(2, "try_gpu: code that runs with or without GPUs")
    _say("try_gpu(i) is gpu(i) when it exists, else the CPU; it never raises.")
    _code("gpuarr.try_gpu(), gpuarr.try_gpu(10), gpuarr.try_all_gpus()")
    print("   ", (gpuarr.try_gpu(), gpuarr.try_gpu(10), gpuarr.try_all_gpus()))


def step_placement(ctx):
    _title(3, "Placing arrays")
    _say("Arrays are made on the CPU unless you say otherwise; device= makes the data")
    _say("directly on the device.")
    _code("x = gpuarr.array([1, 2, 3])\nx.device")
    x = gpuarr.array([1, 2, 3])
    print("   ", repr(x.device))
    _code("X = gpuarr.ones((2, 3), device=gpuarr.try_gpu())\nX")
    X = gpuarr.ones((2, 3), device=gpuarr.try_gpu())
    print("   ", repr(X).replace("\n", "\n    "))
    _code("Y = gpuarr.rand(2, 3, device=gpuarr.try_gpu(1))\nprint(Y)")
    Y = gpuarr.rand(2, 3, device=gpuarr.try_gpu(1))
    print("   ", str(Y).replace("\n", "\n    "))
    ctx.update(X=X, Y=Y)


def step_to_copyto(ctx):
    _title(4, "to() moves, copyto() copies")
    X, Y = ctx["X"], ctx["Y"]
    _say("to(device) returns the array itself when it is already there (no copy);")
    _say("copyto(device) always makes a new array, even on the same device.")
    _code("Z = X.to(gpuarr.try_gpu(1))\nZ.to(gpuarr.try_gpu(1)) is Z")
    Z = X.to(gpuarr.try_gpu(1))
    print("   ", Z.to(gpuarr.try_gpu(1)) is Z)
    _code("Z.copyto(Z.device) is Z")
    print("   ", Z.copyto(Z.device) is Z)
    _code("Y + Z")
    print("   ", repr(Y + Z).replace("\n", "\n    "))
    ctx["Z"] = Z


def step_mismatch(ctx):
    _title(5, "No implicit transfers: mixing devices is an error")
    X, Y = ctx["X"], ctx["Y"]
    _code("X + Y")
    if X.device == Y.device:
        _say("    (X and Y are on the same device here, so there is nothing to show;")
        _say("     with two GPUs this raises DeviceMismatchError.)")
    else:
        try:
            X + Y
        except gpuarr.DeviceMismatchError as e:
            print(f"    DeviceMismatchError: {e}")
    _say("Python scalars are welcome anywhere: they join the operation on its device.")
    _code("y = gpuarr.array([1., 2., 3.], device=gpuarr.try_gpu())\nprint((y + 2).exp() * y)")
    y = gpuarr.array([1.0, 2.0, 3.0], device=gpuarr.try_gpu())
    print("   ", (y + 2).exp() * y)


def step_ledger():
    _title(6, "Every crossing is counted: the transfer ledger")
    dev = gpuarr.try_gpu()
    n, steps = 64, 100
    A = gpuarr.rand(n, n, device=dev) / n
    _say(f"{steps} products of {n}x{n} matrices on {dev!r}, logging the norm of each:")
    _code(f"A = gpuarr.rand({n}, {n}, device=gpuarr.try_gpu()) / {n}\nlog = []\n"
          "for i in range(100):\n    log.append(gpuarr.linalg.norm(A @ A).item())")
    gpuarr.synchronize()
    gpuarr.reset_transfer_stats()
    t0 = time.perf_counter()
    log = [gpuarr.linalg.norm(A @ A).item() for _ in range(steps)]
    t_item = time.perf_counter() - t0
    s1 = gpuarr.transfer_stats()
    print(f"    {s1}")
    _say("Keeping the log on the device and reading it once:")
    _code("log = [gpuarr.linalg.norm(A @ A) for i in range(100)]\n"
          "gpuarr.stack(log).numpy()")
    gpuarr.reset_transfer_stats()
    t0 = time.perf_counter()
    dlog = [gpuarr.linalg.norm(A @ A) for _ in range(steps)]
    host = gpuarr.stack(dlog).numpy()
    t_dev = time.perf_counter() - t0
    s2 = gpuarr.transfer_stats()
    print(f"    {s2}")
    print(f"    .item() each step: {s1.d2h_count} reads to the host, {t_item * 1e3:.1f} ms;"
          f" one read at the end: {s2.d2h_count}, {t_dev * 1e3:.1f} ms")
    assert abs(float(host[-1]) - log[-1]) <= 1e-4 * abs(log[-1]) + 1e-6
    if dev == gpuarr.cpu():
        _say("(Here the data is on the CPU, so nothing crosses and both counts are 0.)")
    _say("Each read waits for the device and copies to the host: on a real GPU that")
    _say("wait is what makes the first loop slow.")


def step_linear(ctx):
    _title(7, "A linear layer on the GPU")
    _code("net = gpuarr.nn.Sequential(gpuarr.nn.Linear(3, 1))\n"
          "net = net.to(gpuarr.try_gpu())\nnet(X)")
    net = nn.Sequential(nn.Linear(3, 1)).to(gpuarr.try_gpu())
    print("   ", repr(net(ctx["X"])).replace("\n", "\n    "))
    _code("net[0].weight.device")
    print("   ", repr(net[0].weight.device))
    _say("The parameters and the output live where the input lives.")


def _time_matmul(n, dev, reps):
    a = gpuarr.rand(n, n, device=dev)
    b = gpuarr.rand(n, n, device=dev)
    (a @ b)  # warm up (allocator, BLAS threads, cuBLAS handle)
    gpuarr.synchronize()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        gpuarr.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def step_timing(sizes=(8, 128, 512)):
    _title(8, "Exercise 1: matrix products, CPU against GPU")
    devs = [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]
    mode = gpuarr.device_kind(gpuarr.gpu()) if gpuarr.num_gpus() else "none"
    if mode == "simulated":
        _say("NOTE: the GPUs are simulated, so their times below are CPU times (a")
        _say("share of the cores each): their speed against the CPU column says")
        _say("nothing about a GPU. What does mean something: operations are queued")
        _say("and return at once, so a clock stopped without synchronize()")
        _say("under-reports, and two simulated GPUs compute side by side.")
    elif mode == "emulated":
        _say("NOTE: the GPUs are emulated (CUDA kernels run on the CPU, serially): their")
        _say("times below only show how to measure, not how fast a GPU is.")
    _say("Best of 3, milliseconds; synchronize() waits for the device before each stop:")
    print("    " + "n".rjust(6) + "".join(repr(d).rjust(12) for d in devs))
    cpu_ms = {}
    for n in sizes:
        row = [_time_matmul(n, d, 3) * 1e3 for d in devs]
        cpu_ms[n] = row[0]
        print("    " + str(n).rjust(6) + "".join(f"{t:12.3f}" for t in row))
    _say("Small products are dominated by launch and wait overheads; large ones by")
    _say("arithmetic, where a real GPU wins by far.")
    step_modeled(cpu_ms)


def step_modeled(cpu_ms):
    # the GPUs' own model where they carry one, else a T4's (docs/modeled_time.md)
    model = (gpuarr.device_model(gpuarr.gpu()) if gpuarr.num_gpus() else None) \
        or gpuarr.gpu_models()[0]
    _say(f"What a real GPU would take, by the performance model of an {model.full_name}")
    _say("(modeled from its datasheet, not measured: a launch, the product, one wait):")
    for n in (min(cpu_ms), max(cpu_ms)):
        modeled = model.matmul_ms(n, n, n) + model.sync_latency * 1e3
        print(f"    n={n:<4} cpu(0) measured {cpu_ms[n]:9.3f} ms | modeled {model.name} "
              f"{modeled:9.3f} ms -> {'GPU' if modeled < cpu_ms[n] else 'CPU'} faster")


def run(sizes=(8, 128, 512)):
    """run(sizes=(8, 128, 512))

    Walk through the chapter, printing code and real output; returns the number of
    steps that failed (0 when all ran)."""
    t_start = time.perf_counter()
    print(f"gpuarr {gpuarr.__version__}: a guided tour of the GPUs chapter")
    ctx = {}
    steps = [step_devices, step_try_gpu, lambda: step_placement(ctx),
             lambda: step_to_copyto(ctx), lambda: step_mismatch(ctx), step_ledger,
             lambda: step_linear(ctx), lambda: step_timing(sizes)]
    failed = 0
    for step in steps:
        try:
            step()
        except Exception:
            failed += 1
            print("    !! this step failed (a bug or a part of gpuarr not built yet):")
            print("    " + traceback.format_exc().strip().replace("\n", "\n    "))
    print()
    took = time.perf_counter() - t_start
    print(f"Tour finished in " + (f"{took:.1f} s" if took >= 1 else f"{took * 1e3:.0f} ms")
          + (f" with {failed} failed step(s)." if failed else "."))
    print("Run `python -m gpuarr info` to see what this machine has.")
    sys.stdout.flush()
    return failed
