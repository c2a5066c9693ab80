"""help() and Jupyter's ``?`` must show every public name of gpuarr with its signature.

The walk covers the package namespace, the methods and properties of its classes
(Array, Device, DType, ...), and gpuarr.linalg, random, nn and testing. A public
callable passes when it has its own docstring and ``inspect.signature`` can read it:
for C functions that needs the ``name(args)\\n--\\n\\n`` first line (CPython's text
signature); for Python functions the first line of the docstring must be the
signature, with the same parameters as the code.
"""
import ast
import inspect
import pickle
import pydoc
import types

import pytest

import gpuarr

NAMESPACES = [gpuarr, gpuarr.linalg, gpuarr.fft, gpuarr.random, gpuarr.nn, gpuarr.nn.functional,
              gpuarr.optim, gpuarr.testing, gpuarr.autograd]

# Dunders a class defines that help() shows and users call through syntax or
# protocols; __init__ is documented by its class's docstring (help(cls) prints the
# constructor's signature above it), and __new__ by the class signature.
_COVERED_BY_CLASS = {"__init__", "__new__"}

# Callables whose signature inspect cannot read, each for a reason that no docstring
# can fix.
NO_SIGNATURE = {
    "gpuarr.Array": "arrays are not constructed through the type (Array() raises "
                    "TypeError pointing to gpuarr.array, zeros, ...), so it has no "
                    "constructor signature to show",
    "gpuarr.autograd.Node": "nodes are made by recorded operations (an array's grad_fn), "
                            "never by calling the type",
}


def _exception_without_signature(obj):
    # CPython (3.11/3.12) has no text signature for BaseException's C constructor, and a
    # heap exception type made by PyErr_NewExceptionWithDoc would show the `--` marker
    # in help() if its doc carried one. Such exceptions take *args like every other.
    if not (isinstance(obj, type) and issubclass(obj, BaseException)):
        return False
    try:
        inspect.signature(obj)
    except (TypeError, ValueError):
        return isinstance(obj.__init__, types.WrapperDescriptorType)
    return False


def _public_names(mod):
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
    return sorted(names)


def _ours(obj):
    """Defined by gpuarr (not re-exported from NumPy or the standard library)."""
    mod = getattr(obj, "__module__", None) or ""
    return mod == "gpuarr" or mod.startswith("gpuarr.")


def _generated(fn):
    """Methods written by dataclasses/namedtuple, not by us: generated code, or a
    function of the dataclasses module itself (Python 3.13 sets a dataclass's
    __replace__ to dataclasses._replace)."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    return code is not None and (code.co_filename.startswith("<")
                                 or getattr(fn, "__module__", None) == "dataclasses")


def _class_members(qual, cls):
    for name, raw in vars(cls).items():
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            continue
        if name in _COVERED_BY_CLASS:
            continue
        if isinstance(raw, (property, types.GetSetDescriptorType)):
            yield f"{qual}.{name}", raw, "attribute"
        elif isinstance(raw, (staticmethod, classmethod)):
            yield f"{qual}.{name}", raw.__func__, "callable"
        elif isinstance(raw, types.MethodDescriptorType):
            yield f"{qual}.{name}", raw, "callable"
        elif isinstance(raw, types.FunctionType):
            if name.startswith("__") and _generated(raw):
                continue
            yield f"{qual}.{name}", raw, "callable"
        # wrapper_descriptor (slots such as __add__) carry CPython's own doc and
        # signature; data (ints, None) is not callable.


def _public_api():
    seen = set()
    for mod in NAMESPACES:
        for name in _public_names(mod):
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType) or not callable(obj) or not _ours(obj):
                continue
            if id(obj) in seen:
                continue  # an alias (absolute is abs, gpuarr.rand is random.rand)
            seen.add(id(obj))
            qual = f"{mod.__name__}.{name}"
            yield qual, obj, "callable"
            if isinstance(obj, type):
                yield from _class_members(qual, obj)


API = sorted(set(_public_api()), key=lambda t: t[0])
CALLABLES = [(q, o) for q, o, kind in API if kind == "callable"]
ATTRIBUTES = [(q, o) for q, o, kind in API if kind == "attribute"]


def _ids(items):
    return [q for q, _ in items]


def _own_doc(obj):
    return (obj.__doc__ or "").strip()


def test_the_walk_finds_the_api():
    """Guards the walker itself: it must see the names the chapter relies on."""
    quals = {q for q, _, _ in API}
    for name in ["gpuarr.zeros", "gpuarr.try_gpu", "gpuarr.synchronize",
                 "gpuarr.Array.to", "gpuarr.Array.numpy", "gpuarr.Array.sum",
                 "gpuarr.Array.device", "gpuarr.Array.T", "gpuarr.Device.__enter__",
                 "gpuarr.DType.itemsize", "gpuarr.linalg.norm", "gpuarr.random.seed",
                 "gpuarr.nn.Linear", "gpuarr.nn.Module.to", "gpuarr.nn.Parameter",
                 "gpuarr.nn.functional.cross_entropy", "gpuarr.optim.SGD.step",
                 "gpuarr.testing.assert_allclose"]:
        assert name in quals, name
    assert len(CALLABLES) > 150


@pytest.mark.parametrize("qual,obj", CALLABLES, ids=_ids(CALLABLES))
def test_public_callable_has_a_docstring(qual, obj):
    assert _own_doc(obj), f"{qual} has no docstring: help({qual}) would show nothing"


@pytest.mark.parametrize("qual,obj", ATTRIBUTES, ids=_ids(ATTRIBUTES))
def test_public_property_has_a_docstring(qual, obj):
    assert (obj.__doc__ or "").strip(), f"{qual} has no docstring"


@pytest.mark.parametrize("qual,obj", CALLABLES, ids=_ids(CALLABLES))
def test_public_callable_has_a_signature_inspect_can_read(qual, obj):
    if qual in NO_SIGNATURE or _exception_without_signature(obj):
        with pytest.raises((TypeError, ValueError)):
            inspect.signature(obj)  # the allow-list must not outlive the reason
        return
    try:
        inspect.signature(obj)
    except (TypeError, ValueError) as e:
        hint = ("give the C docstring a first line 'name(args)\\n--\\n\\n'"
                if not isinstance(obj, types.FunctionType) else "")
        pytest.fail(f"inspect.signature({qual}) fails: {e}. {hint}")


def _doc_line_parameters(line):
    """Parameter names of a docstring's first line ``name(a, b=1, *, c)``, each with
    a trailing '=' when the docstring shows a default; None if it is not a call."""
    name, paren, rest = line.partition("(")
    if not paren or not name.strip().isidentifier() or ")" not in rest:
        return None, None
    try:
        tree = ast.parse(f"def f({rest[:rest.rindex(')')]}): pass")
    except SyntaxError:
        return name.strip(), None
    a = tree.body[0].args
    pos = a.posonlyargs + a.args
    first_default = len(pos) - len(a.defaults)
    names = [p.arg + ("=" if i >= first_default else "") for i, p in enumerate(pos)]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    names += [p.arg + ("=" if d is not None else "")
              for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return name.strip(), names


def _code_parameters(fn, is_method):
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            out.append("*" + p.name)
        elif p.kind is p.VAR_KEYWORD:
            out.append("**" + p.name)
        else:
            out.append(p.name + ("=" if p.default is not p.empty else ""))
    if is_method and out and out[0] == "self":
        out = out[1:]
    return out


PY_FUNCTIONS = [(q, o) for q, o in CALLABLES if isinstance(o, types.FunctionType)]


@pytest.mark.parametrize("qual,fn", PY_FUNCTIONS, ids=_ids(PY_FUNCTIONS))
def test_python_docstring_first_line_is_the_signature(qual, fn):
    first = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
    name, documented = _doc_line_parameters(first)
    assert documented is not None, (
        f"{qual}: the docstring's first line should be its signature, got {first!r}")
    attr = qual.rsplit(".", 1)[1]
    assert name in (attr, fn.__name__), f"{qual}: first line names {name!r}"
    is_method = qual.count(".") >= 2 and qual.rsplit(".", 2)[1][:1].isupper()
    actual = _code_parameters(fn, is_method)
    bare = [p.rstrip("=") for p in documented]
    assert bare == [p.rstrip("=") for p in actual], (
        f"{qual}: docstring says {first!r}, the code takes {actual}")
    # A default shown in the docstring must exist (a required parameter written with
    # a None sentinel, so that omitting it gets a helpful error, may be shown bare).
    for doc_p, code_p in zip(documented, actual):
        if doc_p.endswith("="):
            assert code_p.endswith("="), f"{qual}: {doc_p[:-1]} has no default"


C_FUNCTIONS = [(q, o) for q, o in CALLABLES
               if isinstance(o, (types.BuiltinFunctionType, types.MethodDescriptorType))]


@pytest.mark.parametrize("qual,fn", C_FUNCTIONS, ids=_ids(C_FUNCTIONS))
def test_c_function_uses_the_text_signature_convention(qual, fn):
    assert fn.__text_signature__, (
        f"{qual}: start its C docstring with '{fn.__name__}(args)\\n--\\n\\n'")
    assert not (fn.__doc__ or "").startswith(fn.__name__ + "("), (
        f"{qual}: the signature line was not recognised (it needs a '--' line after it)")
    if isinstance(fn, types.MethodDescriptorType):
        # `name($self, /, ...)`: without $self the unbound method's signature would
        # lack self, and help() and stub checkers would see the wrong parameters.
        params = list(inspect.signature(fn).parameters)
        assert params[:1] == ["self"], f"{qual}: start the text signature with '$self, '"


def test_c_types_carry_text_signatures():
    assert str(inspect.signature(gpuarr.Device)) == "(device, index=None)"
    assert str(inspect.signature(gpuarr.DType)) == "(name)"


@pytest.mark.parametrize("mod", NAMESPACES, ids=lambda m: m.__name__)
def test_help_renders_every_namespace(mod):
    text = pydoc.render_doc(mod, renderer=pydoc.plaintext)
    assert mod.__name__ in text


def test_help_of_array_shows_methods_with_signatures():
    text = pydoc.render_doc(gpuarr.Array, renderer=pydoc.plaintext)
    assert "to(self, *args, device=None, dtype=None, non_blocking=False, copy=False)" in text
    assert "copyto(" in text and "numpy(" in text
    assert "sum(self, axis=None" in text


def test_array_cannot_be_constructed_through_the_type():
    # help(gpuarr.Array) has no constructor signature because of this.
    with pytest.raises(TypeError, match="gpuarr.array"):
        gpuarr.Array()


def test_dtype_pickles_as_the_same_singleton():
    # what DType.__reduce__'s docstring promises
    for name in ["bool", "int8", "float32", "complex128"]:
        dt = getattr(gpuarr, name)
        assert pickle.loads(pickle.dumps(dt)) is dt


def test_device_pickles_by_value():
    for d in [gpuarr.cpu(), gpuarr.gpu(0), gpuarr.gpu(3)]:
        assert pickle.loads(pickle.dumps(d)) == d
