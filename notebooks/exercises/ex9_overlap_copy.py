"""Exercise 9 (the book's "Automatic Parallelism": computation and communication
overlapped): copy each step's result to the host while the device goes on with the
next step."""
import gpuarr as ga


def run(step, x, steps):
    """step(x) returns (the next state, a one-element array to log), both on x's device.
    Run `steps` steps from x. After each step, start copying its logged value to the
    host with a copy that does not wait for the device (the book's `non_blocking=True`),
    so the device computes the next step while the copy is queued. Do not read the
    values here and do not wait for a device: the caller reads them when it needs them.
    Return (the state after the last step, a list of the host copies of the logged
    values, one per step, in order)."""
    # TODO
    raise NotImplementedError
