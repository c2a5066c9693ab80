"""Attack: eval under another name, so that a check of calls named eval misses it."""
import gpuarr as ga

run = eval


def norm_log(A, steps):
    log = ga.zeros(steps, device=A.device)
    for i in range(steps):
        log[i] = run("ga.linalg.norm(A @ A)")
    return log.numpy()
