"""Run the code cells of Jupyter notebooks in order, in one namespace per notebook, as
a kernel would, and fail on the first cell that raises. For platforms where a Jupyter
kernel is more than the check needs (Windows under Wine: tools/windows_wine.sh); on
Linux, tests/textbook/test_notebooks.py runs them through a real kernel (nbclient).

    python tools/run_notebook_cells.py notebooks/01_gpus.ipynb [...]

Plots go to matplotlib's Agg backend (no display). Each notebook runs in a fresh
temporary working directory, as the test's kernel does.
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import traceback


def run(path):
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    ns = {"__name__": "__main__"}
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for i, src in enumerate(cells, 1):
                out = io.StringIO()
                try:
                    with contextlib.redirect_stdout(out):
                        exec(compile(src, f"{os.path.basename(path)}[cell {i}]", "exec"), ns)
                except Exception:
                    print(out.getvalue())
                    traceback.print_exc()
                    print(f"FAILED: {path}, code cell {i} of {len(cells)}")
                    return False
        finally:
            os.chdir(here)
    print(f"ok: {path} ({len(cells)} code cells)")
    return True


def main(paths):
    os.environ.setdefault("MPLBACKEND", "Agg")
    ok = [run(os.path.abspath(p)) for p in paths]
    return 0 if ok and all(ok) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
