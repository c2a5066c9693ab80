"""Every notebook in notebooks/ executes without an error, with whatever GPUs this
process has (CI runs the suite with 0 GPUs and with GPUARR_SIMULATE_GPUS=2; the kernel
inherits the environment). Without a GPU, the notebooks also run as a student opens
them (Jupyter started without the variable) and with it, and teach the same lessons:
the key outputs are checked, not only that cells run."""
import os
import pathlib

import pytest

import gpuarr

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def execute(path, tmp_path, monkeypatch):
    """Run the notebook; return its code cells' text outputs, one string per cell."""
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
    texts = []
    for c in nb.cells:
        if c.cell_type == "code":
            texts.append("".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")
                                 for o in c.get("outputs", [])))
    return texts


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path, monkeypatch):
    execute(path, tmp_path, monkeypatch)


# Cell text (a line of the code) -> what its output must show, on two GPUs.
LESSONS_01 = [
    ("ga.info()", "devices (2 GPUs"),
    ("X + Y", "DeviceMismatchError:"),
    ("one device-to-host copy per step", "device->host: 100 copies, 400 bytes"),
    ("one copy at the end", "device->host: 1 copy, 400 bytes"),
    ("np.asarray(X)", "TypeError:"),
    ("prepare_batch(batch, device)", "host->device: 22 copies"),
    ("prepare_batch(batch, device)", "device->host: 1 copy, 80 bytes"),
]


@pytest.mark.skipif(gpuarr._core._gpu_mode()[0] != "none",
                    reason="the lessons are checked once, in the suite run without "
                           "GPUs (each test sets up the GPUs it needs)")
@pytest.mark.parametrize("variable", [None, "2"],
                         ids=["jupyter started plainly", "GPUARR_SIMULATE_GPUS=2"])
def test_notebook_01_teaches_the_same_without_setup(variable, tmp_path, monkeypatch):
    monkeypatch.delenv("GPUARR_CUDA_EMULATE", raising=False)
    if variable is None:
        monkeypatch.delenv("GPUARR_SIMULATE_GPUS", raising=False)
    else:
        monkeypatch.setenv("GPUARR_SIMULATE_GPUS", variable)
    path = NOTEBOOKS[0]
    assert path.name == "01_gpus.ipynb"
    texts = execute(path, tmp_path, monkeypatch)
    sources = [c.source for c in nbformat.read(path, as_version=4).cells
               if c.cell_type == "code"]
    said = "No GPU found: gpuarr simulates 2 GPUs"
    assert (said in texts[0]) == (variable is None), texts[0]
    for line, expected in LESSONS_01:
        cell = next(i for i, s in enumerate(sources) if line in s)
        assert expected in texts[cell], (line, texts[cell])


@pytest.mark.skipif(gpuarr._core._gpu_mode()[0] != "none",
                    reason="checked once, in the suite run without GPUs")
def test_notebook_02_simulates_without_setup(tmp_path, monkeypatch):
    monkeypatch.delenv("GPUARR_CUDA_EMULATE", raising=False)
    monkeypatch.delenv("GPUARR_SIMULATE_GPUS", raising=False)
    texts = execute(NOTEBOOKS[1], tmp_path, monkeypatch)
    assert "No GPU found: gpuarr simulates 2 GPUs" in texts[0]
    assert "gpu(1)" in texts[0], texts[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_notebook_has_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, \
                f"{path.name} carries stale outputs: clear them before committing"
