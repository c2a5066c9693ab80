"""Modeled GPU time: ``gpuarr.device_model(d)``, the performance model of a named GPU
that simulated GPUs can carry (``GPUARR_SIMULATE_GPUS=2:T4``,
``simulate_gpus_if_none(2, model="T4")``); docs/modeled_time.md.

The model itself (its figures, the clocks, the roofline) lives in the core
(csrc/runtime/ga_perf_model.c), so that the profiler, events and this module read one
clock."""
import dataclasses

from . import _core

__all__ = ["GPUModel", "device_model", "gpu_models"]


@dataclasses.dataclass(frozen=True)
class GPUModel:
    """GPUModel: a GPU's published figures, as gpuarr models it (docs/modeled_time.md
    gives each one's source). Bandwidths in bytes/s (``link_bandwidth``: host <->
    device, one direction), peaks in FLOP/s (``flops_*``: elementwise work and
    reductions on the CUDA cores; ``matmul_flops_*``: a matrix product as gpuarr's
    cuBLAS calls run it), latencies in seconds (assumed, not datasheet figures)."""

    name: str
    full_name: str
    memory_bandwidth: float
    link_bandwidth: float
    flops_float16: float
    flops_float32: float
    flops_float64: float
    matmul_flops_float16: float
    matmul_flops_float32: float
    matmul_flops_float64: float
    launch_latency: float
    sync_latency: float

    def roofline_ms(self, flops, nbytes, dtype="float32", matmul=False):
        """roofline_ms(flops, nbytes, dtype="float32", matmul=False)

        Milliseconds one operation takes on this model, as the modeled clock charges
        it: launch latency + max(nbytes / memory bandwidth, flops / peak of dtype)
        (a matmul's peak when ``matmul``). A prediction: nothing runs."""
        return 1e3 * _core._model_roofline(self.name, float(flops), float(nbytes),
                                           dtype, bool(matmul))

    def matmul_ms(self, m, n, k, dtype="float32"):
        """matmul_ms(m, n, k, dtype="float32")

        Milliseconds an (m, k) @ (k, n) product takes on this model: 2mnk FLOPs and
        the bytes of the three matrices, through ``roofline_ms``."""
        item = _core.DType(dtype).itemsize
        return self.roofline_ms(2.0 * m * n * k, item * (m * k + k * n + m * n),
                                dtype, matmul=True)


def _model(fields):
    return None if fields is None else GPUModel(**fields)


def device_model(device=None):
    """device_model(device=None)

    The performance model that ``device`` (the default device when None) carries, a
    ``GPUModel`` with its name and figures, or None: the CPU, and GPUs without a
    model (simulated without a name, emulated, or a real GPU that is not one of the
    modeled products)."""
    if device is None:
        device = _core.get_default_device()
    return _model(_core._device_model(device))


def gpu_models():
    """gpu_models()

    Every GPU model gpuarr knows (``GPUModel``s: T4, A100, H100)."""
    return [_model(f) for f in _core._gpu_models()]
