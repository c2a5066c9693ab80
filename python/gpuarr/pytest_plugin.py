"""gpuarr's pytest plugin (registered as the ``pytest11`` entry point ``gpuarr``).

- The fixture ``gpuarr_device`` runs a test once on ``cpu()`` and once on every GPU of
  the process (ids ``cpu(0)``, ``gpu(0)``, ...).
- The option ``--gpuarr-simulate-gpus=N`` sets ``GPUARR_SIMULATE_GPUS=N`` before gpuarr
  looks for devices, so a suite written for two GPUs runs on a laptop:
  ``pytest --gpuarr-simulate-gpus=2``.

Without an installed package, load it with ``pytest -p gpuarr.pytest_plugin``.
"""
import os

import pytest

_ENV = "GPUARR_SIMULATE_GPUS"


def pytest_addoption(parser):
    group = parser.getgroup("gpuarr")
    group.addoption(
        "--gpuarr-simulate-gpus", action="store", type=int, default=None, metavar="N",
        dest="gpuarr_simulate_gpus",
        help="simulate N GPUs (sets GPUARR_SIMULATE_GPUS=N before gpuarr finds devices)")


def _apply(n):
    if n is None:
        return
    if n < 0:
        raise pytest.UsageError("--gpuarr-simulate-gpus needs a number >= 0")
    os.environ[_ENV] = str(n)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # Runs before conftest.py files are imported: they may ask gpuarr for devices,
    # which fixes the device list for the life of the process.
    _apply(getattr(early_config.known_args_namespace, "gpuarr_simulate_gpus", None))


def pytest_configure(config):
    n = config.getoption("gpuarr_simulate_gpus")
    _apply(n)
    if n is None:
        return
    import gpuarr

    if gpuarr._core._gpu_mode()[0] in ("simulated", "none") and gpuarr.num_gpus() != n:
        raise pytest.UsageError(
            f"--gpuarr-simulate-gpus={n} came too late: gpuarr already found "
            f"{gpuarr.num_gpus()} GPUs in this process")


def pytest_report_header(config):
    import gpuarr

    mode, _ = gpuarr._core._gpu_mode()
    return f"gpuarr: {gpuarr.num_gpus()} GPUs ({mode})"


def _devices():
    import gpuarr

    return [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]


def pytest_generate_tests(metafunc):
    if "gpuarr_device" in metafunc.fixturenames:
        devs = _devices()
        metafunc.parametrize("gpuarr_device", devs, ids=[repr(d) for d in devs],
                             indirect=True)


@pytest.fixture
def gpuarr_device(request):
    """Each device of this process in turn: cpu(0), then gpu(0), gpu(1), ..."""
    return request.param
