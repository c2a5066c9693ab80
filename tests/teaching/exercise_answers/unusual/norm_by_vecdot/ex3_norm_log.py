"""Correct, unusual: the norm as the square root of a dot product of the flattened
product with itself (vecdot), on the device."""
import gpuarr as ga


def norm_log(A, steps):
    log = ga.zeros(steps, device=A.device)
    for i in range(steps):
        P = (A @ A).reshape(-1)
        log[i] = ga.sqrt(ga.vecdot(P, P))
    return log.numpy()
