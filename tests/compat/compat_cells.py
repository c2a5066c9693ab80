"""Run a book's cells as printed, after one import line: the helper of tests/compat/.

A cell is the book's code as a string; `Notebook(imports).run(cell)` executes it in the
notebook's namespace (shared by its cells, as a Jupyter kernel's is) and returns what
the notebook would show: the value of a last bare expression (Out) and what print wrote
(stdout)."""
import ast
import contextlib
import io
import textwrap

import pytest

import gpuarr

# The book's own reason for a cell that names a second GPU (d2l, "GPUs": "To run the
# programs in this section, you need at least two GPUs."), on conftest's allow-list.
BOOK_TWO_GPUS = ("needs two GPUs (the book: \"To run the programs in this section, you "
                 "need at least two GPUs\")")


def needs_two_gpus():
    if gpuarr.num_gpus() < 2:
        pytest.skip(BOOK_TWO_GPUS)


class Notebook:
    """A namespace that starts with one edition's import line."""

    def __init__(self, imports):
        self.ns = {}
        exec(compile(textwrap.dedent(imports), "<imports>", "exec"), self.ns)

    def run(self, cell):
        """(Out, stdout) of `cell`: Out is None when the cell ends in a statement."""
        tree = ast.parse(textwrap.dedent(cell))
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(tree, "<cell>", "exec"), self.ns)
            value = (eval(compile(ast.Expression(last.value), "<cell>", "eval"), self.ns)
                     if last is not None else None)
        return value, out.getvalue()

    def __getitem__(self, name):
        return self.ns[name]
