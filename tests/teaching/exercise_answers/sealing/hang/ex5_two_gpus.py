"""Accident: a loop that never ends."""


def powers_on_two_devices(A0, A1, steps):
    P0, P1 = A0, A1
    while steps > 0:
        P0 = P0 @ A0
        P1 = P1 @ A1
    return P0, P1
