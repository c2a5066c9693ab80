"""gpuarr.linalg (placeholder until written)."""
__all__ = []
