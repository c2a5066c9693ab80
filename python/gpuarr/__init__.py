"""gpuarr: device-aware n-dimensional arrays for learning GPU computing.

Every array lives on one device, the CPU (``cpu()``) or one GPU (``gpu(i)``);
operations run where their operands live, and nothing moves between devices unless
you ask (``x.to(device)``, ``x.copyto(device)``, ``x.numpy()``).

Without a GPU, ``GPUARR_SIMULATE_GPUS=2`` (set before the first use of a GPU) gives
two simulated GPUs that follow every device rule. ``python -m gpuarr`` runs a guided
tour; ``gpuarr.info()`` says what this machine has.
"""
import os as _os
import sys as _sys

from . import _core
from ._core import (  # noqa: F401  (the public names of the C core)
    Array,
    CudaError,
    Device,
    DeviceMismatchError,
    DType,
    OutOfMemoryError,
    TransferWarning,
    bool,
    complex64,
    complex128,
    cpu,
    float16,
    float32,
    float64,
    get_default_device,
    gpu,
    int8,
    int16,
    int32,
    int64,
    num_gpus,
    reset_transfer_stats,
    set_default_device,
    synchronize,
    uint8,
    uint16,
    uint32,
    uint64,
)

# The CUDA plugin sits next to the compiled module (in an editable install that is
# not next to this file).
_core._set_plugin_dir(_os.path.dirname(_os.path.abspath(_core.__file__)))

# Leak checks (the test suite and CI set these; see tests/conftest.py): every array
# storage made from now on is recorded with a tag, and those still alive after the
# interpreter finished are appended to a report in that folder, one file per process.
if _os.environ.get("GPUARR_LEAK_REPORT_DIR"):
    _core._live_storages_enable(_os.path.join(_os.environ["GPUARR_LEAK_REPORT_DIR"],
                                              f"live.{_os.getpid()}"))
    _core._live_storages_tag(_os.environ.get("GPUARR_LEAK_TAG", "import of gpuarr"))

from ._devices import *  # noqa: E402,F401,F403
from ._creation import *  # noqa: E402,F401,F403
_core._register_asarray(asarray)  # noqa: E402,F405 (operators meet Python data: C calls this)
from ._elementwise import *  # noqa: E402,F401,F403
from ._reduce import *  # noqa: E402,F401,F403
from ._manipulation import *  # noqa: E402,F401,F403
from ._matmul import *  # noqa: E402,F401,F403
from ._inspection import *  # noqa: E402,F401,F403
from ._rearrange import *  # noqa: E402,F401,F403
from ._sorting import *  # noqa: E402,F401,F403
from ._nanfunctions import *  # noqa: E402,F401,F403
from ._numpy_helpers import *  # noqa: E402,F401,F403
from ._default_device import default_device  # noqa: E402,F401
from . import fft, linalg, random, special  # noqa: E402,F401
from .random import rand, randn  # noqa: E402,F401
from . import _printing, _methods  # noqa: E402,F401  (attach Python-level methods)
from . import _array_to  # noqa: E402,F401  (Array.to(dtype), .half(), .cuda() to the current GPU)
from . import cuda  # noqa: E402,F401
from ._info import info  # noqa: E402,F401
from ._events import Event, synchronize  # noqa: E402,F401  (synchronize also takes an Event)
from ._fuse import Fused, fuse  # noqa: E402,F401
from ._capture import Captured, capture  # noqa: E402,F401
from ._profiler import Profile, ProfileEvent, profile  # noqa: E402,F401
from ._perf_model import GPUModel, device_model, gpu_models  # noqa: E402,F401
from ._io import save, load  # noqa: E402,F401
from . import autograd  # noqa: E402,F401  (after the operations: it registers their formulas)
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: E402,F401
from . import nn, optim, parallel, testing  # noqa: E402,F401
from . import _numpy_protocol  # noqa: E402,F401  (np.exp(x), np.sum(x) on gpuarr arrays)
from . import _dask  # noqa: E402  (Dask arrays with gpuarr chunks)
_dask.install()


def _report_failures_at_exit():
    """Errors in queued work that nothing raised are reported at exit, as an uncaught
    exception is: printed to stderr, and the exit status becomes 1 (docs/DESIGN.md,
    "Failed queued work")."""
    text = _core._failures_at_exit()
    if text:
        _sys.stderr.write(text)
        _sys.stderr.flush()


import atexit as _atexit  # noqa: E402
_atexit.register(_report_failures_at_exit)

__version__ = "0.1.0"

newaxis = None

# The array API standard's constants (Python floats, as the standard specifies).
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
pi = 3.141592653589793

__array_api_version__ = "2024.12"
