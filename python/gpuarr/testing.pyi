"""Type stubs of gpuarr.testing."""
import contextlib
from typing import Any

from . import _TransferCounter
from ._core import Array, _DeviceLike

__all__ = ["assert_allclose", "assert_array_equal", "assert_transfers"]

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
