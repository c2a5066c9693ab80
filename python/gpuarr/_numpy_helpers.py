"""NumPy's shape helpers that array API clients call (atleast_1d, atleast_2d,
atleast_3d): views of their input on its device, with NumPy's rules for where the
new axes of length 1 go.
"""
from ._core import Array

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d"]


def _ga():
    import gpuarr  # the public functions: gpuarr/__init__ imports this module after them
    return gpuarr


def _one(a, n, name):
    ga = _ga()
    if not isinstance(a, Array):
        # Python scalars and lists become arrays on the default device, as
        # gpuarr.asarray makes them
        a = ga.asarray(a)
    if a.ndim >= n:
        return a
    shape = tuple(a.shape)
    if n == 3 and a.ndim == 1:
        shape = (1,) + shape + (1,)   # NumPy: (N,) -> (1, N, 1)
    elif n == 3 and a.ndim == 2:
        shape = shape + (1,)          # (M, N) -> (M, N, 1)
    else:
        shape = (1,) * (n - a.ndim) + shape
    return ga.reshape(a, shape)


def _atleast(arrays, n, name):
    if not arrays:
        raise TypeError(f"{name}() needs at least one array")
    out = tuple(_one(a, n, name) for a in arrays)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """atleast_1d(*arys)

    Each input with at least one dimension (a 0-d array becomes shape (1,)); one
    input gives an array, several give a tuple, as in NumPy."""
    return _atleast(arys, 1, "atleast_1d")


def atleast_2d(*arys):
    """atleast_2d(*arys)

    Each input with at least two dimensions: (N,) becomes (1, N)."""
    return _atleast(arys, 2, "atleast_2d")


def atleast_3d(*arys):
    """atleast_3d(*arys)

    Each input with at least three dimensions: (N,) becomes (1, N, 1) and (M, N)
    becomes (M, N, 1), as in NumPy."""
    return _atleast(arys, 3, "atleast_3d")
