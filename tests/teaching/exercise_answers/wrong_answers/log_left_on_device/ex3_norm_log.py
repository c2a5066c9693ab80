"""Wrong: the log is returned as the device array, not as a NumPy array."""
import gpuarr as ga


def norm_log(A, steps):
    log = ga.zeros(steps, device=A.device)
    for i in range(steps):
        log[i] = ga.linalg.norm(A @ A)
    return log
