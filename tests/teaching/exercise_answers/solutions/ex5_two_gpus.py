"""Reference solution of exercise 5: both devices' products queued, then one wait."""
import gpuarr as ga


def powers_on_two_devices(A0, A1, steps):
    P0, P1 = A0, A1
    for _ in range(steps):
        P0 = P0 @ A0  # queued on A0's device
        P1 = P1 @ A1  # queued on A1's device, without waiting for the first
    ga.synchronize()  # one wait for both
    return P0, P1
