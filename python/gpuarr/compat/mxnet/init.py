"""``mxnet.init``: how ``initialize(init=...)`` draws a layer's weights."""
import gpuarr

from .._shim import outside

__getattr__ = outside("init", __name__)


class Normal:
    """Normal(sigma=0.01)

    Weights drawn from N(0, sigma^2) (Gluon's default initializer is Uniform(0.07))."""

    def __init__(self, sigma=0.01):
        self.sigma = float(sigma)

    def __call__(self, shape, device):
        return gpuarr.random.normal(0.0, self.sigma, size=shape, device=device)


class Uniform:
    """Uniform(scale=0.07)

    Weights drawn from U(-scale, scale), Gluon's default."""

    def __init__(self, scale=0.07):
        self.scale = float(scale)

    def __call__(self, shape, device):
        return gpuarr.random.uniform(-self.scale, self.scale, size=shape, device=device)


class Constant:
    """Constant(value)

    Every weight `value`."""

    def __init__(self, value):
        self.value = float(value)

    def __call__(self, shape, device):
        return gpuarr.full(shape, self.value, device=device)


def Zero():
    """Zero()

    Every weight 0."""
    return Constant(0.0)


def One():
    """One()

    Every weight 1."""
    return Constant(1.0)
