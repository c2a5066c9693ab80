"""Type stubs of gpuarr.autograd (reverse-mode automatic differentiation)."""
import types
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from typing_extensions import Self

from ._core import Array, Node as Node, is_grad_enabled as is_grad_enabled

__all__ = ["backward", "grad", "record", "pause", "is_recording", "is_training",
           "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "Node"]

_FnT = TypeVar("_FnT", bound=Callable[..., Any])

class _GradMode:
    def __new__(cls, *args: Any, **kwargs: Any) -> Self: ...
    def __enter__(self) -> None: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: types.TracebackType | None,
    ) -> bool: ...
    def __call__(self, fn: _FnT) -> _FnT: ...

class no_grad(_GradMode):
    def __init__(self) -> None: ...

class enable_grad(_GradMode):
    def __init__(self) -> None: ...

class set_grad_enabled(_GradMode):
    def __init__(self, mode: bool, *, _now: bool = True) -> None: ...

class pause(_GradMode):
    def __init__(self, train_mode: bool = False) -> None: ...

class record:
    def __init__(self, train_mode: bool = True) -> None: ...
    def __enter__(self) -> None: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: types.TracebackType | None,
    ) -> bool: ...
    def __call__(self, fn: _FnT) -> _FnT: ...

def is_recording() -> bool: ...
def is_training() -> bool: ...
def backward(
    tensors: Array | Sequence[Array],
    grad_tensors: Array | Sequence[Array | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Sequence[Array] | None = None,
) -> None: ...
def grad(
    outputs: Array | Sequence[Array],
    inputs: Array | Sequence[Array],
    grad_outputs: Array | Sequence[Array | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Array | None, ...]: ...
