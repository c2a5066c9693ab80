"""``jax.tree_util`` over the trees the chapter meets: dicts, lists and tuples of arrays
(a Flax parameter tree), with anything else a leaf. Written here because the shim's
trees are plain Python containers; JAX's registry of node types is outside the
chapter."""
from .._shim import outside

__getattr__ = outside("jax.tree_util", __name__)


def tree_map(f, tree, *rest):
    """tree_map(f, tree, *rest)

    A tree of the same structure with f(leaf, *the leaves of `rest` at the same place)."""
    if isinstance(tree, dict):
        return {k: tree_map(f, v, *(r[k] for r in rest)) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(tree_map(f, v, *(r[i] for r in rest)) for i, v in enumerate(tree))
    return f(tree, *rest)


def tree_leaves(tree):
    """tree_leaves(tree)

    The leaves in order (a dict's in its keys' sorted order, as JAX)."""
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in tree_leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in tree_leaves(v)]
    return [tree]
