"""Type stubs of gpuarr.fft."""
from collections.abc import Sequence
from typing import Literal, SupportsIndex

from ._core import Array, _DeviceLike, _DTypeLike

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
           "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_Norm = Literal["backward", "ortho", "forward"]

def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward") -> Array: ...
def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward") -> Array: ...
def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward") -> Array: ...
def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward") -> Array: ...
def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward") -> Array: ...
def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward") -> Array: ...
def fftn(
    x: Array,
    /,
    *,
    s: Sequence[SupportsIndex] | None = None,
    axes: Sequence[SupportsIndex] | None = None,
    norm: _Norm = "backward",
) -> Array: ...
def ifftn(
    x: Array,
    /,
    *,
    s: Sequence[SupportsIndex] | None = None,
    axes: Sequence[SupportsIndex] | None = None,
    norm: _Norm = "backward",
) -> Array: ...
def rfftn(
    x: Array,
    /,
    *,
    s: Sequence[SupportsIndex] | None = None,
    axes: Sequence[SupportsIndex] | None = None,
    norm: _Norm = "backward",
) -> Array: ...
def irfftn(
    x: Array,
    /,
    *,
    s: Sequence[SupportsIndex] | None = None,
    axes: Sequence[SupportsIndex] | None = None,
    norm: _Norm = "backward",
) -> Array: ...
def fftfreq(
    n: int, /, *, d: float = 1.0, dtype: _DTypeLike | None = None, device: _DeviceLike | None = None
) -> Array: ...
def rfftfreq(
    n: int, /, *, d: float = 1.0, dtype: _DTypeLike | None = None, device: _DeviceLike | None = None
) -> Array: ...
def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array: ...
def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array: ...
