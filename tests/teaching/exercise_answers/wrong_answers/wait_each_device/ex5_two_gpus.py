"""Wrong: all of the first device's products, a wait for it, then the second's: the
devices take turns instead of computing at the same time."""
import gpuarr as ga


def powers_on_two_devices(A0, A1, steps):
    P0 = A0
    for _ in range(steps):
        P0 = P0 @ A0
    ga.synchronize(A0.device)
    P1 = A1
    for _ in range(steps):
        P1 = P1 @ A1
    ga.synchronize(A1.device)
    return P0, P1
