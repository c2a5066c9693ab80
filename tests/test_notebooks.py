"""Every notebook in notebooks/ executes without an error, with whatever GPUs this
process has (CI runs the suite with 0 GPUs and with GPUARR_SIMULATE_GPUS=2; the kernel
inherits the environment)."""
import os
import pathlib

import pytest

import gpuarr

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path, monkeypatch):
    # the kernel must import the same gpuarr as this test (installed, or a source tree)
    here = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [here, os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError with the cell and traceback
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_notebook_has_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, \
                f"{path.name} carries stale outputs: clear them before committing"
