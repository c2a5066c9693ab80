"""Type stubs of gpuarr.linalg."""
from collections.abc import Sequence
from typing import Literal, SupportsIndex

from ._core import Array, _Axis
from ._core import matmul as matmul

__all__ = ["matmul", "tensordot", "vecdot", "norm", "vector_norm", "matrix_norm"]

def tensordot(
    x1: Array,
    x2: Array,
    /,
    *,
    axes: int | tuple[Sequence[SupportsIndex], Sequence[SupportsIndex]] = 2,
) -> Array: ...
def vecdot(x1: Array, x2: Array, /, *, axis: SupportsIndex = -1) -> Array: ...
def norm(
    x: Array,
    ord: float | Literal["fro", "nuc"] | None = None,
    axis: _Axis = None,
    keepdims: bool = False,
) -> Array: ...
def vector_norm(x: Array, /, *, axis: _Axis = None, keepdims: bool = False, ord: float = 2) -> Array: ...
def matrix_norm(
    x: Array, /, *, keepdims: bool = False, ord: float | Literal["fro", "nuc"] = "fro"
) -> Array: ...
