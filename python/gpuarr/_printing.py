"""repr() and str() of arrays, laid out exactly as NumPy lays them out.

A device array is printed from a host copy of only the elements that are shown: for
a summarised array (more than ``threshold`` elements) the corner blocks are gathered
on the device (``_core._summary_gather``) and copied to the host in one transfer, so
printing a 10^8-element GPU array moves a few hundred bytes, not 400 MB. NumPy formats
the elements (``numpy.array2string`` on that small host array); the summarised layout,
which NumPy can only compute from the whole array, is rebuilt here with NumPy's rules.
"""
import sys

import numpy as _np

from . import _core
from ._core import Array
from ._creation import asarray as _asarray
from ._methods import method

__all__ = []

# gpuarr's default dtypes of each kind: repr() leaves them implied.
_IMPLIED = {"float32", "int64", "bool", "complex64"}


def _host_values(x, what):
    """(NumPy array of the shown elements, summarised?) -- one transfer for a GPU."""
    opts = _np.get_printoptions()
    summarise = x.size > opts["threshold"]
    _core._capture_host_read(what)  # inside gpuarr.capture: refused, naming the door
    _core._warn_transfer(what, x)
    small = _core._summary_gather(x, opts["edgeitems"]) if summarise else x
    return small.numpy(), summarise


def _words(host):
    """Each shown element formatted by NumPy, padded as NumPy pads them together."""
    flat = host.reshape(-1)
    s = _np.array2string(flat, separator="\x01", threshold=sys.maxsize,
                         max_line_width=sys.maxsize, prefix="", suffix="")
    words = s[1:-1].split("\x01")
    out = _np.empty(len(words), dtype=object)
    out[:] = words
    return out.reshape(host.shape)


def _extend_line(s, line, word, width, next_prefix):
    if len(line) + len(word) > width and len(line) > len(next_prefix):
        s += line.rstrip() + "\n"
        line = next_prefix
    return s, line + word


def _summarised_string(host, shape, separator, prefix, suffix):
    """NumPy's _formatArray layout for an array of `shape` of which `host` holds the
    corners (leading items at non-negative, trailing at negative indices)."""
    opts = _np.get_printoptions()
    edge, width = opts["edgeitems"], opts["linewidth"] - len(suffix)
    words = _words(host)
    ndim = len(shape)

    def rec(index, indent, curr_width):
        axis = len(index)
        left = ndim - axis
        if left == 0:
            return words[index]
        next_indent, next_width = indent + " ", curr_width - 1
        n = shape[axis]
        summary = 2 * edge < n
        lead, trail = (edge, edge) if summary else (0, n)
        s = ""
        if left == 1:
            elem_width = curr_width - max(len(separator.rstrip()), 1)
            line = indent
            for i in range(lead):
                s, line = _extend_line(s, line, rec(index + (i,), next_indent, next_width),
                                       elem_width, indent)
                line += separator
            if summary:
                s, line = _extend_line(s, line, "...", elem_width, indent)
                line += separator
            for i in range(trail, 1, -1):
                s, line = _extend_line(s, line, rec(index + (-i,), next_indent, next_width),
                                       elem_width, indent)
                line += separator
            s, line = _extend_line(s, line, rec(index + (-1,), next_indent, next_width),
                                   elem_width, indent)
            s += line
        else:
            line_sep = separator.rstrip() + "\n" * (left - 1)
            for i in range(lead):
                s += indent + rec(index + (i,), next_indent, next_width) + line_sep
            if summary:
                s += indent + "..." + line_sep
            for i in range(trail, 1, -1):
                s += indent + rec(index + (-i,), next_indent, next_width) + line_sep
            s += indent + rec(index + (-1,), next_indent, next_width)
        return "[" + s[len(indent):] + "]"

    return rec((), " " + " " * len(prefix), width)


def _values_string(x, separator, prefix, suffix, what):
    host, summarised = _host_values(x, what)
    if summarised:
        return _summarised_string(host, x.shape, separator, prefix, suffix), summarised
    if host.ndim == 0 and separator == " ":
        return str(host[()]), summarised
    return _np.array2string(host, separator=separator, prefix=prefix,
                            suffix=suffix), summarised


@method("__repr__")
def _array_repr(self):
    """__repr__()

    ``array([1., 2.])``, with ``dtype=`` for non-default dtypes and ``device=`` for
    arrays that are not on the CPU (printing a device array is a transfer)."""
    prefix = "array("
    lst, summarised = _values_string(self, ", ", prefix, ")", "repr()")
    extras = []
    if (self.size == 0 and self.shape != (0,)) or summarised:
        extras.append(f"shape={self.shape}")
    if self.dtype.name not in _IMPLIED or self.size == 0:
        extras.append(f"dtype={self.dtype.name}")
    if self.device != _core.cpu():
        extras.append(f"device={self.device!r}")
    if self.grad_fn is not None:  # autograd, in PyTorch's words
        extras.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
    elif self.requires_grad:
        extras.append("requires_grad=True")
    if not extras:
        return prefix + lst + ")"
    arr_str = prefix + lst + ","
    extra_str = ", ".join(extras) + ")"
    last_line_len = len(arr_str) - (arr_str.rfind("\n") + 1)
    spacer = " "
    if last_line_len + len(extra_str) + 1 > _np.get_printoptions()["linewidth"]:
        spacer = "\n" + " " * len(prefix)
    return arr_str + spacer + extra_str


@method("__str__")
def _array_str(self):
    """__str__()

    The values as NumPy prints them (``[1. 2. 3.]``), followed by `` @gpu(i)`` for
    arrays that are not on the CPU."""
    s, _ = _values_string(self, " ", "", "", "str()")
    if self.device != _core.cpu():
        s += f" @{self.device!r}"
    return s


@method("__format__")
def _array_format(self, spec):
    """__format__(spec)

    As NumPy's: a 0-d array formats as its scalar (``f"{loss:.3f}"``, one counted
    device-to-host read for a device array); an array with more dimensions takes
    only the empty spec (``f"{x}"`` is ``str(x)``) and raises TypeError otherwise."""
    if self.ndim == 0:
        host, _ = _host_values(self, "format()")
        return format(host[()], spec)
    if spec:
        raise TypeError(f"unsupported format string passed to gpuarr.Array.__format__: "
                        f"{spec!r} (a format spec needs a 0-d array, this one has shape "
                        f"{tuple(self.shape)}; format its elements, e.g. "
                        f"x.numpy() or x[i])")
    return str(self)


# --- pickling (here because, like printing, it reads an array back to the host) ---------


def _rebuild(data, device):
    """Unpickle an array: its values on the device named ``device`` ("cpu", "gpu:1")."""
    try:
        dev = _core.Device(device)
        return _asarray(data, device=dev, copy=True)
    except (RuntimeError, ValueError) as e:
        raise RuntimeError(
            f"cannot unpickle this array onto {device}: {e}. Load it onto a device that "
            f"exists with gpuarr.load(path, device=gpuarr.cpu()), or set "
            f"GPUARR_SIMULATE_GPUS=N before the first use of a GPU to simulate the GPUs "
            f"it was saved from") from e


@method("__reduce__")
def _array_reduce(self):
    """__reduce__()

    Pickle support: the values (a host copy) and the device's name."""
    d = self.device
    name = "cpu" if d == _core.cpu() else f"gpu:{d.index}"
    return (_rebuild, (self.numpy(), name))
