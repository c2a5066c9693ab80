"""Exercise 3: log the Frobenius norm of A @ A for `steps` steps, and hand the log
back as a NumPy array. Keep the log on A's device: the grader allows a single
device-to-host copy, of the log itself."""
# Graded code may import: numpy (gpuarr and math always)
import gpuarr as ga


def norm_log(A, steps):
    """Return a NumPy array of `steps` values: the Frobenius norm of A @ A, computed
    (the product and the norm) at every step, on A's device, as a stand-in for a
    training loop that logs a metric each step. The log may be float32 or float64."""
    # TODO
    raise NotImplementedError
