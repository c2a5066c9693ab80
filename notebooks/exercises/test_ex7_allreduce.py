"""Grades ex7_allreduce.py: every gradient becomes the sum, in place on its own device,
the additions done on the devices, nothing copied to or from the host between GPUs and
no wait."""
import numpy as np

import gpuarr as ga
from gpuarr.testing import assert_allclose, assert_on_device, assert_transfers, count_work


def two_devices():
    """gpu(0) and gpu(1); with one GPU, it and the CPU (the plugin's second pass grades
    two GPUs); with none, the CPU twice."""
    if ga.num_gpus() >= 2:
        return ga.gpu(0), ga.gpu(1)
    return ga.try_gpu(0), ga.cpu()


def test_every_gradient_becomes_the_sum_in_place(student, gpuarr_rng):
    ex = student("ex7_allreduce")
    d0, d1 = two_devices()
    devices = [d0, d1, d0, d1]
    hosts = [gpuarr_rng.standard_normal((6, 5)).astype(np.float32) for _ in devices]
    want = np.sum(np.stack(hosts).astype(np.float64), axis=0)  # before: on the CPU,
    grads = [ga.asarray(h, device=d) for h, d in zip(hosts, devices)]  # hosts are shared
    # The sum must reach the other device and come back: one copy each way per array
    # away from the device where it is formed, whichever that is.
    away = sum(d != d0 for d in devices)
    gpus = d0.type != "cpu" and d1.type != "cpu"
    to_host = 0 if gpus or d0 == d1 else away
    budget = assert_transfers(max_d2d=2 * away if gpus else 0, max_h2d=to_host,
                              max_d2h=to_host, max_syncs=to_host)
    with budget, count_work(*{d0, d1}) as work:
        ex.allreduce(list(grads))  # a list of its own: the arrays must change, not it
    adds = sum(work[d].elementwise for d in {d0, d1})
    assert adds >= len(devices) - 1, (
        f"the additions should run on the devices, where the gradients live: "
        f"{adds} elementwise operations ran there, at least {len(devices) - 1} expected")
    for i, (g, d) in enumerate(zip(grads, devices)):
        assert_on_device(g, d, f"gradient {i}", shape=(6, 5))
        assert_allclose(g, want, rtol=1e-5, atol=1e-5, err_msg=(
            f"gradient {i} (on {d!r}) should hold the sum of all, in place: change the "
            f"arrays themselves (g[...] = ..., g += ..., copyto), not the list"))
