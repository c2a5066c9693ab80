"""The graders' fixtures come from gpuarr's pytest plugin: gpuarr_device,
gpuarr_device_pair, gpuarr_rng, and gpuarr_student (here also named `student`), which
loads the graded file from this folder. (A teacher grades a class with the teacher's
own copy of this folder: python -m gpuarr.grade SUBMISSIONS/ --graders <it>.)"""
import pytest

# The plugin comes with an installed gpuarr through an entry point; load it by name
# when gpuarr is used from a source tree instead.
try:
    from importlib.metadata import entry_points

    _installed = any(ep.name == "gpuarr" for ep in entry_points(group="pytest11"))
except Exception:  # pragma: no cover - very old importlib.metadata
    _installed = False
if not _installed:
    pytest_plugins = ["gpuarr.pytest_plugin"]


@pytest.fixture
def student(gpuarr_student):
    """student("ex3_norm_log") -> the graded module."""
    return gpuarr_student
