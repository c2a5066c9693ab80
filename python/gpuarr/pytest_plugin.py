"""gpuarr's pytest plugin (registered as the ``pytest11`` entry point ``gpuarr``).

- The fixture ``gpuarr_device`` runs a test once on ``cpu()`` and once on every GPU of
  the process (ids ``cpu(0)``, ``gpu(0)``, ...); ``gpuarr_device_pair`` once on every
  ordered pair of two different devices among the first three (``cpu(0)->gpu(0)``...),
  for tests of where a result lands when its inputs live apart.
- The option ``--gpuarr-simulate-gpus=N`` sets ``GPUARR_SIMULATE_GPUS=N`` before gpuarr
  looks for devices, so a suite written for two GPUs runs on a laptop:
  ``pytest --gpuarr-simulate-gpus=2``.
- The ini option ``gpuarr_simulate_gpus_if_none = N`` simulates N GPUs only when the
  machine has none.
- The ini option ``gpuarr_min_gpus = N`` (graders: the GPU path is tested on every
  machine): with no GPU, simulate N in this process; with some GPUs but fewer than N
  (one real GPU, ``GPUARR_CUDA_EMULATE=1``, ``GPUARR_SIMULATE_GPUS=1`` or ``=0``), run
  the same tests a second time at the end, in a child process on N simulated GPUs,
  and fail the run when that pass fails (with ``--junitxml=R.xml``, its report is
  ``R-Ngpus.xml``). Placement on a second GPU is then graded on every machine.
- A run whose device tests found fewer than two GPUs in its process ends with a
  warning: code that computes on the wrong device (or, without a GPU, copies to the
  host each step) passes there.
- Graders: ``gpuarr_student`` loads a student's module by name from the folder named
  by ``--gpuarr-exercises=DIR`` (default: the test file's folder) and checks after the
  test that the student's code left gpuarr's and the grader's functions as they were;
  ``gpuarr_rng`` is a NumPy Generator drawn fresh for every test (its seed shows in a
  failure's report; ``GPUARR_GRADER_SEED=<seed>`` draws the same inputs again).

Without an installed package, load it with ``pytest -p gpuarr.pytest_plugin``.
"""
import importlib.util
import os
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest

import gpuarr  # loaded already: pytest imports this plugin as gpuarr.pytest_plugin

_ENV = "GPUARR_SIMULATE_GPUS"
_SECOND_PASS_ENV = "GPUARR_PYTEST_SECOND_PASS"
_SEED_ENV = "GPUARR_GRADER_SEED"


def pytest_addoption(parser):
    group = parser.getgroup("gpuarr")
    group.addoption(
        "--gpuarr-simulate-gpus", action="store", type=int, default=None, metavar="N",
        dest="gpuarr_simulate_gpus",
        help="simulate N GPUs (sets GPUARR_SIMULATE_GPUS=N before gpuarr finds devices)")
    group.addoption(
        "--gpuarr-exercises", action="store", default=None, metavar="DIR",
        dest="gpuarr_exercises",
        help="the folder gpuarr_student loads graded modules from (default: the "
             "folder of the test file); several, separated by os.pathsep, grade each "
             "one in turn (test_<name>.py runs for each folder with <name>.py)")
    parser.addini("gpuarr_simulate_gpus_if_none",
                  "simulate this many GPUs when the machine has none (0: never)",
                  default="0")
    parser.addini("gpuarr_min_gpus",
                  "grade on at least this many GPUs: simulate them when the machine has "
                  "none, else run the tests again on that many simulated GPUs (0: never)",
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


_state = {"used_devices": False, "second_pass": 0, "second_pass_result": None}


def pytest_configure(config):
    n = config.getoption("gpuarr_simulate_gpus")
    _apply(n)
    if n is not None:
        if gpuarr._core._gpu_mode()[0] in ("simulated", "none") and gpuarr.num_gpus() != n:
            raise pytest.UsageError(
                f"--gpuarr-simulate-gpus={n} came too late: gpuarr already found "
                f"{gpuarr.num_gpus()} GPUs in this process")
        return
    min_gpus = int(config.getini("gpuarr_min_gpus") or 0)
    fallback = max(min_gpus, int(config.getini("gpuarr_simulate_gpus_if_none") or 0))
    if fallback > 0:
        gpuarr.simulate_gpus_if_none(fallback)
    if (min_gpus > 0 and gpuarr.num_gpus() < min_gpus
            and not os.environ.get(_SECOND_PASS_ENV)):
        _state["second_pass"] = min_gpus


def pytest_report_header(config):
    mode, _ = gpuarr._core._gpu_mode()
    lines = [f"gpuarr: {gpuarr.num_gpus()} GPUs ({mode})"]
    if gpuarr.num_gpus() == 0:
        lines.append(_NO_GPU_WARNING)
    if _state["second_pass"]:
        lines.append(f"gpuarr: fewer than {_state['second_pass']} GPUs here: the tests run "
                     f"again at the end on {_state['second_pass']} simulated GPUs")
    return lines


_NO_GPU_WARNING = ("WARNING: gpuarr found no GPU, so only cpu(0) is tested: code that "
                   "computes on the wrong device or copies to the host each step passes. "
                   "Run with --gpuarr-simulate-gpus=2 to test the GPU path.")
_ONE_GPU_WARNING = ("WARNING: gpuarr found 1 GPU, so no test in this process ran on a "
                    "second GPU: code that computes on the wrong one of two GPUs passes "
                    "here. Run with --gpuarr-simulate-gpus=2 (or gpuarr_min_gpus = 2 in "
                    "pytest.ini) to test it.")


def pytest_sessionfinish(session, exitstatus):
    n = _state["second_pass"]
    config = session.config
    # under pytest-xdist the controller (which collects nothing) makes the pass once
    if hasattr(config, "workerinput"):
        return
    used = _state["used_devices"] or config.pluginmanager.hasplugin("dsession")
    if (not n or not used or config.option.collectonly
            or exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.USAGE_ERROR)):
        return
    _state["second_pass_result"] = r = _run_second_pass(session.config, n)
    if r.returncode not in (0, pytest.ExitCode.NO_TESTS_COLLECTED) and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _run_second_pass(config, n):
    """The same pytest command in a child process on n simulated GPUs."""
    env = dict(os.environ)
    env.pop("GPUARR_CUDA_EMULATE", None)
    env[_ENV] = str(n)
    env[_SECOND_PASS_ENV] = "1"
    # the child imports the same gpuarr as this process
    here = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    # the last --junitxml wins: the child writes its own report beside this run's
    xml = getattr(config.option, "xmlpath", None)
    xml = f"{os.path.splitext(xml)[0]}-{n}gpus.xml" if xml else os.devnull
    args = [*config.invocation_params.args, "-p", "no:cacheprovider", f"--junitxml={xml}"]
    return subprocess.run([sys.executable, "-m", "pytest", *args], env=env,
                          cwd=str(config.invocation_params.dir), capture_output=True,
                          text=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    tr = terminalreporter
    r = _state["second_pass_result"]
    if r is not None:
        n = _state["second_pass"]
        last = r.stdout.strip().splitlines()[-1:] or ["(no output)"]
        title = f"second pass on {n} simulated GPUs"
        if r.returncode in (0, pytest.ExitCode.NO_TESTS_COLLECTED):
            tr.write_sep("-", title)
            tr.write_line(last[0])
        else:
            tr.write_sep("!", title + ": FAILED", red=True, bold=True)
            tr.write(r.stdout)
            if r.stderr.strip():
                tr.write(r.stderr)
    used = _state["used_devices"] or config.pluginmanager.hasplugin("dsession")
    if used and not hasattr(config, "workerinput") and gpuarr.num_gpus() < 2:
        warning = _NO_GPU_WARNING if gpuarr.num_gpus() == 0 else _ONE_GPU_WARNING
        tr.write_sep("!", warning.split(":")[0], yellow=True, bold=True)
        tr.write_line(warning, yellow=True, bold=True)
        if r is not None:
            tr.write_line(f"The same tests ran again on {_state['second_pass']} simulated "
                          f"GPUs (above).", yellow=True, bold=True)


def _devices():
    return [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]


def pytest_generate_tests(metafunc):
    if "gpuarr_student" in metafunc.fixturenames:  # a grader: it places data on devices
        _state["used_devices"] = True
    if "gpuarr_device" in metafunc.fixturenames:
        _state["used_devices"] = True
        devs = _devices()
        metafunc.parametrize("gpuarr_device", devs, ids=[repr(d) for d in devs],
                             indirect=True)
    if "gpuarr_device_pair" in metafunc.fixturenames:
        _state["used_devices"] = True
        devs = _devices()[:3]
        pairs = [(a, b) for a in devs for b in devs if a != b]
        metafunc.parametrize("gpuarr_device_pair", pairs,
                             ids=[f"{a!r}->{b!r}" for a, b in pairs], indirect=True)
    folders = _exercise_folders(metafunc.config)
    if "gpuarr_student" in metafunc.fixturenames and len(folders) > 1:
        # test_<name>.py grades <name>.py: each folder that holds it, in turn (the
        # folder is the last part of the test's id, relative to the folders' parent)
        name = pathlib.Path(metafunc.definition.path).stem[len("test_"):]
        have = [f for f in folders if (f / f"{name}.py").is_file()]
        common = os.path.commonpath([str(f) for f in folders])
        metafunc.parametrize("gpuarr_student", have,
                             ids=[os.path.relpath(f, common) for f in have], indirect=True)


@pytest.fixture
def gpuarr_device(request):
    """Each device of this process in turn: cpu(0), then gpu(0), gpu(1), ..."""
    return request.param


@pytest.fixture
def gpuarr_device_pair(request):
    """Each ordered pair (a, b) of two different devices among cpu(0), gpu(0) and
    gpu(1) that exist (none without a GPU: the test then is not run)."""
    return request.param


@pytest.fixture
def gpuarr_rng(request):
    """A NumPy Generator seeded afresh for each test (from the OS's entropy), so that
    graded code cannot know its inputs in advance. A failure's report shows the seed;
    GPUARR_GRADER_SEED=<seed> draws the same inputs again."""
    seed = int(os.environ.get(_SEED_ENV) or np.random.SeedSequence().entropy)
    request.node._gpuarr_seed = seed
    return np.random.default_rng(seed)


@pytest.fixture
def gpuarr_student(request):
    """gpuarr_student("ex3_norm_log") -> the graded module, loaded afresh from the
    folder of --gpuarr-exercises (default: the folder of the test file). After the
    test, the functions of gpuarr, gpuarr.testing and the test module must be the ones
    they were before the module was loaded (a student's module that replaces a
    grader's helper fails the test)."""
    folders = _exercise_folders(request.config)
    folder = getattr(request, "param", None) or (
        folders[0] if folders else pathlib.Path(request.path).parent)
    request.node._gpuarr_snapshot = _snapshot(request.module)

    def load(name):
        path = folder / f"{name}.py"
        if not path.is_file():
            raise FileNotFoundError(f"no {name}.py in {folder}: the graded file is missing")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


def _exercise_folders(config):
    value = config.getoption("gpuarr_exercises")
    if not value:
        return []
    base = pathlib.Path(config.invocation_params.dir)
    return [base / f for f in value.split(os.pathsep) if f]


# What the graded code must leave alone: every function, class and module that gpuarr,
# its testing helpers, this plugin, NumPy's namespaces the graders compare with and
# Python's builtins hold, the code and defaults of gpuarr's functions and of its
# classes' methods, and every global of the test module (its constants too). Values
# (counters, caches) may change, and new names may appear.
def _watched(v):
    return isinstance(v, (types.FunctionType, types.BuiltinFunctionType, type,
                          types.ModuleType))


def _function_parts(f):
    return (f.__code__, f.__defaults__, f.__kwdefaults__)


def _snapshot(test_module):
    """[(label, owner, name, object, parts of a function or None)]"""
    # the modules watched, imported where they are listed (numpy.testing only loads
    # for graders: every pytest run where gpuarr is installed loads this plugin)
    import builtins

    import numpy
    import numpy.linalg
    import numpy.testing

    import gpuarr
    import gpuarr._devices
    import gpuarr.testing

    entries = []

    def watch(label, owner, name, v):
        parts = _function_parts(v) if isinstance(v, types.FunctionType) else None
        entries.append((label, owner, name, v, parts))

    ours = (gpuarr, gpuarr._core, gpuarr._devices, gpuarr.testing, sys.modules[__name__])
    for m in (*ours, numpy, numpy.testing, numpy.linalg, builtins, test_module):
        for name, v in list(vars(m).items()):
            if m is not test_module and not _watched(v):
                continue
            watch(f"{m.__name__}.{name}", m, name, v)
            if m in ours and isinstance(v, type) and v.__module__ == m.__name__:
                for attr, f in list(vars(v).items()):
                    if isinstance(f, types.FunctionType):
                        watch(f"{m.__name__}.{name}.{attr}", v, attr, f)
    return entries


def _changes(entries):
    """The labels of what changed since the snapshot, each put back as it was (so
    that one module's meddling does not grade the tests after it)."""
    changed = []
    for label, owner, name, obj, parts in entries:
        now = vars(owner).get(name)
        if now is not obj:
            changed.append(label)
            setattr(owner, name, obj)
        if parts is not None and any(a is not b for a, b in zip(_function_parts(obj),
                                                                 parts)):
            changed.append(label)
            obj.__code__, obj.__defaults__, obj.__kwdefaults__ = parts
    return sorted(set(changed))


def _check_unchanged(item, failure=None):
    snapshot = getattr(item, "_gpuarr_snapshot", None)
    changed = _changes(snapshot) if snapshot is not None else []
    if changed:
        # this, not what the changed helpers let through, is the student's message
        raise AssertionError(
            "the graded code changed what grades it: " + ", ".join(changed)
            + " (code under test must leave gpuarr's functions and the graders' "
              "helpers as they are)") from failure


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    try:
        result = yield
    except BaseException as e:
        _check_unchanged(item, e)
        raise
    _check_unchanged(item)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    seed = getattr(item, "_gpuarr_seed", None)
    if seed is not None and report.failed:
        line = f"inputs drawn with seed {seed} ({_SEED_ENV}={seed} draws them again)"
        if hasattr(report.longrepr, "addsection"):  # shown with the failure, and in junit
            report.longrepr.addsection("gpuarr_rng", line)
        else:
            report.sections.append(("gpuarr_rng", line))
    return report
