"""Losses as modules. A loss with class weights holds them as a buffer, so it must
move with the model: ``criterion.to(device)`` / ``criterion.cuda()`` (forgetting it
raises DeviceMismatchError naming the buffer and that fix)."""
from .._core import Array
from . import functional as F
from ._module import Module

__all__ = ["MSELoss", "CrossEntropyLoss"]


def _reduction(reduction, name):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")
    return reduction


class MSELoss(Module):
    """MSELoss(reduction='mean')

    ``loss(input, target)``: the squared error, averaged, summed or per element
    (``nn.functional.mse_loss``). input and target must have the same shape."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = _reduction(reduction, "MSELoss")

    def forward(self, input, target):
        """forward(input, target)

        ``mse_loss(input, target, reduction)``."""
        return F.mse_loss(input, target, self.reduction)

    def extra_repr(self):
        """extra_repr()

        ``reduction=...`` when not the default."""
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class CrossEntropyLoss(Module):
    """CrossEntropyLoss(weight=None, ignore_index=-100, reduction='mean')

    ``loss(logits, target)``: the cross-entropy of logits of shape (N, C) against
    class indices (N,) or class probabilities (N, C), through a stable log-softmax
    on the logits' device (``nn.functional.cross_entropy``). ``weight`` (C,) is a
    buffer: it moves with ``criterion.to(device)`` / ``criterion.cuda()``, and must be
    on the logits' device."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__()
        if weight is not None and not isinstance(weight, Array):
            raise TypeError(f"CrossEntropyLoss(weight=...) takes a gpuarr array, got "
                            f"{type(weight).__name__}")
        self.register_buffer("weight", weight)
        self.ignore_index = int(ignore_index)
        self.reduction = _reduction(reduction, "CrossEntropyLoss")

    def forward(self, input, target):
        """forward(input, target)

        ``cross_entropy(input, target, weight, ignore_index, reduction)``; a
        ``weight`` buffer on another device than ``input`` raises
        DeviceMismatchError that says to move the loss."""
        fix = None
        if self.weight is not None and isinstance(input, Array):
            dev = input.device
            move = "criterion.cpu()" if dev.type == "cpu" else (
                "criterion.cuda()" if dev.index == 0 else f"criterion.cuda({dev.index})")
            fix = (f"the buffer 'weight' of {type(self).__name__} must live with the "
                   f"data: move the loss once, as the model, with "
                   f"criterion.to({dev!r}) (or {move})")
        return F._cross_entropy(input, target, self.weight, self.ignore_index,
                                self.reduction, fix)

    def extra_repr(self):
        """extra_repr()

        The non-default settings."""
        parts = []
        if self.ignore_index != -100:
            parts.append(f"ignore_index={self.ignore_index}")
        if self.reduction != "mean":
            parts.append(f"reduction={self.reduction!r}")
        return ", ".join(parts)
