"""Correct, unusual: the `steps` products as one batched matmul (each matrix of the
batch is a product on A's device), then a norm per step, stacked on the device."""
import gpuarr as ga


def norm_log(A, steps):
    P = ga.stack([A] * steps) @ A  # (steps, n, n): steps products in one call
    return ga.stack([ga.linalg.norm(P[i]) for i in range(steps)]).numpy()
