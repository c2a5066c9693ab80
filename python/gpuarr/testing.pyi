"""Type stubs of gpuarr.testing."""
import contextlib
from typing import Any

from . import _TransferCounter
from ._core import Array, Device, _DeviceLike

__all__ = ["assert_allclose", "assert_array_equal", "assert_transfers", "count_kernels",
           "count_work", "assert_work", "WorkCounts", "assert_numpy", "assert_on_device",
           "describe"]

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
def describe(x: Any) -> str: ...
def assert_on_device(
    actual: Any,
    device: _DeviceLike,
    what: str = "the result",
    shape: tuple[int, ...] | None = None,
    dtype: Any = None,
) -> None: ...
def assert_numpy(
    actual: Any,
    what: str = "the result",
    shape: tuple[int, ...] | None = None,
    dtype: Any = None,
) -> None: ...
class assert_transfers(contextlib.AbstractContextManager[_TransferCounter]):
    limits: dict[str, int | None]
    waits_last: bool
    def __init__(
        self,
        max_h2d: int | None = None,
        max_d2h: int | None = None,
        max_d2d: int | None = None,
        max_syncs: int | None = None,
        max_h2d_bytes: int | None = None,
        max_d2h_bytes: int | None = None,
        waits_last: bool = False,
    ) -> None: ...
    def __enter__(self) -> _TransferCounter: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool: ...
    def check(self, why: str | None = None, **limits: int | None) -> None: ...

class WorkCounts:
    elementwise: int
    reductions: int
    matmuls: int
    random: int
    indexing: int
    sorting: int
    linalg: int
    fft: int
    def __init__(self, **counts: int) -> None: ...
    @property
    def total(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    __hash__: None  # type: ignore[assignment]

class _WorkBlock:
    devices: list[Device]
    def __init__(self, devices: list[Device]) -> None: ...
    def __getitem__(self, device: _DeviceLike) -> WorkCounts: ...

def count_work(*devices: _DeviceLike) -> contextlib.AbstractContextManager[_WorkBlock]: ...

class assert_work(contextlib.AbstractContextManager[_WorkBlock]):
    device: Device
    at_least: dict[str, int]
    elsewhere: int | None
    def __init__(self, device: _DeviceLike, elsewhere: int | None = None, **at_least: int) -> None: ...
    def __enter__(self) -> _WorkBlock: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool: ...

class _KernelCounts:
    device: Device
    supported: bool
    launches: int
    syncs: int
    h2d: int
    d2h: int
    max_grid_blocks: int
    graph_launches: int
    graph_kernels: int
    def __init__(self, device: Device, start: dict[str, int] | None) -> None: ...

def count_kernels(device: _DeviceLike) -> contextlib.AbstractContextManager[_KernelCounts]: ...
