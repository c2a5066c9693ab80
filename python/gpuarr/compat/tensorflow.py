"""gpuarr.compat.tensorflow: the TensorFlow edition of the GPU chapter, on gpuarr.

    import gpuarr.compat.tensorflow as tf

TensorFlow's rules, where they differ from gpuarr's, are followed here:
- **Placement by scope.** ``with tf.device('/GPU:1'):`` makes new tensors there
  (gpuarr's ``with gpu(1):``); without a scope they are made on the first GPU when
  there is one (TensorFlow's default), else on the CPU. ``Z = X`` inside a scope does
  not move X: it is the same tensor.
- **Implicit copies.** An operation on tensors of two devices copies its operands to
  one device (the scope's, else the first operand's) and runs there: TensorFlow does
  this silently; gpuarr itself raises DeviceMismatchError. The copies are real copies
  and the transfer ledger counts them (``gpuarr.transfer_stats()``).
- ``x.device`` is TensorFlow's string ('/job:localhost/replica:0/task:0/device:GPU:0').
A name outside the chapter raises AttributeError naming gpuarr's spelling.
"""
import contextlib
import threading
import types

import gpuarr

from ._shim import Tensor as _Wrapper
from ._shim import outside, unwrap

__getattr__ = outside("tf", __name__)
float16, float32, float64, int32, int64 = (gpuarr.float16, gpuarr.float32, gpuarr.float64,
                                           gpuarr.int32, gpuarr.int64)


def _parse(name):
    """'/GPU:1', 'GPU:1', '/device:GPU:1', '/CPU:0', 'gpu:0' -> a gpuarr Device."""
    if isinstance(name, gpuarr.Device):
        return name
    spec = str(name).rsplit("/", 1)[-1]
    spec = spec[len("device:"):] if spec.lower().startswith("device:") else spec
    kind, _, num = spec.partition(":")
    kind = kind.upper()
    if kind == "CPU":
        return gpuarr.cpu()
    if kind == "GPU":
        return gpuarr.gpu(int(num or 0))
    raise ValueError(f"tf.device: cannot read {name!r}: write '/CPU:0' or '/GPU:<index>'")


def _default():
    return gpuarr.gpu(0) if gpuarr.num_gpus() > 0 else gpuarr.cpu()


def _here():
    """Where a new tensor goes: the innermost tf.device scope, else TensorFlow's default."""
    return gpuarr.get_default_device() if _depth() else _default()


_scopes = threading.local()  # tf.device scopes open in this thread (gpuarr's default
                              # device, per thread too, holds the place)


def _depth():
    return getattr(_scopes, "depth", 0)


class Tensor(_Wrapper):
    """Tensor(array)

    A gpuarr array in TensorFlow's spelling: ``device`` is a string, ``numpy()`` a host
    copy, and operations on two devices copy implicitly (see the module's docstring)."""

    __slots__ = ()

    @property
    def device(self):
        """TensorFlow's name of the device: '/job:localhost/replica:0/task:0/device:GPU:0'."""
        d = self._a.device
        kind = "CPU" if d.type == "cpu" else "GPU"
        return f"/job:localhost/replica:0/task:0/device:{kind}:{d.index}"

    def _operands(self, others):
        arrays = [self._a] + [unwrap(o) for o in others]
        devices = {a.device for a in arrays if isinstance(a, gpuarr.Array)}
        if len(devices) <= 1:
            return arrays
        target = gpuarr.get_default_device() if _depth() else self._a.device
        return [a.to(target) if isinstance(a, gpuarr.Array) else a for a in arrays]


class _DeviceScope:
    """What ``tf.device(name)`` returns: a context manager placing new tensors."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        self.device.__enter__()  # gpuarr's `with gpu(i):` sets the default device
        _scopes.depth = _depth() + 1
        return self

    def __exit__(self, *exc):
        _scopes.depth = _depth() - 1
        return self.device.__exit__(*exc)

    def __repr__(self):
        return f"tf.device({self.device!r})"


def device(device_name):
    """device(device_name)

    A scope that places new tensors on '/GPU:i' or '/CPU:0'."""
    return _DeviceScope(_parse(device_name))


def _new(fn, *args, dtype=None):
    return Tensor(fn(*args, dtype=dtype, device=_here()))


def constant(value, dtype=None):
    """constant(value, dtype=None)

    A tensor of Python or NumPy data, placed by the scope."""
    return _new(gpuarr.array, value, dtype=dtype)


def ones(shape, dtype=float32):
    """ones(shape, dtype=float32)

    Ones of `shape`, placed by the scope."""
    return _new(gpuarr.ones, shape, dtype=dtype)


def zeros(shape, dtype=float32):
    """zeros(shape, dtype=float32)

    Zeros of `shape`, placed by the scope."""
    return _new(gpuarr.zeros, shape, dtype=dtype)


def _uniform(shape, minval=0, maxval=None, dtype=float32, seed=None):
    """uniform(shape, minval=0, maxval=None, dtype=float32, seed=None)

    Uniform [minval, maxval) values (maxval 1 by default), placed by the scope."""
    return Tensor(gpuarr.random.uniform(minval, 1.0 if maxval is None else maxval,
                                        size=tuple(shape), dtype=dtype, device=_here()))


def _normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None):
    """normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None)

    Normal values, placed by the scope."""
    return Tensor(gpuarr.random.normal(mean, stddev, size=tuple(shape), dtype=dtype,
                                       device=_here()))


random = types.SimpleNamespace(uniform=_uniform, normal=_normal)


def _binary(fn):
    def call(a, b):
        a = a if isinstance(a, Tensor) else constant(a)
        x, y = a._operands([b])
        return Tensor(fn(x, y))
    call.__name__, call.__doc__ = fn.__name__, fn.__doc__
    return call


add, multiply, matmul = _binary(gpuarr.add), _binary(gpuarr.multiply), _binary(gpuarr.matmul)


def exp(x):
    """exp(x)

    e to the x, where x lives."""
    return Tensor(gpuarr.exp(unwrap(x)))


def reduce_sum(x, axis=None):
    """reduce_sum(x, axis=None)

    The sum, where x lives."""
    return Tensor(gpuarr.sum(unwrap(x), axis=axis))


class _PhysicalDevice(types.SimpleNamespace):
    def __repr__(self):
        return f"PhysicalDevice(name='{self.name}', device_type='{self.device_type}')"


def _list_physical_devices(device_type=None):
    """list_physical_devices(device_type=None)

    The CPU and each GPU (all kinds gpuarr has), or those of `device_type`."""
    out = [_PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")]
    out += [_PhysicalDevice(name=f"/physical_device:GPU:{i}", device_type="GPU")
            for i in range(gpuarr.num_gpus())]
    return [d for d in out if device_type is None or d.device_type == device_type.upper()]


config = types.SimpleNamespace(list_physical_devices=_list_physical_devices,
                               experimental=types.SimpleNamespace(
                                   list_physical_devices=_list_physical_devices))


class MirroredStrategy:
    """MirroredStrategy(devices=None)

    TensorFlow mirrors variables on every GPU; here (one copy of each variable) a
    model made in ``scope()`` keeps its variables on the first GPU (or the CPU), the
    device TensorFlow reports for a mirrored variable."""

    def __init__(self, devices=None):
        self.devices = [_parse(d) for d in devices] if devices else \
            ([gpuarr.gpu(i) for i in range(gpuarr.num_gpus())] or [gpuarr.cpu()])

    @contextlib.contextmanager
    def scope(self):
        """scope()

        Variables made inside live on the strategy's first device."""
        with device(self.devices[0]):
            yield self


distribute = types.SimpleNamespace(MirroredStrategy=MirroredStrategy)


class _Variable(Tensor):
    """A layer's weight: a tensor whose ``device`` is TensorFlow's string."""

    __slots__ = ()


class Dense:
    """Dense(units, activation=None, use_bias=True)

    ``x @ kernel + bias``, with ``kernel`` of shape (input size, units) made at the
    first call (Glorot uniform, as Keras) on the device current when the layer was
    made (a strategy's scope), else TensorFlow's default device."""

    def __init__(self, units, activation=None, use_bias=True):
        if activation not in (None, "relu"):
            raise ValueError(f"Dense: activation {activation!r} is outside the GPU "
                             f"chapter: use None or 'relu'")
        self.units, self.activation, self.use_bias = int(units), activation, use_bias
        self.home = _here()
        self.weights = []

    def __call__(self, x):
        x = x if isinstance(x, Tensor) else constant(x)
        if not self.weights:
            n = x.shape[-1]
            limit = (6.0 / (n + self.units)) ** 0.5
            kernel = gpuarr.random.uniform(-limit, limit, size=(n, self.units),
                                           device=self.home)
            self.weights = [_Variable(kernel)]
            if self.use_bias:
                self.weights.append(_Variable(gpuarr.zeros((self.units,), device=self.home)))
        y = x @ self.weights[0]
        if self.use_bias:
            y = y + self.weights[1]
        return Tensor(gpuarr.maximum(y._a, 0)) if self.activation == "relu" else y


class Sequential:
    """Sequential(layers=None)

    Layers run in order; ``layers`` is their list."""

    def __init__(self, layers=None):
        self.layers = list(layers or [])

    def add(self, layer):
        """add(layer)

        Append a layer."""
        self.layers.append(layer)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


keras = types.SimpleNamespace(layers=types.SimpleNamespace(Dense=Dense),
                              models=types.SimpleNamespace(Sequential=Sequential),
                              Sequential=Sequential)
