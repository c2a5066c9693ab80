"""Shared fixtures: every test that takes `device` runs on the CPU and on every GPU
this process has (real, simulated with GPUARR_SIMULATE_GPUS, or emulated CUDA with
GPUARR_CUDA_EMULATE). CI runs the suite with 0 GPUs, 2 simulated and 2 emulated."""
import os
import platform
import re
import sys

import numpy as np
import pytest

import gpuarr
from gpuarr import _current_device

# The test files live in folders by subject (tests/README.md), and a few import another
# folder's test module by its bare name (test_cuda_sort.py takes test_sorting.py's data,
# test_numpy_corners.py test_dlpack_validation.py's producer). pytest's default import
# mode puts only the folder of each file it collects on sys.path, so a run of one folder
# would miss the other's module: every test folder goes on it here, after this one (which
# pytest put first, for `from conftest import ...`). Module basenames stay unique across
# the folders: in this mode pytest refuses two test modules of one name.
_TESTS = os.path.dirname(os.path.abspath(__file__))
for _name in sorted(os.listdir(_TESTS)):
    _dir = os.path.join(_TESTS, _name)
    if not _name.startswith(("_", ".")) and os.path.isdir(_dir) and _dir not in sys.path:
        sys.path.append(_dir)

ALL_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
NUMERIC_DTYPES = INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES


def _devices():
    return [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]


DEVICES = _devices()

# The emulated CUDA plugin, which files that start emulated GPUs in fresh interpreters
# need (a build with -DGPUARR_CUDA_EMU=ON; the aarch64 and Windows checks have none).
EMULATED_PLUGIN = os.path.join(os.path.dirname(os.path.abspath(gpuarr._core.__file__)),
                               "libgpuarr_cuda_emu.so")
needs_emulated_plugin = pytest.mark.skipif(
    not os.path.exists(EMULATED_PLUGIN), reason="the emulated CUDA plugin was not built "
    "(configure with -DGPUARR_CUDA_EMU=ON)")

# Files that call or count CUDA kernels: a real GPU with the plugin, or emulated ones.
needs_cuda_devices = pytest.mark.skipif(
    gpuarr._core._gpu_mode()[0] not in ("cuda", "emulated"),
    reason=("needs CUDA GPUs: a real GPU with the CUDA plugin built, or emulated ones "
            "(GPUARR_CUDA_EMULATE=2, only in a build with -DGPUARR_CUDA_EMU=ON, see "
            "tools/dev-build.sh)"),
)


# --- what one CI stage leaves to another (.ci/run) -------------------------------------
# CI runs the suite in several device modes, and two kinds of cases would only repeat
# there, so its later stages leave them out (a run by hand sets neither variable):
#  - GPUARR_TEST_DEVICES=cpu,gpu0,gpu1 (any of them, comma-separated; default all): the
#    devices the `device` fixture gives. A device left out repeats what another stage
#    runs: cpu(0) computes the same with GPUs beside it (the stage without GPUs runs
#    its cases; tests that mix devices name them themselves, and still run), and gpu(0)
#    and gpu(1) of one kind run the same kernels through the same backend. What
#    differs between those is the index, and gpu(1), not the current device unless a
#    test makes it so, is where a path that takes the current device instead of the
#    operand's fails: the simulated and emulated stages give gpu1, the sanitizer
#    stages cpu,gpu0 (simulated) and gpu0 (emulated). A listed device this process
#    does not have is an error, not a silent skip;
#  - GPUARR_TESTS_ELSEWHERE=tooling,own-processes: deselects tests/tooling (rules about
#    the repository, which touch no device) and the files marked `own_processes`, whose
#    every test starts fresh interpreters with a device mode of its own, so the
#    stage's mode changes nothing.
_TEST_DEVICES = os.environ.get("GPUARR_TEST_DEVICES") or "all"
if _TEST_DEVICES == "all":
    FIXTURE_DEVICES = DEVICES
else:
    _BY_NAME = {("cpu" if d.type == "cpu" else f"gpu{d.index}"): d for d in DEVICES}
    _ASKED = [w.strip() for w in _TEST_DEVICES.split(",") if w.strip()]
    _MISSING = [w for w in _ASKED if w not in _BY_NAME]
    if not _ASKED or _MISSING:
        raise pytest.UsageError(
            f"GPUARR_TEST_DEVICES={_TEST_DEVICES!r}: expected 'all' or a comma-separated "
            f"list of this process's devices ({', '.join(_BY_NAME)})"
            + (f"; it has no {', '.join(_MISSING)}" if _MISSING else ""))
    FIXTURE_DEVICES = [_BY_NAME[w] for w in _ASKED]
_ELSEWHERE = {w for w in os.environ.get("GPUARR_TESTS_ELSEWHERE", "").split(",") if w}
if _ELSEWHERE - {"tooling", "own-processes"}:
    raise pytest.UsageError(f"GPUARR_TESTS_ELSEWHERE={os.environ['GPUARR_TESTS_ELSEWHERE']!r}: "
                            "expected a comma-separated list of 'tooling', 'own-processes'")


def pytest_collection_modifyitems(config, items):
    if not _ELSEWHERE:
        return
    tooling = os.path.join(_TESTS, "tooling")
    keep, moved = [], []
    for item in items:
        away = (("tooling" in _ELSEWHERE and os.path.dirname(str(item.path)) == tooling)
                or ("own-processes" in _ELSEWHERE
                    and item.get_closest_marker("own_processes") is not None))
        (moved if away else keep).append(item)
    if moved:
        config.hook.pytest_deselected(items=moved)
        items[:] = keep


@pytest.fixture(params=FIXTURE_DEVICES, ids=[repr(d) for d in FIXTURE_DEVICES])
def device(request):
    """Each device of this process: cpu(0), then gpu(0), gpu(1), ... (those that
    GPUARR_TEST_DEVICES lists, when it is set: above)"""
    return request.param


@pytest.fixture
def gpu_device():
    """A GPU (skips when the process has none)."""
    if gpuarr.num_gpus() == 0:
        pytest.skip("needs a GPU (set GPUARR_SIMULATE_GPUS=2 to simulate two)")
    return gpuarr.gpu(0)


@pytest.fixture
def two_gpus():
    if gpuarr.num_gpus() < 2:
        pytest.skip("needs two GPUs (set GPUARR_SIMULATE_GPUS=2 to simulate them)")
    return gpuarr.gpu(0), gpuarr.gpu(1)


@pytest.fixture(autouse=True)
def _no_queued_error_left_unraised():
    """An error in queued work that nothing raised is reported when the process exits
    and makes its status 1 (docs/DESIGN.md, "Failed queued work"): a test that leaves
    one would fail the whole run at its very end. Name the test instead (a wait per
    test on a GPU: the errors of the test's queued work come back with it)."""
    yield
    # a test that called gpuarr.cuda.set_device() leaves no current GPU to the next
    _current_device._current.set(None)
    if gpuarr.num_gpus() > 0:
        gpuarr.synchronize()  # raises this thread's, as a teardown error of the test
    left = gpuarr._core._unreported_failures(take=True)
    if left:
        pytest.fail(f"errors in queued work left unraised by this test:\n{left}")


# NumPy on Windows computes complex arcsin, arcsinh and arccosh itself (not through the
# C library) and picks other values than glibc's where C99's Annex G leaves the choice
# open: the infinity's sign beside a NaN (arcsin(-inf + nan j) is nan - inf j there),
# and arccosh(+-0 + nan j) = nan + nan j (glibc: nan + pi/2 j). gpuarr gives glibc's
# on every platform (docs/DESIGN.md), so there NumPy is no oracle at those points.
NUMPY_WINDOWS_REASON = ("NumPy on Windows picks other values than glibc's where Annex G "
                        "leaves them open (complex arcsin, arcsinh, arccosh at NaN)")


def numpy_windows_open_choices(name, z):
    """The points of z where NumPy on this platform differs from glibc (see above)."""
    z = np.asarray(z)
    if sys.platform != "win32" or name not in ("arcsin", "arcsinh", "arccosh"):
        return np.zeros(z.shape, dtype=bool)
    if name == "arccosh":
        return (z.real == 0) & np.isnan(z.imag)
    return (np.isnan(z.real) & np.isinf(z.imag)) | (np.isinf(z.real) & np.isnan(z.imag))


X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


def x86_float_to_int(vals, to):
    """gpuarr's float -> integer conversion of float64 values, NumPy's on x86, written
    out from docs/DESIGN.md ("One float -> integer rule"): the oracle where NumPy's own
    conversion is not x86's (aarch64 saturates: NaN is 0 there, inf the largest
    integer, -2.5 as uint8 0, not 254)."""
    def trunc_or_min(v, bits):  # cvttsd2si: out of range or NaN is "integer indefinite"
        lim = 2.0 ** (bits - 1)
        return int(v) if -lim - 1 < v < lim else -(2 ** (bits - 1))

    bits = np.dtype(to).itemsize * 8
    out = []
    for v in vals:
        if to == "uint64":
            r = (trunc_or_min(v - 2.0**63, 64) + 2**63 if v >= 2.0**63
                 else trunc_or_min(v, 64))
        elif bits == 64 or to == "uint32":
            r = trunc_or_min(v, 64)
        else:
            r = trunc_or_min(v, 32)
        out.append(r % 2**bits)  # the low bits, as the unsigned type of that width
    return np.array(out, dtype=f"uint{bits}").view(to)


def to_numpy(x):
    """The oracle's view of a gpuarr array (an explicit copy)."""
    return x.numpy() if isinstance(x, gpuarr.Array) else np.asarray(x)


def cxx_throws_under_asan():
    """Whether a C++ exception would kill this process: an ASan runtime preloaded into
    python3 without libstdc++ looks up the real __cxa_throw at start, finds none, and
    the first throw (matplotlib's extension, the emulator's spin-wait deadlock) dies in
    an ASan CHECK. CI's sanitizer stages preload libstdc++ with it (.ci/run)."""
    pre = os.environ.get("LD_PRELOAD", "")
    return "libasan" in pre and "libstdc++" not in pre


CXX_UNDER_ASAN = ("C++ exceptions under a preloaded AddressSanitizer runtime need "
                  "libstdc++ preloaded with it (LD_PRELOAD, as .ci/run sets it)")


# --- skips that may not hide a regression -------------------------------------------
# Every reason a test of this suite may skip for: the device mode or the machine lacks
# something (a GPU, a tool, a second core), or a check runs once in another mode. With
# GPUARR_STRICT_SKIPS=1 (CI sets it) a skip for any other reason fails the run, so a
# guard such as "not built yet" cannot turn a broken feature into a quiet skip.
ALLOWED_SKIP_REASONS = (
    "needs a GPU (", "needs two GPUs (", "needs CUDA GPUs:", "needs simulated GPUs (",
    "needs a second core", "needs cmake", "needs fork", "needs readelf", "needs a source checkout",
    "needs a C compiler", "readelf (binutils", "mypy is not installed",
    "matplotlib is not installed",  # tools/linux_aarch64_qemu.sh installs no matplotlib
    "C++ exceptions under a preloaded AddressSanitizer",  # see cxx_throws_under_asan
    "NumPy >= 2.1 is the oracle", "array_api_compat", "nbclient", "nbformat",
    "an array API client is not installed",  # scipy, xarray, einops, array-api-extra
    "the client library itself sends this case to the host",  # test_array_api_clients
    "cuobjdump/nvdisasm not found", "no CPU BLAS installed", "no BLAS", "not OpenBLAS",
    "the host block cache is compiled out", "the plugin holds no sm_90 code",
    "the real CUDA plugin", "the CUDA plugin was not built", "the emulated CUDA plugin was not built",
    "this build has the CUDA plugin", "this machine has", "this Python has no _json",
    "libgpuarr_cuda", "graded once, in the suite run", "checked once, in the suite run",
    "the lessons are checked once", "the static report reads the built binary only",
    "repeated indices: which write wins is unspecified",
    "memcheck needs the AddressSanitizer build",  # run in CI's sanitizer step
    "NumPy on Windows picks other values",  # tools/windows_wine.sh: see above
)
_unexpected_skips = []


def _skip_reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


# --- leak checks that name their test ------------------------------------------------
# With GPUARR_LEAK_REPORT_DIR set (CI does), gpuarr records which test made each array
# storage and lists, after the interpreter finished, those still alive (one file per
# process in that folder; .ci/lsan_filter.py fails a stage when one exists). A process a
# test starts inherits GPUARR_LEAK_TAG, so its report names that test too.
# Under AddressSanitizer (CI's sanitizer stages set log_path in ASAN_OPTIONS), a process
# a test starts writes its report to a file named for that test, not only for its pid.
_ASAN_OPTIONS = os.environ.get("ASAN_OPTIONS", "")
_ASAN_LOG = re.search(r"(?:^|:)log_path=([^:]*)", _ASAN_OPTIONS)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if os.environ.get("GPUARR_LEAK_REPORT_DIR"):
        gpuarr._core._live_storages_tag(item.nodeid)
        os.environ["GPUARR_LEAK_TAG"] = f"a process started by {item.nodeid}"
    if _ASAN_LOG:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", item.nodeid)[:150]
        end = _ASAN_LOG.end(1)
        os.environ["ASAN_OPTIONS"] = (_ASAN_OPTIONS[:end] + f".{name}"
                                      + _ASAN_OPTIONS[end:])


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "own_processes: every test of the file starts fresh interpreters with a "
        "device mode of its own (CI runs it in one stage: GPUARR_TESTS_ELSEWHERE above)")
    config.addinivalue_line(
        "markers", "serial: a test that needs the machine to itself; none may (issue 44): "
        "CI runs every test on two workers beside whatever else the machine runs, so "
        "a test compares CPU time or leaves its number to bench/")


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = _skip_reason(report)
        if not any(reason.startswith(a) for a in ALLOWED_SKIP_REASONS):
            _unexpected_skips.append(f"{report.nodeid}: {reason}")


def pytest_terminal_summary(terminalreporter):
    if _unexpected_skips:
        terminalreporter.section("skips with a reason not on the allow-list (tests/conftest.py)")
        for line in _unexpected_skips:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    if _unexpected_skips and os.environ.get("GPUARR_STRICT_SKIPS") == "1" and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# NumPy before 2.3 (the oldest NumPy CI tests with is 2.2) gives three special values
# that C99 Annex G and later NumPy give otherwise: acosh(+-0 + NaN j) is NaN + NaN j (Annex
# G: NaN + pi/2 j), and the sign of an infinite part that Annex G leaves unspecified
# follows the input's sign in asin(+-inf + NaN j) and asinh(NaN +- inf j) (NumPy >= 2.3:
# +inf). gpuarr gives NumPy 2.3's values on every device; the oracle does too.
OLD_NUMPY_ANNEX_G = np.lib.NumpyVersion(np.__version__) < "2.3.0"


def annex_g_oracle(name, z, want):
    """NumPy's values of `name` at z, with NumPy >= 2.3's where an older NumPy differs."""
    if not OLD_NUMPY_ANNEX_G:
        return want
    want = np.array(want, copy=True)
    inf, nan = np.inf, np.nan
    if name == "arccosh":
        at = (z.real == 0) & np.isnan(z.imag)
        want[at] = complex(nan, np.pi / 2)
    elif name == "arcsin":
        want[np.isinf(z.real) & np.isnan(z.imag)] = complex(nan, inf)
    elif name == "arcsinh":
        want[np.isnan(z.real) & np.isinf(z.imag)] = complex(inf, nan)
    return want


def simulated_gpus():
    """Are this process's GPUs simulated ones (GPUARR_SIMULATE_GPUS)?"""
    return gpuarr.num_gpus() > 0 and gpuarr.device_kind(gpuarr.gpu(0)) == "simulated"


class held_queue:
    """Keep a simulated GPU's worker waiting for the duration of the block (work queued
    meanwhile is still pending at its end)."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        gpuarr._core._hold_queue(self.device, True)
        return self

    def __exit__(self, *exc):
        gpuarr._core._hold_queue(self.device, False)
        return False
