"""Type stubs of gpuarr.testing."""
import contextlib
from typing import Any

from . import _TransferCounter
from ._core import Array, Device, _DeviceLike

__all__ = ["assert_allclose", "assert_array_equal", "assert_transfers", "count_kernels"]

def assert_allclose(
    actual: Array | Any,
    desired: Array | Any,
    rtol: float | None = None,
    atol: float = 0,
    equal_nan: bool = True,
    err_msg: str = "",
    device: _DeviceLike | None = None,
) -> None: ...
def assert_array_equal(
    actual: Array | Any,
    desired: Array | Any,
    err_msg: str = "",
    strict: bool = False,
    device: _DeviceLike | None = None,
) -> None: ...
class assert_transfers(contextlib.AbstractContextManager[_TransferCounter]):
    def __init__(
        self,
        max_h2d: int | None = None,
        max_d2h: int | None = None,
        max_d2d: int | None = None,
        max_syncs: int | None = None,
        max_h2d_bytes: int | None = None,
        max_d2h_bytes: int | None = None,
    ) -> None: ...
    def __enter__(self) -> _TransferCounter: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool: ...

class _KernelCounts:
    device: Device
    supported: bool
    launches: int
    syncs: int
    h2d: int
    d2h: int
    max_grid_blocks: int
    def __init__(self, device: Device, start: dict[str, int] | None) -> None: ...

def count_kernels(device: _DeviceLike) -> contextlib.AbstractContextManager[_KernelCounts]: ...
