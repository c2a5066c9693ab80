"""The three layers of docs/DESIGN.md, held by the build and checked here:

- the core (csrc/ga_*.c) is the static library gpuarr_core, compiled without Python's
  include path (an `#include <Python.h>` in it fails the build), and includes no
  binding header;
- the binding (csrc/py_*.c) reaches devices through the core's public headers only,
  never a backend's table or a backend's private header (py_abi.c, which reports the
  ABI's layout to the tests, is the one exception);
- the CUDA plugins link the core's plain-C helpers (gpuarr_common) instead of
  compiling their own copies."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
BACKEND_PRIVATE = {"ga_backend.h", "ga_cpu.h", "ga_cpu_loop.h", "ga_sim.h",
                   "ga_kernels.h", "ga_reduce_math.h", "ga_philox.h"}
ALLOWED = {"py_abi.c": {"ga_backend.h"}}

pytestmark = pytest.mark.skipif(not CSRC.is_dir(), reason="needs a source checkout")


def _includes(path):
    return set(re.findall(r'^\s*#\s*include\s+[<"]([^">]+)[">]', path.read_text(), re.M))


def test_core_files_include_no_python_or_binding_header():
    bad = {p.name: sorted(i for i in _includes(p)
                          if i == "Python.h" or i.startswith("py_") or "numpy" in i)
           for p in sorted(CSRC.glob("ga_*.[ch]"))}
    assert {k: v for k, v in bad.items() if v} == {}


def test_binding_files_use_no_backend_private_header():
    bad = {}
    for p in sorted(CSRC.glob("py_*.[ch]")):
        wrong = _includes(p) & BACKEND_PRIVATE - ALLOWED.get(p.name, set())
        if wrong:
            bad[p.name] = sorted(wrong)
    assert bad == {}, ("the binding asks the core (ga_device.h, ga_creation.h, ...), "
                       f"not a backend: {bad}")


def test_binding_never_calls_into_a_backend_table():
    bad = [p.name for p in sorted(CSRC.glob("py_*.c"))
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


def test_the_checks_above_can_fail(tmp_path):
    """The include scanner finds what it looks for."""
    f = tmp_path / "py_bad.c"
    f.write_text('#include "py_common.h"\n#include "ga_cpu.h"\n')
    assert _includes(f) & BACKEND_PRIVATE == {"ga_cpu.h"}
