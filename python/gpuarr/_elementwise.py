"""(placeholder until written)."""
__all__ = []
