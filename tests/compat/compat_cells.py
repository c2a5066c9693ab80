"""Run a book's cells as printed, after one import line: the helper of tests/compat/.

A cell is the book's code as a string; `Notebook(imports).run(cell)` executes it in the
notebook's namespace (shared by its cells, as a Jupyter kernel's is) and returns what
the notebook would show: the value of a last bare expression (Out) and what print wrote
(stdout).

"As printed" is a tab of d2l.ai's page: d2lbook keeps, in a cell shared by several tabs,
the branch of each `if tab.selected('<framework>'):` that the tab names. The import
cell's lines name their modules under gpuarr.compat (`from d2l import torch as d2l`
becomes `from gpuarr.compat.d2l import torch as d2l`); no other line changes.
docs/porting-cells.md lists every cell and the test that runs it."""
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


# The cells printed once for every tab (d2l-en master, "GPUs": `%%tab all`).
TRY_GPU = """
def try_gpu(i=0):  #@save
    \"\"\"Return gpu(i) if exists, otherwise return cpu().\"\"\"
    if num_gpus() >= i + 1:
        return gpu(i)
    return cpu()

def try_all_gpus():  #@save
    \"\"\"Return all available GPUs, or [cpu(),] if no GPU exists.\"\"\"
    return [gpu(i) for i in range(num_gpus())]

try_gpu(), try_gpu(10), try_all_gpus()
"""
SUM = "Y + Z"
# The Trainer cell of the MXNet and PyTorch tabs (`%%tab mxnet, pytorch`) up to
# prepare_model, whose last branch differs by tab; the JAX tab prints these two alone.
TRAINER_GPUS = """
@d2l.add_to_class(d2l.Trainer)  #@save
def __init__(self, max_epochs, num_gpus=0, gradient_clip_val=0):
    self.save_hyperparameters()
    self.gpus = [d2l.gpu(i) for i in range(min(num_gpus, d2l.num_gpus()))]

@d2l.add_to_class(d2l.Trainer)  #@save
def prepare_batch(self, batch):
    if self.gpus:
        batch = [d2l.to(a, self.gpus[0]) for a in batch]
    return batch
"""


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
