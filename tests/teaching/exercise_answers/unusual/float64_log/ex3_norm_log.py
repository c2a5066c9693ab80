"""Correct, unusual: the log is kept in float64 on the device (400 bytes, not 200)."""
import gpuarr as ga


def norm_log(A, steps):
    log = ga.zeros(steps, dtype="float64", device=A.device)
    for i in range(steps):
        log[i] = ga.linalg.norm(A @ A).astype("float64")
    return log.numpy()
