"""Type stubs of gpuarr.random (Philox: the same seed gives the same numbers on every
device)."""
from collections.abc import Sequence
from typing import SupportsIndex

from ._core import Array, _DeviceLike, _DTypeLike, _ShapeLike

__all__ = ["seed", "uniform", "normal", "integers", "rand", "randn", "get_state", "set_state"]

def seed(n: int | None = None) -> None: ...
def get_state() -> tuple[int, int]: ...
def set_state(state: tuple[int, int]) -> None: ...
def uniform(
    low: float = 0.0,
    high: float = 1.0,
    size: _ShapeLike | None = None,
    dtype: _DTypeLike | None = None,
    device: _DeviceLike | None = None,
    requires_grad: bool = False,
) -> Array: ...
def normal(
    loc: float = 0.0,
    scale: float = 1.0,
    size: _ShapeLike | None = None,
    dtype: _DTypeLike | None = None,
    device: _DeviceLike | None = None,
    requires_grad: bool = False,
) -> Array: ...
def integers(
    low: int,
    high: int | None = None,
    size: _ShapeLike | None = None,
    dtype: _DTypeLike | None = None,
    device: _DeviceLike | None = None,
    requires_grad: bool = False,
) -> Array: ...
def rand(
    *shape: SupportsIndex | Sequence[SupportsIndex],
    device: _DeviceLike | None = None,
    dtype: _DTypeLike | None = None,
    requires_grad: bool = False,
) -> Array: ...
def randn(
    *shape: SupportsIndex | Sequence[SupportsIndex],
    device: _DeviceLike | None = None,
    dtype: _DTypeLike | None = None,
    requires_grad: bool = False,
) -> Array: ...
