"""gpuarr.random (placeholder until written)."""
__all__ = []


def rand(*shape, device=None, dtype=None):
    raise NotImplementedError


def randn(*shape, device=None, dtype=None):
    raise NotImplementedError
