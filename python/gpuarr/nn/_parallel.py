"""nn.DataParallel: one model trained over several devices, as PyTorch's.

Each forward copies the primary module's parameters and buffers to the other devices
(``gpuarr.parallel.broadcast``: the copies are autograd's, so a gradient computed on a
replica flows back into the primary parameter's ``.grad``, added to the others), cuts
the batch along axis 0 (``gpuarr.parallel.scatter``), runs one replica per device and
joins the outputs on the output device (``gpuarr.parallel.gather``). Nothing waits for
a device on the way: the replicas' work is queued on their own devices and runs at the
same time. ``loss.backward(); opt.step()`` on the primary module's parameters then
trains as on one device.
"""
import copy
from collections import OrderedDict

from .. import parallel
from .._core import Array, Device
from .._devices import try_all_gpus
from ._module import Module

__all__ = ["DataParallel"]


def _replicate(module, device, memo):
    """A shallow copy of ``module``'s tree whose parameters and buffers are copies on
    ``device`` (``memo``: id -> copy, so a parameter shared by two modules stays
    shared in the replica)."""
    def moved(x):
        if x is None:
            return None
        key = id(x)
        if key not in memo:
            memo[key] = x.to(device)
        return memo[key]

    rep = copy.copy(module)
    object.__setattr__(rep, "_parameters",
                       OrderedDict((k, moved(v)) for k, v in module._parameters.items()))
    object.__setattr__(rep, "_buffers",
                       OrderedDict((k, moved(v)) for k, v in module._buffers.items()))
    object.__setattr__(rep, "_modules", OrderedDict(
        (k, None if m is None else _replicate(m, device, memo))
        for k, m in module._modules.items()))
    return rep


class DataParallel(Module):
    """DataParallel(module, devices=None, output_device=None, dim=0)

    Run ``module`` over several devices: each call cuts its array arguments along
    ``dim`` into one near-equal chunk per device, runs a replica of ``module`` on
    each chunk (the parameters copied from ``module``, which must live on
    ``devices[0]``) and joins the outputs on ``output_device`` (default
    ``devices[0]``). Gradients reach ``module``'s own parameters, so an optimizer over
    ``net.parameters()`` trains it as on one device. ``devices=None`` takes every GPU
    (``gpuarr.try_all_gpus()``); with a single device, as on a machine without a GPU,
    the call is ``module``'s own. The model is ``net.module``; ``state_dict()`` keys
    start with ``"module."``, as in PyTorch."""

    def __init__(self, module, devices=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel() wraps a gpuarr.nn.Module, got "
                            f"{type(module).__name__}")
        devs = try_all_gpus() if devices is None else [Device(d) for d in devices]
        if not devs:
            raise ValueError("DataParallel() needs at least one device, got an empty list")
        if len(set(devs)) != len(devs):
            raise ValueError(f"DataParallel(): each device once, got {devs}")
        self.module = module
        object.__setattr__(self, "devices", devs)
        object.__setattr__(self, "output_device",
                           devs[0] if output_device is None else Device(output_device))
        object.__setattr__(self, "dim", dim)

    def _check_primary(self):
        primary = self.devices[0]
        for name, x in list(self.module.named_parameters()) + list(
                self.module.named_buffers()):
            if x.device != primary:
                raise RuntimeError(
                    f"DataParallel: the module's parameters and buffers must live on "
                    f"devices[0] = {primary!r}, but {name!r} is on {x.device!r} (call "
                    f"module.to({primary!r}) first)")

    def forward(self, *inputs):
        """forward(*inputs)

        The scattered batch through one replica per device, outputs gathered."""
        if len(self.devices) == 1:
            return self.module(*inputs)
        self._check_primary()
        arrays = [x for x in inputs if isinstance(x, Array)]
        if not arrays:
            raise TypeError("DataParallel: give at least one gpuarr array to cut into "
                            "chunks (the batch)")
        n = arrays[0].shape[self.dim] if arrays[0].ndim else 0
        # A batch smaller than the number of devices uses only the first n of them.
        devs = self.devices[:max(1, min(n, len(self.devices)))]
        if len(devs) == 1:
            out = self.module(*[_to(x, devs[0]) for x in inputs])
            return _to(out, self.output_device)
        cut = [parallel.scatter(x, devs, self.dim) if isinstance(x, Array)
               else [x] * len(devs) for x in inputs]
        replicas = [self.module] + [_replicate(self.module, d, {}) for d in devs[1:]]
        outs = [r(*args) for r, args in zip(replicas, zip(*cut))]
        if not isinstance(outs[0], Array):
            raise TypeError(f"DataParallel: the module must return one array, it "
                            f"returned {type(outs[0]).__name__}")
        return parallel.gather(outs, self.output_device, self.dim)

    def extra_repr(self):
        """extra_repr()

        ``devices=[...]`` for the repr."""
        return f"devices={self.devices}"


def _to(x, device):
    return x.to(device) if isinstance(x, Array) and x.device != device else x
