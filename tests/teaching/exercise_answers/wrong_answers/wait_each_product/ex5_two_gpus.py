"""Wrong: a wait after every step (as timing code without care does), so the host
holds both devices back each time."""
import gpuarr as ga


def powers_on_two_devices(A0, A1, steps):
    P0, P1 = A0, A1
    for _ in range(steps):
        P0 = P0 @ A0
        P1 = P1 @ A1
        ga.synchronize()
    return P0, P1
