"""JAX's device functions over gpuarr: ``devices``, ``device_count``, ``device_put``."""
import gpuarr

from .._shim import unwrap
from ._array import Array


def devices(backend=None):
    """devices(backend=None)

    The GPUs (JAX's default backend when there is one), else the CPU; or those of
    `backend` ('cpu', 'gpu'), where an absent one raises RuntimeError, as in JAX."""
    gpus = [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]
    if backend is None:
        return gpus or [gpuarr.cpu()]
    if backend == "cpu":
        return [gpuarr.cpu()]
    if backend in ("gpu", "cuda"):
        if not gpus:
            raise RuntimeError("Unknown backend: 'gpu' requested, but no GPU is present "
                               "(set GPUARR_SIMULATE_GPUS=2 to simulate two)")
        return gpus
    raise RuntimeError(f"Unknown backend {backend!r}: use 'cpu' or 'gpu'")


def device_count(backend=None):
    """device_count(backend=None)

    ``len(devices(backend))``."""
    return len(devices(backend))


def default_device():
    """Where new arrays go: the first of ``devices()``."""
    return devices()[0]


def device_put(x, device=None):
    """device_put(x, device=None)

    x on `device` (default: the default device): x itself when already there, else a
    copy; Python or NumPy data become an array there. A tree of them (dicts, lists,
    tuples: a Flax parameter tree) is moved leaf by leaf, as in JAX."""
    where = default_device() if device is None else device
    if isinstance(x, dict):
        return {k: device_put(v, where) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and any(isinstance(v, (Array, dict, list, tuple))
                                            for v in x):
        return type(x)(device_put(v, where) for v in x)
    if isinstance(x, Array):
        moved = unwrap(x).to(where)
        return x if moved is unwrap(x) else Array(moved)
    return Array(gpuarr.asarray(x, device=where))
