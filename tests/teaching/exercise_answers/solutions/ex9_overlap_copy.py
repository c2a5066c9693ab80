"""Reference solution of exercise 9: a non-blocking copy of each step's value, queued
behind the step on its device; the host goes straight on to queue the next step."""
import gpuarr as ga


def run(step, x, steps):
    logs = []
    for _ in range(steps):
        x, value = step(x)
        logs.append(value.to(ga.cpu(), non_blocking=True))
    return x, logs
