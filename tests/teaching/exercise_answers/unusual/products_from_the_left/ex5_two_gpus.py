"""Correct, unusual: both devices' products in one list, each step A @ P (from the
left: powers of one matrix commute), written with ga.matmul; one wait at the end."""
import gpuarr as ga


def powers_on_two_devices(A0, A1, steps):
    powers = [A0, A1]
    for _ in range(steps):
        powers = [ga.matmul(A, P) for A, P in zip((A0, A1), powers)]
    ga.synchronize()
    return powers[0], powers[1]
