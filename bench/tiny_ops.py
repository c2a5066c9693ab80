"""The cost per call of gpuarr's own work on tiny arrays: what a change to the core's
bookkeeping adds (failure tracking, docs/DESIGN.md "Failed queued work", was measured
with it). Run it against two builds, alternating, and compare the best times:

    PYTHONPATH=python GPUARR_SIMULATE_GPUS=1 python3 bench/tiny_ops.py

CPU rows always; with a GPU (simulated or CUDA), the same operations on gpu(0), each
followed by the wait that makes it comparable, and a gather with a device index array
(the operation that carries a failure record). Times are the best of --rounds rounds
(the machine may be shared: the best round is the one least disturbed)."""
import argparse
import timeit

import numpy as np

import gpuarr as ga


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=60)
    args = p.parse_args()
    env = {"ga": ga}
    env["a"] = ga.asarray(np.ones(3, np.float32))
    env["b"] = ga.asarray(np.ones(3, np.float32))
    rows = [("cpu a + b", "a + b", 5000), ("cpu a += b", "a.__iadd__(b)", 5000),
            ("cpu a + 1.0", "a + 1.0", 5000), ("cpu a.sum()", "a.sum()", 5000),
            ("cpu a.numpy()", "a.numpy()", 5000)]
    if ga.num_gpus():
        d = ga.gpu(0)
        env.update(d=d, ga_=ga.asarray(np.ones(3, np.float32), device=d),
                   gb=ga.asarray(np.ones(3, np.float32), device=d),
                   x=ga.arange(10.0, device=d),
                   idx=ga.asarray(np.array([1, 2, 3]), device=d))
        kind = ga.device_kind(d)
        rows += [(f"{kind} a + b, synchronize", "ga_ + gb; ga.synchronize(d)", 300),
                 (f"{kind} (a + b).numpy()", "(ga_ + gb).numpy()", 300),
                 (f"{kind} x[idx], synchronize", "x[idx]; ga.synchronize(d)", 300),
                 (f"{kind} x[idx].numpy()", "x[idx].numpy()", 300)]
    for name, stmt, number in rows:
        t = min(timeit.repeat(stmt, number=number, repeat=args.rounds, globals=env))
        print(f"{name:32s} {t / number * 1e6:8.3f} us")


if __name__ == "__main__":
    main()
