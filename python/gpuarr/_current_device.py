"""The current GPU of a thread or asyncio task: where a bare ``.cuda()`` goes.

PyTorch's rule, so that its recipes hold as printed: ``gpuarr.cuda.set_device(1)``
(or ``with gpuarr.cuda.device(1):``) makes ``x.cuda()`` and ``net.cuda()`` go to
gpu(1) without naming it. It does not change where new arrays go (that is the default
device, ``set_default_device`` / ``with gpu(i):``), as in PyTorch. ``with gpu(i):`` and
``set_default_device(gpu(i))`` make gpu(i) current too: a default device scope entered
after ``set_device`` wins inside it, ``set_device`` called inside a scope wins over
that scope, and of ``set_device`` and ``set_default_device(gpu(i))`` the later wins.

Both live in ``contextvars.ContextVar``s, so each thread and each asyncio task has its
own, as CUDA's current device is per thread. A new thread starts at gpu(0) (or at
its default device when that is a GPU).
"""
import contextvars

from . import _core

__all__ = ["current_device", "set_device", "device"]

# (index, the default device scope node current when it was set, how many times
# set_default_device had been called then): the scope tells whether a `with gpu(i):`
# was entered since, the count whether set_default_device was called since
# (csrc/binding/py_device.c keeps both); either makes the default device current.
_current = contextvars.ContextVar("gpuarr.current_gpu", default=None)
_scope = _core._default_device_scope
_sets = _core._default_device_sets


def _mark(index):
    return (index, _scope.get(None), _sets())


def _index(d, what):
    """The GPU number of ``d`` (an int, a GPU Device, or a string such as 'cuda:1')."""
    if isinstance(d, bool) or not isinstance(d, (int, str, _core.Device)):
        raise TypeError(f"{what}: expected a GPU number or a GPU device such as "
                        f"gpuarr.gpu(1), not {type(d).__name__}")
    if not isinstance(d, int):
        dev = _core.Device(d)
        if dev.type != "gpu":
            raise ValueError(f"{what}: {dev!r} is not a GPU; the current device is "
                             f"always a GPU (use gpuarr.set_default_device(cpu()) to "
                             f"make new arrays go to the CPU)")
        d = dev.index
    if d < 0:
        raise ValueError(f"{what}: GPU numbers start at 0, got {d}")
    if d >= _core.num_gpus():
        _core._device_info(_core.gpu(d))  # raises the registry's error: which exist
    return d


def current_device():
    """current_device()

    The number of the current GPU of this thread or task (0 unless changed), where a
    bare ``x.cuda()`` and ``net.cuda()`` go."""
    cur = _current.get()
    scope = _scope.get(None)
    if cur is not None and cur[1] is scope and cur[2] == _sets():
        return cur[0]
    default = _core.get_default_device()
    if default.type == "gpu":
        return default.index
    return cur[0] if cur is not None else 0


def set_device(device):
    """set_device(device)

    Make GPU ``device`` (a number, ``gpu(i)`` or 'cuda:1') current in this thread or
    task: ``x.cuda()`` and ``net.cuda()`` go there from now on. New arrays still go to
    the default device (``set_default_device``). Raises the usual device error for a
    GPU that does not exist."""
    _current.set(_mark(_index(device, "set_device")))


class device:
    """device(device)

    ``with gpuarr.cuda.device(1):`` makes gpu(1) current inside the block (as
    ``set_device``), and puts back the previous one at its end. ``None`` changes
    nothing."""

    def __init__(self, device):
        self.index = None if device is None else _index(device, "gpuarr.cuda.device")
        self._token = None

    def __enter__(self):
        if self.index is not None:
            self._token = _current.set(_mark(self.index))
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self._token is not None:
            _current.reset(self._token)
            self._token = None
        return False
