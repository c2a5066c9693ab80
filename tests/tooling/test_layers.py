"""The layers of docs/DESIGN.md ("The map"), held by the build and checked here.

csrc/ is in folders by layer, each allowed to include (and call) only the folders
below it:

    core/      errors, dtypes, the op list, platform, config, the backend ABI
    kernels/   the element math that C, nvcc and the emulator all compile
    cpu/, sim/ the two host backends (sim/ runs on cpu/'s kernels)
    runtime/   arrays, devices, transfers, queues, events, faults, the profiler
    ops/       validate, promote, allocate and dispatch each operation
    binding/   the CPython module: the only folder that sees Python
    cuda/      the CUDA plugin (kernels/, selftest/, emu/): the backend ABI only

and no two files include or call each other in a loop. The rules are functions of a
source tree, so each is also shown failing on a small tree made here
(test_each_rule_fails_on_a_tree_that_breaks_it): a new file in the wrong room fails
with a message that names the rule.

Also held: the core is the static library gpuarr_core, compiled without Python's
include path; the binding reaches devices through the core's public headers, never a
backend's table; only the platform layer (core/ga_platform.[ch]) includes a header
that is not C11's own, so the core and the binding build on Linux, macOS and Windows
alike (csrc/cuda/, the CUDA plugins, is Linux's for now; docs/platforms.md's table)."""
import collections
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
while not (ROOT / "pyproject.toml").exists() and ROOT != ROOT.parent:
    ROOT = ROOT.parent  # the repository, wherever this file sits under tests/
CSRC = ROOT / "csrc"

pytestmark = pytest.mark.skipif(not CSRC.is_dir(), reason="needs a source checkout")

# What each folder may include and call, itself included. cuda/emu/ is the emulated
# plugin's CUDA runtime, which runs cuFFT on the CPU backend's FFT (cpu/ga_cpu_fft.c).
MAY_USE = {
    "core": {"core"},
    "kernels": {"core", "kernels"},
    "cpu": {"core", "kernels", "cpu"},
    "sim": {"core", "kernels", "cpu", "sim"},
    "runtime": {"core", "kernels", "runtime"},
    "ops": {"core", "kernels", "runtime", "ops"},
    "binding": {"core", "kernels", "runtime", "ops", "binding"},
    "cuda": {"core", "kernels", "cuda"},
    "cuda/emu": {"core", "kernels", "cuda", "cpu"},
}
SOURCE_SUFFIXES = {".c", ".h", ".cu", ".cuh", ".cpp"}
PYTHON_HEADERS = re.compile(r"^(Python\.h|structmember\.h|numpy/.*)$")


def _sources(root):
    return sorted(p for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES)


def _layer(root, path):
    """The folder that says which rules `path` follows: its first folder under csrc/,
    or cuda/emu for the emulator."""
    parts = path.relative_to(root).parts
    if parts[:2] == ("cuda", "emu"):
        return "cuda/emu"
    return parts[0] if len(parts) > 1 else ""


def _code(path):
    """The file without its comments."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", path.read_text(), flags=re.S)


def _includes(path):
    return set(re.findall(r'^\s*#\s*include\s+[<"]([^">]+)[">]', path.read_text(), re.M))


def _quoted_includes(path):
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', _code(path), re.M)


class Tree:
    """A source tree's files, includes and calls between files."""

    def __init__(self, root):
        self.root = root
        self.files = _sources(root)
        self.by_name = collections.defaultdict(list)
        for p in self.files:
            self.by_name[p.name].append(p)
        self.includes = {p: [self.by_name[pathlib.PurePath(i).name][0]
                             for i in _quoted_includes(p)
                             if self.by_name.get(pathlib.PurePath(i).name)]
                         for p in self.files}
        # calls: a C file calling a function that another C file defines (PEP 7: the
        # name of a defined function starts its line)
        defined = {}
        for p in self.files:
            if p.suffix == ".c":
                for m in re.finditer(r"^((?:ga|pyga)_\w+)\s*\(", _code(p), re.M):
                    defined.setdefault(m[1], p)
        self.calls = {}
        for p in self.files:
            if p.suffix == ".c":
                names = set(re.findall(r"\b((?:ga|pyga)_\w+)\s*\(", _code(p)))
                self.calls[p] = {defined[n]: n for n in sorted(names)
                                 if defined.get(n) not in (None, p)}

    def rel(self, p):
        return p.relative_to(self.root).as_posix()

    def edges(self):
        """(from, to, why) for every include and call between two files."""
        for p, incs in self.includes.items():
            for q in incs:
                if q != p:
                    yield p, q, "includes"
        for p, called in self.calls.items():
            for q, name in called.items():
                yield p, q, f"calls {name}()"


def layer_violations(root):
    """Includes and calls from a folder into one it may not use."""
    tree = Tree(root)
    bad = []
    for p, q, why in tree.edges():
        a, b = _layer(root, p), _layer(root, q)
        allowed = MAY_USE.get(a, set())
        if b.split("/")[0] not in allowed and b not in allowed:
            bad.append(f"{tree.rel(p)} {why} {tree.rel(q)}: {a or 'csrc/'} may use "
                       f"{', '.join(sorted(allowed)) or 'nothing'}")
    return sorted(set(bad))


def python_violations(root):
    """Files outside binding/ that include Python's or NumPy's headers."""
    return sorted(f"{p.relative_to(root).as_posix()} includes {i}"
                  for p in _sources(root) if _layer(root, p) != "binding"
                  for i in _includes(p) if PYTHON_HEADERS.match(i))


def cycles(root):
    """Each loop of files that include or call each other, as 'a -> b -> a' with
    what each edge is (Tarjan's strongly connected components, then one loop in each)."""
    tree = Tree(root)
    graph = collections.defaultdict(dict)
    for p, q, why in tree.edges():
        graph[p].setdefault(q, why)
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(set(comp))

    for v in tree.files:
        if v not in index:
            visit(v)
    loops = []
    for comp in comps:
        # one loop through the component: a path from its first file back to itself
        start = min(comp)
        prev, todo = {start: None}, [start]
        while todo:
            v = todo.pop(0)
            for w in graph[v]:
                if w in comp and w not in prev:
                    prev[w] = v
                    todo.append(w)
        back = next(v for v in sorted(comp) if start in graph[v])
        path = [back]
        while path[-1] != start:
            path.append(prev[path[-1]])
        path.reverse()
        steps = [f"{tree.rel(a)} {graph[a][b]} -> " for a, b in zip(path, path[1:] + [start])]
        loops.append(f"{len(comp)} files: " + "".join(steps) + tree.rel(start))
    return sorted(loops)


def test_no_source_file_at_the_top_of_csrc():
    assert [p.name for p in CSRC.iterdir() if p.is_file() and p.name != "CMakeLists.txt"] == []


def test_every_folder_has_its_rules():
    assert {_layer(CSRC, p) for p in _sources(CSRC)} <= set(MAY_USE)


def test_source_file_names_are_unique():
    """Includes name a file, not a path (each folder is on the include path)."""
    names = collections.Counter(p.name for p in _sources(CSRC))
    assert [n for n, k in names.items() if k > 1] == []


def test_every_folder_includes_and_calls_only_the_folders_below_it():
    assert layer_violations(CSRC) == []


def test_only_the_binding_sees_python():
    assert python_violations(CSRC) == []


def test_no_files_include_or_call_each_other_in_a_loop():
    assert cycles(CSRC) == []


def test_no_source_file_is_longer_than_1500_lines():
    long = {p.relative_to(CSRC).as_posix(): n for p in _sources(CSRC)
            if (n := p.read_text().count("\n")) > 1500}
    assert long == {}, "split it along its own sections (a file a reader can hold)"


def test_each_rule_fails_on_a_tree_that_breaks_it(tmp_path):
    """The checks above find what they look for: a tree with one file in each wrong
    room (an upward include, a backend called from the runtime, Python outside the
    binding, two files calling each other) fails each rule with a message naming it."""
    def write(rel, text):
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)

    write("core/ga_error.h", "int ga_error(int st);\n")
    write("core/ga_error.c", '#include "ga_error.h"\n#include "ga_array.h"\n'
          "int\nga_error(int st)\n{\n    return st;\n}\n")
    write("runtime/ga_array.h", '#include "ga_cpu.h"\n')
    write("runtime/ga_array.c", '#include "ga_array.h"\n'
          "int\nga_array_size(int n)\n{\n    return ga_cpu_count(n);\n}\n")
    write("cpu/ga_cpu.h", "int ga_cpu_count(int n);\n")
    write("cpu/ga_cpu.c", '#include "ga_cpu.h"\n'
          "int\nga_cpu_count(int n)\n{\n    return n ? ga_cpu_again(n - 1) : 0;\n}\n")
    write("cpu/ga_cpu_again.c", "int\nga_cpu_again(int n)\n{\n    return ga_cpu_count(n);\n}\n")
    write("ops/ga_reduce.c", "#include <Python.h>\n")
    assert layer_violations(tmp_path) == [
        "core/ga_error.c includes runtime/ga_array.h: core may use core",
        "runtime/ga_array.c calls ga_cpu_count() cpu/ga_cpu.c: runtime may use core, "
        "kernels, runtime",
        "runtime/ga_array.h includes cpu/ga_cpu.h: runtime may use core, kernels, runtime",
    ]
    assert python_violations(tmp_path) == ["ops/ga_reduce.c includes Python.h"]
    assert cycles(tmp_path) == [
        "2 files: cpu/ga_cpu.c calls ga_cpu_again() -> cpu/ga_cpu_again.c calls "
        "ga_cpu_count() -> cpu/ga_cpu.c"]
    write("ga_stray.c", "")
    assert _layer(tmp_path, tmp_path / "ga_stray.c") == ""  # no room: fails the folder test


def test_binding_never_calls_into_a_backend_table():
    """The binding asks the core (ga_device.h, ga_creation.h, ...), never a backend's
    table (core/ga_backend.h is the ABI; py_abi.c reports its layout to the tests and
    is the one binding file that includes it)."""
    bad = [p.name for p in sorted((CSRC / "binding").glob("*.c"))
           if re.search(r"\bbe->\w+\s*\(|ga_device_backend\s*\(", p.read_text())
           or ("ga_backend.h" in _includes(p) and p.name != "py_abi.c")]
    assert bad == []


def test_core_is_a_static_library_built_without_python():
    text = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r"add_library\(gpuarr_core STATIC \$\{GPUARR_CORE_SOURCES\}\)", text)
    assert re.search(r"python_add_library\(_core MODULE WITH_SOABI "
                     r"\$\{GPUARR_BINDING_SOURCES\}\)", text)
    assert "target_link_libraries(_core PRIVATE gpuarr_core)" in text
    assert re.search(r"set\(GPUARR_CORE_LAYERS core kernels runtime ops cpu sim\)", text)
    assert re.search(r"file\(GLOB GPUARR_BINDING_SOURCES CONFIGURE_DEPENDS "
                     r"\$\{GA_CSRC\}/binding/\*\.c\)", text)


def test_plugins_link_the_common_helpers_instead_of_recompiling_them():
    text = (CSRC / "cuda" / "CMakeLists.txt").read_text()
    assert not re.search(r"ga_(error|dtype|ops)\.c", text), (
        "the plugin compiles its own copy of a core helper")
    assert "gpuarr_common" in text


def test_plugins_see_only_the_abi_and_the_shared_math():
    """The CUDA plugins' include path holds core/ and kernels/ of the core's folders
    (cuda/emu/ adds cpu/ for the CPU FFT), so an include of a runtime or ops header
    from a .cu file fails to compile, as the layer rule above says it must."""
    text = (CSRC / "cuda" / "CMakeLists.txt").read_text()
    dirs = set(re.findall(r"\$\{GA_CSRC_DIR\}/(\w+)", text))
    assert dirs == {"core", "kernels", "cpu"}, dirs


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


def _c_files(pattern):
    """The C files of the core and the binding (csrc/ less the CUDA plugins)."""
    return sorted(p for p in CSRC.rglob(pattern) if "cuda" not in p.relative_to(CSRC).parts)


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
    """The system-header and system-call scanners find what they look for."""
    f = tmp_path / "py_bad.c"
    f.write_text('#include "py_common.h"\n#include "ga_cpu.h"\n#include <pthread.h>\n')
    assert _system_includes(f) - PORTABLE_HEADERS == {"pthread.h"}
    f.write_text("/* pthread_create */ static _Thread_local int x; // dlopen\n")
    assert SYSTEM_CALLS.findall(_code(f)) == ["_Thread_local"]
