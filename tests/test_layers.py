"""The three layers of docs/DESIGN.md, held by the build and checked here:

- the core (csrc/ga_*.c) is the static library gpuarr_core, compiled without Python's
  include path (an `#include <Python.h>` in it fails the build), and includes no
  binding header;
- the binding (csrc/py_*.c) reaches devices through the core's public headers only,
  never a backend's table or a backend's private header (py_abi.c, which reports the
  ABI's layout to the tests, is the one exception);
- the CUDA plugins link the core's plain-C helpers (gpuarr_common) instead of
  compiling their own copies;
- only the platform layer (csrc/ga_platform.[ch]) includes a header that is not C11's
  own: no <pthread.h>, <dlfcn.h>, <unistd.h> or <windows.h> elsewhere, so the core and
  the binding build on Linux, macOS and Windows alike (csrc/cuda/, the CUDA plugins,
  is Linux's for now; README's platforms table)."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
BACKEND_PRIVATE = {"ga_backend.h", "ga_cpu.h", "ga_cpu_loop.h", "ga_sim.h",
                   "ga_kernels.h", "ga_reduce_math.h", "ga_philox.h"}
ALLOWED = {"py_abi.c": {"ga_backend.h"}}

pytestmark = pytest.mark.skipif(not CSRC.is_dir(), reason="needs a source checkout")


def _c_files(pattern):
    """The C files of the core and the binding (csrc/ less the CUDA plugins)."""
    return sorted(p for p in CSRC.rglob(pattern) if "cuda" not in p.relative_to(CSRC).parts)


def _includes(path):
    return set(re.findall(r'^\s*#\s*include\s+[<"]([^">]+)[">]', path.read_text(), re.M))


def test_core_files_include_no_python_or_binding_header():
    bad = {p.name: sorted(i for i in _includes(p)
                          if i == "Python.h" or i.startswith("py_") or "numpy" in i)
           for p in _c_files(("ga_*.[ch]"))}
    assert {k: v for k, v in bad.items() if v} == {}


def test_binding_files_use_no_backend_private_header():
    bad = {}
    for p in _c_files(("py_*.[ch]")):
        wrong = _includes(p) & BACKEND_PRIVATE - ALLOWED.get(p.name, set())
        if wrong:
            bad[p.name] = sorted(wrong)
    assert bad == {}, ("the binding asks the core (ga_device.h, ga_creation.h, ...), "
                       f"not a backend: {bad}")


def test_binding_never_calls_into_a_backend_table():
    bad = [p.name for p in _c_files(("py_*.c"))
           if re.search(r"\bbe->\w+\s*\(|ga_device_backend\s*\(", p.read_text())]
    assert bad == []


def test_core_is_a_static_library_built_without_python():
    text = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r"add_library\(gpuarr_core STATIC \$\{GPUARR_CORE_SOURCES\}\)", text)
    assert re.search(r"python_add_library\(_core MODULE WITH_SOABI "
                     r"\$\{GPUARR_BINDING_SOURCES\}\)", text)
    assert "target_link_libraries(_core PRIVATE gpuarr_core)" in text


def test_plugins_link_the_common_helpers_instead_of_recompiling_them():
    text = (CSRC / "cuda" / "CMakeLists.txt").read_text()
    assert not re.search(r"ga_(error|dtype|ops)\.c", text), (
        "the plugin compiles its own copy of a core helper")
    assert "gpuarr_common" in text


# The C11 standard library, and the few others every supported compiler has.
C11_HEADERS = {f"{h}.h" for h in (
    "assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp "
    "signal stdalign stdarg stdatomic stdbool stddef stdint stdio stdlib stdnoreturn "
    "string tgmath threads time uchar wchar wctype").split()}
PORTABLE_HEADERS = C11_HEADERS | {
    "Python.h", "structmember.h",  # CPython's, in the binding
    "immintrin.h",  # x86 intrinsics (GCC, Clang, MSVC), used under an x86 guard
    "cuda_fp16.h",  # only when nvcc compiles the header (__CUDACC__)
}
PLATFORM_LAYER = {"ga_platform.h", "ga_platform.c"}


def _system_includes(path):
    return set(re.findall(r'^\s*#\s*include\s+<([^>]+)>', path.read_text(), re.M))


def test_only_the_platform_layer_includes_system_headers():
    bad = {p.name: sorted(_system_includes(p) - PORTABLE_HEADERS)
           for p in _c_files(("*.[ch]")) if p.name not in PLATFORM_LAYER}
    assert {k: v for k, v in bad.items() if v} == {}, (
        "include ga_platform.h (and add what is missing there) instead of a POSIX or "
        "Windows header")


# Calls that exist on one system only (a file may reach them through another header).
SYSTEM_CALLS = re.compile(r"\b(pthread_\w+|dlopen|dlsym|dlerror|sched_\w+|sysconf|"
                          r"aligned_alloc|_Thread_local|LoadLibrary\w*|GetProcAddress|"
                          r"_beginthread\w*|__builtin_ia32_\w+)\b")


def _code(path):
    """The file without its comments."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", path.read_text(), flags=re.S)


def test_only_the_platform_layer_calls_system_functions():
    bad = {p.name: sorted(set(SYSTEM_CALLS.findall(_code(p))))
           for p in _c_files(("*.[ch]")) if p.name not in PLATFORM_LAYER}
    assert {k: v for k, v in bad.items() if v} == {}, (
        "use ga_platform.h's ga_mutex_lock, ga_thread_start_detached, ga_dl_open, "
        "GA_THREAD_LOCAL... so the file builds on Windows too")


def test_binding_includes_python_before_system_headers():
    """Python.h may define feature macros (_POSIX_C_SOURCE...) that a system header
    included before it has already set differently: a warning with another libc's
    headers (the aarch64 and Windows cross-builds), so py_common.h comes first."""
    bad = []
    for p in _c_files(("py_*.c")):
        first = re.search(r'^\s*#\s*include\s+[<"]([^">]+)[">]', p.read_text(), re.M)
        if first and first[1] not in ("py_common.h", "Python.h", "stddef.h"):
            bad.append(f"{p.name} ({first[1]})")
    assert bad == []


def test_platform_layer_covers_posix_and_windows():
    found = set().union(*(_system_includes(CSRC / "core" / name) for name in PLATFORM_LAYER))
    assert {"pthread.h", "dlfcn.h", "windows.h"} <= found
    assert "#ifdef GA_OS_WINDOWS" in (CSRC / "core" / "ga_platform.c").read_text()


def test_the_checks_above_can_fail(tmp_path):
    """The include scanner finds what it looks for."""
    f = tmp_path / "py_bad.c"
    f.write_text('#include "py_common.h"\n#include "ga_cpu.h"\n#include <pthread.h>\n')
    assert _includes(f) & BACKEND_PRIVATE == {"ga_cpu.h"}
    assert _system_includes(f) - PORTABLE_HEADERS == {"pthread.h"}
    f.write_text("/* pthread_create */ static _Thread_local int x; // dlopen\n")
    assert SYSTEM_CALLS.findall(_code(f)) == ["_Thread_local"]
