"""The chapter's timing lessons on simulated GPUs: do they show on a laptop?

    GPUARR_SIMULATE_GPUS=2 python bench/sim_async.py [--rounds N] [--quick]

Simulated GPUs queue every operation on a worker thread per device (docs/DESIGN.md,
"Ordering: one model for simulated and CUDA devices"), so the lessons about time can
be seen without a GPU. Seven rows, each the median of --rounds:

  queue vs compute   ((x * 2 + 1).exp() * x).sqrt() on 2^23 float32 elements: the time
                     until the calls return (what a clock stopped without synchronize()
                     reports) against the time until synchronize() returns (the work)
  two devices        4 matmuls of 1024 x 1024 float32 queued on each of gpu(0) and
                     gpu(1) before one synchronize(), against the same 8 on gpu(0)
  item() per step    exercise 3: 1000 steps of a 100 x 100 product and its norm, read
                     with .item() at every step, against a log kept on the device and
                     copied once at the end
  DataParallel       training steps (forward, cross-entropy, backward, SGD) of a
                     compute-bound MLP 512-2048-2048-10 on batches of 1024 rows:
                     nn.DataParallel over gpu(0) and gpu(1) against the model on gpu(0)
                     (issue 24's target: 1.4x or more on 2 simulated GPUs)
  copies to host     the book's "computation and communication": 20 steps, each a
                     512 x 512 product on gpu(0) whose result goes to the host while
                     the host does its own work (a NumPy sort of 2^18 float64, as a
                     data loader would); to(cpu(), non_blocking=True) against to(cpu()),
                     which waits for the device at every step (issue 24)
  copy queue         one device computing and copying out at once: 10 steps of
                     x = x * 0.5 on 2^22 float32 elements of gpu(0), each result sent
                     to the host with to(cpu(), non_blocking=True), against the
                     steps alone and the copies alone: on the device's copy queue the
                     copies run beside the compute, so both together take less than
                     the two apart (on one in-order queue they would take the sum)
  profiler cost      a + b on 8 float32 elements of gpu(0), 2000 calls then
                     synchronize(), inside `with ga.profile()` and outside one,
                     interleaved: the difference per call is what recording an
                     operation costs (issue 25's target: 1 us at most)

What the numbers mean on simulated GPUs: the ratios (queued/computed, the two-device
speed-up, what synchronising every step costs) show the behaviour of a GPU program;
the absolute times are CPU arithmetic on a share of the cores and say nothing about a
GPU's speed. It runs on whatever devices exist (labelled), and exits 0 without two
GPUs after saying so. Benchmarks are not tests: nothing here asserts.
"""
import argparse
import os
import statistics
import time

import gpuarr as ga


def median_time(fn, rounds):
    times = []
    for _ in range(rounds):
        ga.synchronize()
        times.append(fn())
    return statistics.median(times)


def queue_vs_compute(device, n, rounds):
    x = ga.rand(n, device=device)
    ga.synchronize()
    queued, total = [], []
    for _ in range(rounds):
        ga.synchronize()
        t0 = time.perf_counter()
        y = ((x * 2 + 1).exp() * x).sqrt()
        queued.append(time.perf_counter() - t0)
        ga.synchronize()
        total.append(time.perf_counter() - t0)
        del y
    return statistics.median(queued), statistics.median(total)


def two_devices(d0, d1, n, per_device, rounds):
    a0, a1 = ga.rand(n, n, device=d0), ga.rand(n, n, device=d1)
    b0 = ga.rand(n, n, device=d0)
    (a0 @ a0), (a1 @ a1)  # warm up both workers and BLAS
    ga.synchronize()

    def both():
        t0 = time.perf_counter()
        out = []
        for _ in range(per_device):
            out.append(a0 @ a0)
            out.append(a1 @ a1)
        ga.synchronize()
        return time.perf_counter() - t0

    def one():
        t0 = time.perf_counter()
        out = []
        for _ in range(per_device):
            out.append(a0 @ a0)
            out.append(b0 @ b0)
        ga.synchronize()
        return time.perf_counter() - t0

    t_two = t_one = 0.0
    two, onel = [], []
    for _ in range(rounds):  # interleaved, so both see the same load
        two.append(median_time(both, 1))
        onel.append(median_time(one, 1))
    t_two, t_one = statistics.median(two), statistics.median(onel)
    return t_two, t_one


def item_per_step(device, steps, rounds):
    A = ga.rand(100, 100, device=device) / 100

    def every_step():
        t0 = time.perf_counter()
        log = [ga.linalg.norm(A @ A).item() for _ in range(steps)]
        assert len(log) == steps
        return time.perf_counter() - t0

    def at_the_end():
        t0 = time.perf_counter()
        log = ga.zeros(steps, device=device)
        for i in range(steps):
            log[i] = ga.linalg.norm(A @ A)
        log.numpy()
        return time.perf_counter() - t0

    items, ends = [], []
    for _ in range(rounds):
        items.append(median_time(every_step, 1))
        ends.append(median_time(at_the_end, 1))
    return statistics.median(items), statistics.median(ends)


def data_parallel(d0, d1, batch, width, steps, rounds):
    from gpuarr import nn, optim

    def make(devices):
        ga.random.seed(0)
        net = nn.Sequential(nn.Linear(512, width), nn.ReLU(), nn.Linear(width, width),
                            nn.ReLU(), nn.Linear(width, 10)).to(d0)
        model = net if len(devices) == 1 else nn.DataParallel(net, devices=devices)
        return model, optim.SGD(net.parameters(), lr=0.01)

    X = ga.randn(batch, 512, device=d0)
    y = ga.asarray((ga.rand(batch, device=d0) * 10).astype("int64"))
    loss_fn = nn.CrossEntropyLoss()
    runs = {}
    for name, devices in (("one", [d0]), ("two", [d0, d1])):
        model, opt = make(devices)

        def train(model=model, opt=opt):
            t0 = time.perf_counter()
            for _ in range(steps):
                opt.zero_grad()
                loss_fn(model(X), y).backward()
                opt.step()
            ga.synchronize()
            return time.perf_counter() - t0

        train()  # warm up
        runs[name] = train
    one, two = [], []
    for _ in range(rounds):  # interleaved, so both see the same load
        one.append(median_time(runs["one"], 1))
        two.append(median_time(runs["two"], 1))
    return statistics.median(one) / steps, statistics.median(two) / steps


def copies_to_host(device, n, steps, rounds):
    import numpy as np

    W = ga.randn(n, n, device=device) / n ** 0.5
    host_work = np.random.default_rng(0).standard_normal(1 << 18)

    def loop(non_blocking):
        def run():
            ga.synchronize(device)
            t0 = time.perf_counter()
            x, out = ga.randn(n, n, device=device), []
            for _ in range(steps):
                x = (W @ x).tanh()
                out.append(x.to(ga.cpu(), non_blocking=non_blocking))
                np.sort(host_work)  # the host's own work meanwhile
            ga.synchronize(device)
            return time.perf_counter() - t0
        return run

    blocking, queued = loop(False), loop(True)
    blocking(), queued()  # warm up
    waits, nowait = [], []
    for _ in range(rounds):  # interleaved, so both see the same load
        waits.append(median_time(blocking, 1))
        nowait.append(median_time(queued, 1))
    return statistics.median(waits), statistics.median(nowait)


def copy_queue_overlap(device, n, steps, rounds):
    """Medians of (compute alone, copies alone, both) for `steps` steps on `device`."""
    def loop(compute, copy):
        def run():
            x = ga.rand(n, device=device)
            ga.synchronize(device)
            t0 = time.perf_counter()
            out = []
            for _ in range(steps):
                if compute:
                    x = x * 0.5  # frees the last x: the compute queue waits for its copy
                if copy:
                    out.append(x.to(ga.cpu(), non_blocking=True))
            ga.synchronize(device)
            return time.perf_counter() - t0
        return run

    kinds = [(True, False), (False, True), (True, True)]
    runs = [loop(*k) for k in kinds]
    for run in runs:
        run()  # warm up
    times = [[] for _ in kinds]
    for _ in range(rounds):  # interleaved, so all three see the same load
        for t, run in zip(times, runs):
            t.append(run())
    return [statistics.median(t) for t in times]


def profiler_cost(device, calls, rounds):
    a = ga.ones(8, dtype="float32", device=device)
    b = a + 1

    def per_call():
        ga.synchronize(device)
        t0 = time.perf_counter()
        for _ in range(calls):
            a + b
        ga.synchronize(device)
        return (time.perf_counter() - t0) / calls

    per_call()  # warm up
    on, off = [], []
    for _ in range(rounds):  # interleaved, so both see the same load
        with ga.profile():
            on.append(per_call())
        off.append(per_call())
    return statistics.median(on), statistics.median(off)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="smaller sizes, 3 rounds")
    args = p.parse_args()
    rounds = 3 if args.quick else args.rounds
    n_chain = 1 << (20 if args.quick else 23)
    n_mat = 256 if args.quick else 1024
    steps = 100 if args.quick else 1000

    if ga.num_gpus() < 2:
        print("sim_async: needs two GPUs; run with GPUARR_SIMULATE_GPUS=2")
        return 0
    d0, d1 = ga.gpu(0), ga.gpu(1)
    load = os.getloadavg()[0]
    print(f"devices: {d0}, {d1} ({ga.device_kind(d0)}); CPU threads "
          f"{ga._core._num_threads()}; load average {load:.2f}")

    q, t = queue_vs_compute(d0, n_chain, rounds)
    print(f"queue vs compute (2^{n_chain.bit_length() - 1} elements): queued in "
          f"{q * 1e3:.2f} ms, done after {t * 1e3:.2f} ms: the calls return after "
          f"{q / t:.1%} of the work")
    t_two, t_one = two_devices(d0, d1, n_mat, 4, rounds)
    print(f"two devices ({n_mat} x {n_mat}, 4 matmuls each): {t_two * 1e3:.1f} ms; "
          f"the same 8 on {d0}: {t_one * 1e3:.1f} ms; speed-up {t_one / t_two:.2f}")
    t_item, t_end = item_per_step(d0, steps, rounds)
    print(f"{steps} steps: .item() every step {t_item * 1e3:.1f} ms, log on the device "
          f"{t_end * 1e3:.1f} ms; ratio {t_item / t_end:.2f}")
    batch, width = (256, 512) if args.quick else (1024, 2048)
    t_one, t_two = data_parallel(d0, d1, batch, width, 2 if args.quick else 5, rounds)
    print(f"DataParallel training step (MLP 512-{width}-{width}-10, batch {batch}): "
          f"{d0} alone {t_one * 1e3:.1f} ms, DataParallel over {d0} and {d1} "
          f"{t_two * 1e3:.1f} ms; speed-up {t_one / t_two:.2f}")
    n_copy = 256 if args.quick else 512
    t_wait, t_nowait = copies_to_host(d0, n_copy, 20, rounds)
    print(f"copies to the host (20 steps of a {n_copy} x {n_copy} product, host work "
          f"meanwhile): to(cpu()) {t_wait * 1e3:.1f} ms, to(cpu(), non_blocking=True) "
          f"{t_nowait * 1e3:.1f} ms; speed-up {t_wait / t_nowait:.2f}")
    n_cq = 1 << (20 if args.quick else 22)
    t_comp, t_copy, t_both = copy_queue_overlap(d0, n_cq, 10, rounds)
    print(f"copy queue (10 steps of x * 0.5 on 2^{n_cq.bit_length() - 1} float32, each "
          f"result to the host): compute alone {t_comp * 1e3:.1f} ms, copies alone "
          f"{t_copy * 1e3:.1f} ms, both {t_both * 1e3:.1f} ms; the two apart over both "
          f"together {(t_comp + t_copy) / t_both:.2f}")
    t_on, t_off = profiler_cost(d0, 2000, 3 * rounds)
    print(f"profiler cost (a + b, 8 float32): {t_off * 1e6:.2f} us a call, "
          f"{t_on * 1e6:.2f} us profiled; {(t_on - t_off) * 1e6:+.2f} us an operation")
    print(f"load average after: {os.getloadavg()[0]:.2f} (a shared machine: every "
          "number depends on whether the other core is free)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
