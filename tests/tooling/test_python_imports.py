"""No two modules of the Python package import each other, not even through an import
inside a function: such a loop means one of them holds a function that belongs to
the other (issue 41). The graph has an edge A -> B for every ``import`` of B in A,
at the top of the file or deferred inside a function (read with ast, not run).

Two kinds of edge are left out, because they are how a package is built:
- into the package's own ``gpuarr/__init__.py``: it is the public namespace, which
  imports every module; a module may reach it from anywhere (``import gpuarr`` or
  ``from . import no_grad`` inside a function, run after the package has loaded);
- from a module of a subpackage into that subpackage's ``__init__.py`` (which imports
  its own children to make the subpackage's namespace), e.g. nn/_layers.py -> nn/.
An import of a subpackage from outside it (``from .nn import Module``) stays an edge:
it runs the subpackage's ``__init__``, and so every child that it imports."""
import ast
import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "python" / "gpuarr"

pytestmark = pytest.mark.skipif(not PKG.is_dir(), reason="needs a source checkout")


def _modules(pkg):
    """{dotted name: path} of every .py module under `pkg` (a package is its
    __init__'s dotted name: 'gpuarr.nn')."""
    mods = {}
    for p in sorted(pkg.rglob("*.py")):
        parts = (pkg.name,) + p.relative_to(pkg).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def _is_package(name, mods):
    return mods[name].name == "__init__.py"


def _imported(name, path, mods):
    """The modules of `mods` that module `name` imports, anywhere in its file."""
    package = name if _is_package(name, mods) else name.rpartition(".")[0]
    found = set()

    def add(target):
        # `import a.b.c` runs a, a.b and a.b.c (those that are ours): an edge to each
        while target:
            if target in mods:
                found.add(target)
            target = target.rpartition(".")[0]

    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                # `from pkg import mod` imports the module; `from mod import name` the
                # module that defines the name
                add(sub if sub in mods else base)
    found.discard(name)
    return found


def _allowed(src, dst, root):
    if dst == root:
        return False
    # a subpackage's own children may reach its __init__ (it imports them)
    return not (src.startswith(dst + ".") and dst != root)


def import_graph(pkg):
    """{module: set of modules it imports}, less the edges into __init__s that the
    module docstring allows."""
    mods = _modules(pkg)
    root = pkg.name
    return {name: {d for d in _imported(name, path, mods) if _allowed(name, d, root)}
            for name, path in mods.items()}


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _describe(graph, comp):
    return "; ".join(f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp)


def test_no_two_modules_of_gpuarr_import_each_other():
    graph = import_graph(PKG)
    found = cycles(graph)
    assert not found, "import cycles (move the function to the module it belongs in): " + \
        " | ".join(_describe(graph, c) for c in found)


def test_the_graph_sees_the_package():
    # guards against a check that passes because it read nothing
    graph = import_graph(PKG)
    assert "gpuarr.linalg._factorizations" in graph["gpuarr.linalg"]
    assert "gpuarr._core" not in graph  # the extension module is not a .py file


def _fake_package(tmp_path, files):
    pkg = tmp_path / "fakepkg"
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(textwrap.dedent(text))
    return pkg


def test_a_cycle_hidden_inside_a_function_is_found(tmp_path):
    pkg = _fake_package(tmp_path, {
        "__init__.py": "from .a import f\nfrom .b import g\n",
        "a.py": "from .b import g\n\ndef f():\n    return g()\n",
        "b.py": "def g():\n    from .a import f  # deferred: still an edge\n    return f\n",
    })
    assert cycles(import_graph(pkg)) == [["fakepkg.a", "fakepkg.b"]]


def test_a_cycle_through_a_subpackage_is_found(tmp_path):
    pkg = _fake_package(tmp_path, {
        "__init__.py": "",
        "opt.py": "from .sub import Layer\n",
        "sub/__init__.py": "from ._layer import Layer\n",
        "sub/_layer.py": "def step():\n    import fakepkg.opt\n",
    })
    assert cycles(import_graph(pkg)) == [
        ["fakepkg.opt", "fakepkg.sub", "fakepkg.sub._layer"]]


def test_imports_of_the_package_init_are_allowed(tmp_path):
    pkg = _fake_package(tmp_path, {
        "__init__.py": "from .a import f\nfrom . import sub\n",
        # the package's namespace, reached from a function of a module it imports
        "a.py": "def f():\n    import fakepkg\n    from . import f as g\n",
        "sub/__init__.py": "from ._x import x\n",
        # a child reaching its own subpackage's __init__, at the top and in a function
        "sub/_x.py": "from .. import a\nfrom . import x as _\n\n"
                     "def x():\n    from . import y\n",
    })
    assert cycles(import_graph(pkg)) == []
