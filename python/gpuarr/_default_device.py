"""gpuarr.default_device(d): the device for arrays that libraries make without one.

Libraries that take array API arrays (SciPy with ``SCIPY_ARRAY_API=1``, xarray,
array-api-extra) make helper arrays with ``xp.asarray(...)``, ``xp.zeros(...)`` and
so on without ``device=``. Those go to the default device, cpu() unless set, and
meeting a GPU array there is a DeviceMismatchError, as the standard asks. Running the
library inside ``with gpuarr.default_device(x.device):`` puts them beside x.

The scope is the one ``with gpu(i):`` opens (a ContextVar in the binding,
py_device.c): it belongs to the running thread or asyncio task, and its exit restores
what was current at its entry. This function is the spelling a library user looks
for, and it checks its argument.
"""
import contextlib

from ._core import Device


@contextlib.contextmanager
def default_device(device):
    """default_device(device)

    ``with gpuarr.default_device(d):`` makes ``d`` the device of arrays created
    without ``device=`` inside the block, for this thread or asyncio task only, and
    restores the previous default at its end (as ``with gpu(i):``). The recipe for
    libraries that make helper arrays without a device::

        with gpuarr.default_device(x.device):
            y = scipy.signal.sosfilt(sos, x)   # SCIPY_ARRAY_API=1
    """
    if not isinstance(device, Device):
        raise TypeError(f"default_device: expected a gpuarr.Device such as gpuarr.gpu(0) "
                        f"or x.device, got {type(device).__name__}")
    with device:
        yield device
