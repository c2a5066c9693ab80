"""gpuarr.parallel: moving one piece of work over several devices (the collectives).

The helpers of the book's "Training on Multiple GPUs" section, as ``torch.cuda.comm``
and MXNet's ``split_and_load`` give them:

- ``scatter(x, devices, axis=0)``: ``x`` cut into near-equal chunks, one per device;
- ``gather(arrays, device, axis=0)``: the chunks joined again on one device;
- ``broadcast(x, devices)``: a copy of ``x`` on every device;
- ``reduce_add(arrays, device)``: the sum of same-shaped arrays, on one device;
- ``allreduce(arrays)``: every array becomes that sum, in place, on its own device.

Each is made of ordinary copies (``Array.to``, ``Array.copyto``) and kernels, so it is
queued on the devices' queues without a host wait, the transfer ledger counts a copy
between two GPUs as a device->device (peer) copy and one from or to the host as such,
and autograd follows scatter, gather, broadcast and reduce_add (``nn.DataParallel`` is
made of them). A chunk, or a copy, that already lives on its target device is not
copied: ``scatter`` gives a view of ``x`` there and ``broadcast`` gives ``x`` itself.
With one device (a machine without a GPU: ``[gpuarr.cpu()]``) they do no copy at all.
"""
from ._core import Array, Device
from ._manipulation import concat

__all__ = ["scatter", "gather", "broadcast", "reduce_add", "allreduce", "chunk_sizes"]


def _devices(devices, fn):
    if isinstance(devices, (str, Device)) or not hasattr(devices, "__iter__"):
        raise TypeError(f"{fn}() takes a list of devices such as [gpu(0), gpu(1)], got "
                        f"{type(devices).__name__}")
    out = [Device(d) for d in devices]
    if not out:
        raise ValueError(f"{fn}() needs at least one device, got an empty list")
    return out


def _arrays(arrays, fn):
    if isinstance(arrays, Array) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{fn}() takes a list of gpuarr arrays, got "
                        f"{type(arrays).__name__}")
    out = list(arrays)
    if not out:
        raise ValueError(f"{fn}() needs at least one array, got an empty list")
    for i, a in enumerate(out):
        if not isinstance(a, Array):
            raise TypeError(f"{fn}(): item {i} is a {type(a).__name__}, not a gpuarr "
                            "array (make one with gpuarr.asarray(...))")
    return out


def _same_shapes(arrays, fn):
    first = arrays[0]
    for i, a in enumerate(arrays[1:], 1):
        if tuple(a.shape) != tuple(first.shape) or a.dtype != first.dtype:
            raise ValueError(
                f"{fn}(): every array must have the shape and dtype of the first "
                f"({tuple(first.shape)}, {first.dtype}); item {i} has "
                f"({tuple(a.shape)}, {a.dtype})")


def _axis(axis, ndim, fn):
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{fn}(): axis must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fn}(): axis {axis} is out of bounds for an array of "
                         f"{ndim} dimension{'' if ndim == 1 else 's'}")
    return axis % ndim


def chunk_sizes(n, parts):
    """chunk_sizes(n, parts)

    The lengths ``scatter`` cuts ``n`` items into: ``parts`` near-equal ones, the
    first ``n % parts`` one longer (``numpy.array_split``'s rule), so ``[4, 3, 3]``
    for 10 items on 3 devices. A device may get 0 items when ``n < parts``."""
    base, extra = divmod(n, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def scatter(x, devices, axis=0):
    """scatter(x, devices, axis=0)

    Cut ``x`` along ``axis`` into ``len(devices)`` near-equal chunks (the first ones
    one longer when the length does not divide, as ``numpy.array_split``) and return
    a list with chunk ``i`` on ``devices[i]``. A chunk that stays on ``x``'s device
    is a view of ``x``; the others are copies, queued without a host wait.
    Gradients flow back to ``x``."""
    if not isinstance(x, Array):
        raise TypeError(f"scatter() takes a gpuarr array, got {type(x).__name__}")
    devs = _devices(devices, "scatter")
    if x.ndim == 0:
        raise ValueError("scatter() cannot cut a 0-d array: give an array with an axis "
                         "to cut along")
    axis = _axis(axis, x.ndim, "scatter")
    out, start = [], 0
    for dev, size in zip(devs, chunk_sizes(x.shape[axis], len(devs))):
        index = (slice(None),) * axis + (slice(start, start + size),)
        start += size
        out.append(_move(x[index], dev))
    return out


def _move(x, device):
    return x if x.device == device else x.to(device)


def gather(arrays, device, axis=0):
    """gather(arrays, device, axis=0)

    Join ``arrays`` (one per device, equal in every dimension but ``axis``) along
    ``axis`` into one new array on ``device``: ``scatter``'s inverse. Gradients
    flow back to each chunk on its own device."""
    arrays = _arrays(arrays, "gather")
    device = Device(device)
    axis = _axis(axis, arrays[0].ndim, "gather") if arrays[0].ndim else axis
    return concat([_move(a, device) for a in arrays], axis=axis)


def broadcast(x, devices):
    """broadcast(x, devices)

    A list with a copy of ``x`` on each of ``devices`` (``x`` itself where it
    already lives). Gradients of the copies add up in ``x``'s gradient."""
    if not isinstance(x, Array):
        raise TypeError(f"broadcast() takes a gpuarr array, got {type(x).__name__}")
    return [_move(x, d) for d in _devices(devices, "broadcast")]


def reduce_add(arrays, device):
    """reduce_add(arrays, device)

    The elementwise sum of ``arrays`` (one shape and dtype; usually one per device)
    as a new array on ``device``: each array is copied there once and added."""
    arrays = _arrays(arrays, "reduce_add")
    _same_shapes(arrays, "reduce_add")
    device = Device(device)
    total = _move(arrays[0], device)
    if len(arrays) == 1:
        return total.copy() if total is arrays[0] else total
    for a in arrays[1:]:
        total = total + _move(a, device)
    return total


def allreduce(arrays):
    """allreduce(arrays)

    Replace every array of ``arrays`` (one shape and dtype, each on its own device)
    by their elementwise sum, in place, and return the list. The sum is formed on the
    first array's device and copied back to each other device: 2 (n - 1) copies for
    n arrays on n GPUs, all queued without a host wait (the book's from-scratch
    ``allreduce``; a ring would move less data per link, which matters only on real
    links between many GPUs). Not followed by autograd (it writes in place): use it
    on gradients, as training from scratch does."""
    arrays = _arrays(arrays, "allreduce")
    _same_shapes(arrays, "allreduce")
    if len(arrays) == 1:
        return arrays
    total = reduce_add(arrays, arrays[0].device)
    for a in arrays:
        total.copyto(a)
    return arrays
