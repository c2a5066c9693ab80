"""The type stubs (gpuarr/*.pyi, py.typed) describe the runtime package: they parse,
they name every public name of each module and nothing that does not exist, and (when
mypy is installed) a program using gpuarr type-checks with ``mypy --strict`` while a
wrong one does not, and mypy's stubtest finds the stubs consistent with the runtime."""
import ast
import os
import pathlib
import site
import subprocess
import sys
import textwrap
import types

import pytest

import gpuarr
from gpuarr import _core

PKG = pathlib.Path(gpuarr.__file__).resolve().parent
ROOT = PKG.parent  # the directory that holds the gpuarr package under test

# stub file -> runtime module
STUBS = {
    "__init__.pyi": gpuarr,
    "_core.pyi": _core,
    "linalg/__init__.pyi": gpuarr.linalg,
    "fft.pyi": gpuarr.fft,
    "random.pyi": gpuarr.random,
    "special.pyi": gpuarr.special,
    "nn/__init__.pyi": gpuarr.nn,
    "nn/functional.pyi": gpuarr.nn.functional,
    "optim.pyi": gpuarr.optim,
    "parallel.pyi": gpuarr.parallel,
    "testing.pyi": gpuarr.testing,
    "autograd.pyi": gpuarr.autograd,
    "cuda.pyi": gpuarr.cuda,
}

# Classes whose stubbed members are compared with the runtime class.
CLASSES = {
    "_core.pyi": ["Array", "Device", "DType"],
    "__init__.pyi": ["TransferStats"],
    "nn/__init__.pyi": ["Module", "Linear", "Sequential", "DataParallel", "ReLU", "Sigmoid", "Tanh",
                        "Flatten", "Dropout", "MSELoss", "CrossEntropyLoss"],
    "optim.pyi": ["Optimizer", "SGD", "Adam"],
}


def _tree(name):
    return ast.parse((PKG / name).read_text(), filename=name)


def _top_level_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            # only `import x as x` re-exports in a stub (PEP 484)
            names.update(a.asname for a in node.names if a.asname == a.name)
    return names


def _class_names(tree, cls):
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            out = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    out.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    out.add(item.target.id)
            return out
    raise AssertionError(f"class {cls} is not in the stub")


def _public(names):
    return {n for n in names if not n.startswith("_")}


def _runtime_public(mod):
    if hasattr(mod, "__all__"):
        return set(mod.__all__)
    # Submodules are checked by name below: an imported one (gpuarr.pytest_plugin,
    # loaded by pytest) becomes an attribute without being part of the API, and pytest's
    # assertion rewriting adds names that are not identifiers ('@py_builtins').
    return {n for n, v in vars(mod).items() if not n.startswith("_") and n.isidentifier()
            and not isinstance(v, types.ModuleType)}


def test_stub_reexports_the_submodules():
    names = _top_level_names(_tree("__init__.pyi"))
    assert {"fft", "linalg", "random", "nn", "optim", "testing", "autograd"} <= names


def test_py_typed_marker_ships_next_to_the_stubs():
    assert (PKG / "py.typed").is_file()


@pytest.mark.parametrize("stub", sorted(STUBS))
def test_stub_parses(stub):
    _tree(stub)


@pytest.mark.parametrize("stub", sorted(STUBS))
def test_stub_names_every_public_name_of_its_module(stub):
    mod = STUBS[stub]
    missing = _runtime_public(mod) - _top_level_names(_tree(stub))
    assert not missing, f"{stub} lacks {sorted(missing)} (public in {mod.__name__})"


def _private_functions(tree):
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
            and n.name.startswith("_") and not n.name.startswith("__")}


@pytest.mark.parametrize("stub", sorted(STUBS))
def test_stub_names_nothing_that_does_not_exist(stub):
    mod = STUBS[stub]
    # Private classes and aliases in a stub are helper types (_DeviceLike,
    # _TransferCounter); private functions it declares must exist like public names.
    tree = _tree(stub)
    stubbed = _public(_top_level_names(tree)) | _private_functions(tree)
    ghosts = {n for n in stubbed if not hasattr(mod, n)}
    assert not ghosts, f"{stub} declares {sorted(ghosts)}, absent from {mod.__name__}"


_PROTOCOL_DUNDERS = {
    "__getitem__", "__setitem__", "__len__", "__iter__", "__enter__", "__exit__",
    "__array__", "__dlpack__", "__dlpack_device__", "__matmul__", "__add__", "__eq__",
    "__bool__", "__float__", "__int__", "__index__", "__call__", "__sub__",
}


@pytest.mark.parametrize("stub,cls", [(s, c) for s, cs in CLASSES.items() for c in cs])
def test_stub_class_has_every_public_member_and_no_ghost(stub, cls):
    runtime = getattr(STUBS[stub], cls)
    stubbed = _class_names(_tree(stub), cls)
    want = {n for n in vars(runtime) if not n.startswith("_")}
    want |= {n for n in _PROTOCOL_DUNDERS if n in vars(runtime)}
    assert not want - stubbed, f"stub of {cls} lacks {sorted(want - stubbed)}"
    ghosts = {n for n in stubbed if not hasattr(runtime, n)
              and n not in getattr(runtime, "__dataclass_fields__", {})
              and not (stub == "nn/__init__.pyi" and n in {
                  "weight", "bias", "in_features", "out_features", "training", "p",
                  "start_dim", "end_dim", "reduction", "ignore_index", "module",
                  "devices", "output_device", "dim"})
              and not (stub == "optim.pyi" and n in {"defaults", "state", "param_groups"})}
    assert not ghosts, f"stub of {cls} declares {sorted(ghosts)}, absent at run time"


def test_linear_parameters_declared_in_the_stub_exist_on_instances():
    lin = gpuarr.nn.Linear(2, 3)
    for name in ["weight", "bias", "in_features", "out_features"]:
        assert hasattr(lin, name)


# --- mypy (optional) ---------------------------------------------------------------------

GOOD = '''
import gpuarr
from gpuarr import nn


def train_step() -> float:
    dev = gpuarr.try_gpu()
    x = gpuarr.ones((2, 3), device=dev, dtype=gpuarr.float32)
    y = gpuarr.arange(6, device=dev).reshape(2, 3)
    z = (x + 2).exp() * y
    w: gpuarr.Array = z @ z.T
    x[0, 1:] = 1.5
    col: gpuarr.Array = x[..., 0] + x[:, None, 0].sum(axis=(0, 1))
    net = nn.Sequential(nn.Linear(3, 1)).to(dev)
    out = net(x)
    with gpuarr.count_transfers() as t:
        host = out.numpy()
    with gpuarr.gpu(0):
        r = gpuarr.random.uniform(size=(3,)) + gpuarr.rand(2, 3).sum()
    gpuarr.testing.assert_allclose(r, r)
    gpuarr.synchronize()
    stats: gpuarr.TransferStats = gpuarr.transfer_stats()
    n: gpuarr.Array = gpuarr.linalg.norm(w)
    dt: gpuarr.DType = x.dtype
    devs: list[gpuarr.Device] = gpuarr.try_all_gpus()
    return float(n) + col.item().real + t.d2h_count + host.size + stats.h2d_bytes + dt.itemsize + len(devs)
'''

BAD = '''
import gpuarr

a: int = gpuarr.zeros(3)
b = gpuarr.ones(3).to(5)
c: str = gpuarr.num_gpus()
d = gpuarr.Array.no_such_method
'''


def _mypy_available():
    try:
        import mypy.api  # noqa: F401
    except ImportError:
        return False
    return True


needs_mypy = pytest.mark.skipif(not _mypy_available(), reason="mypy is not installed")


def _run(args, tmp_path):
    env = dict(os.environ)
    # An installed gpuarr is found by mypy through py.typed; a source tree is named
    # (mypy refuses site-packages in MYPYPATH).
    if str(ROOT) not in {*site.getsitepackages(), site.getusersitepackages()}:
        env.update(MYPYPATH=str(ROOT), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


@needs_mypy
def test_a_gpuarr_program_passes_mypy_strict(tmp_path):
    (tmp_path / "good.py").write_text(textwrap.dedent(GOOD))
    r = _run(["mypy", "--strict", "--no-incremental", "good.py"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


@needs_mypy
def test_mypy_strict_catches_misuse_of_gpuarr(tmp_path):
    (tmp_path / "bad.py").write_text(textwrap.dedent(BAD))
    r = _run(["mypy", "--strict", "--no-incremental", "bad.py"], tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    for line in (4, 5, 6, 7):
        assert f"bad.py:{line}: error" in r.stdout, r.stdout


@needs_mypy
def test_stubtest_finds_the_stubs_consistent_with_the_runtime(tmp_path):
    # The private Python modules have no stubs (stubtest would read their source as
    # one); their public functions are checked through gpuarr/__init__.pyi.
    (tmp_path / "allow.txt").write_text(
        r"gpuarr\._(elementwise|creation|devices|reduce|manipulation|matmul"
        r"|io|info|printing|tour|methods|fuse|capture)(\..*)?" "\n"
        # gpuarr.nn's private modules: their names are checked through nn/__init__.pyi
        r"gpuarr\.nn\._(module|layers|loss)(\..*)?" "\n"
        # the CUDA plugins are shared libraries beside _core, not Python modules
        r"gpuarr\.libgpuarr_cuda(_emu)?" "\n"
        # gpuarr.compat: the framework shims spell other libraries' APIs over gpuarr's
        # public one (docs/DESIGN.md, "Framework shims"); they have no stubs of their own
        r"gpuarr\.compat(\..*)?" "\n")
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\nignore_missing_imports = True\n"
        "[mypy-gpuarr._elementwise,gpuarr._creation,gpuarr._devices,gpuarr._reduce,"
        "gpuarr._manipulation,gpuarr._matmul,gpuarr._io,gpuarr._info,"
        "gpuarr._printing,gpuarr._tour,gpuarr._methods,gpuarr._fuse,gpuarr._capture,"
        "gpuarr.__main__,"
        "gpuarr.nn._module,gpuarr.nn._layers,gpuarr.nn._loss,"
        "gpuarr.pytest_plugin,gpuarr.compat.*]\nignore_errors = True\n")
    r = _run(["mypy.stubtest", "--mypy-config-file", "mypy.ini", "--allowlist",
              "allow.txt", "--ignore-unused-allowlist", "gpuarr"], tmp_path)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
