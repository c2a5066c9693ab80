"""Wrong: the norm is computed once and written `steps` times (the loop it stands for
would log a stale metric)."""
import gpuarr as ga


def norm_log(A, steps):
    n = ga.linalg.norm(A @ A)
    log = ga.zeros(steps, device=A.device)
    for i in range(steps):
        log[i] = n
    return log.numpy()
