"""A correct answer that leaves a thread running forever (not a daemon: it would keep
an ordinary Python process from ending)."""
import threading
import time

import gpuarr as ga


def _forever():
    while True:
        time.sleep(0.05)


threading.Thread(target=_forever).start()


def norm_log(A, steps):
    log = ga.zeros(steps, device=A.device)
    for i in range(steps):
        log[i] = ga.linalg.norm(A @ A)
    return log.numpy()
