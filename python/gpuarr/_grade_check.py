"""The static check of ``python -m gpuarr.grade``: reject, before it is imported, graded
code that reaches around what grades it.

A student's module runs in the same process as its grader, so nothing inside that
process is out of its reach: ctypes reads and writes any memory, frames lead to the
grader's variables, a thread outlives the test, and every gpuarr function can be
replaced. The grading run seals each exercise in a process of its own (``_grade_seal``);
this check closes what is left inside that process, by refusing code that could use
any of the means, before the code ever runs.

It is an allow-list: a graded file may import gpuarr's public modules, ``math``, and
the modules its exercise's template imports or lists on a line
``# Graded code may import: numpy, ...`` (``allowed_imports``); nothing else. Names
that reach around Python (eval, exec, getattr with a computed name, globals, open,
os, sys, threading, ctypes...) are refused wherever they appear: called, aliased
(``run = eval``) or reached as an attribute (``ga.os``, ``x.ctypes``). It reads the
syntax tree only (Python's ``ast``), so it cannot be fooled by what the code would
compute; the rules are deliberately broad for first-year exercises (no ``_`` names at
all), and each refusal names the line and says why.
"""
import ast
import dataclasses
import re

# Modules every graded file may import (gpuarr: its public modules only).
ALWAYS_ALLOWED = frozenset({"gpuarr", "math"})
# Modules no template may open up, with the reason shown to the student.
_NEVER_MODULES = {
    "ctypes": "it reads and writes any memory of the process",
    "cffi": "it reads and writes any memory of the process",
    "os": "it writes files and reaches the grading process's channels",
    "sys": "it reaches the modules and frames of the grader",
    "threading": "a thread outlives the test that grades it",
    "_thread": "a thread outlives the test that grades it",
    "inspect": "it reaches the grader's stack frames and variables",
    "gc": "it reaches every object of the process, the grader's included",
    "importlib": "it loads or reloads modules behind the grader's back",
    "builtins": "it changes Python's own functions",
    "subprocess": "it runs other programs",
    "signal": "it interrupts the grader",
    "pytest": "graded code does not need the test runner",
    "conftest": "it is the graders' own file",
}
_FORBIDDEN_GPUARR = {
    "testing": "gpuarr.testing holds the graders' helpers",
    "pytest_plugin": "gpuarr.pytest_plugin is the graders' plugin",
    "grade": "gpuarr.grade is the grading run itself",
}
# Names refused wherever they appear (called, aliased, assigned, imported), and why.
_FORBIDDEN_NAMES = {
    "eval": "it runs code that this check cannot read",
    "exec": "it runs code that this check cannot read",
    "compile": "it compiles code that this check cannot read",
    "globals": "it reaches module variables by name",
    "locals": "it reaches variables by name",
    "vars": "it reaches an object's variables by name",
    "setattr": "it changes attributes by name",
    "delattr": "it deletes attributes by name",
    "open": "graded code reads and writes no files of its own (the exercise's "
            "functions do that)",
    "breakpoint": "it stops the grader",
    "memoryview": "it reads raw memory",
    "input": "nobody is there to answer it",
    "exit": "it ends the grading process",
    "quit": "it ends the grading process",
    **{m: f"the module {m}: {why}" for m, why in _NEVER_MODULES.items()
       if not m.startswith("_")},
}
# getattr/hasattr are fine with a constant public name: getattr(x, "w").
_BY_NAME = {"getattr", "hasattr"}
# Attribute names refused on any object: modules reached through another module
# (ga.os, np.ctypes), a NumPy array's raw memory (x.ctypes), the graders' helpers.
_FORBIDDEN_ATTRIBUTES = {
    **{m: f"it reaches the module {m}: {why}" for m, why in _NEVER_MODULES.items()
       if not m.startswith("_")},
    "ctypes": "it reaches raw memory (x.ctypes) or the module ctypes",
    "testing": "it reaches the graders' helpers (gpuarr.testing, numpy.testing)",
    "pytest_plugin": "it reaches the graders' plugin",
    "ctypeslib": "it reaches raw memory",
}
# Attributes (without a leading "_") that lead to stack frames and compiled code.
_FRAME_ATTRIBUTES = {"f_back", "f_locals", "f_globals", "f_builtins", "f_code",
                     "f_trace", "f_lineno", "f_lasti", "tb_frame", "tb_next", "gi_frame",
                     "cr_frame", "ag_frame", "gi_code", "cr_code", "ag_code", "co_code",
                     "co_consts", "co_names", "co_varnames", "co_filename"}
_ALLOWED_DUNDERS = {"__name__", "__doc__", "__main__", "__init__", "__file__"}
_DECLARED = re.compile(r"^#\s*graded code may (?:also )?import:\s*(.*)$", re.I | re.M)


def allowed_imports(template_source):
    """allowed_imports(template_source) -> frozenset of top-level module names

    What a graded file may import: gpuarr and math, the modules the exercise's template
    imports itself, and those it lists on a line ``# Graded code may import: numpy``.
    A module of ``_NEVER_MODULES`` stays refused even when a template lists it."""
    names = set(ALWAYS_ALLOWED)
    try:
        tree = ast.parse(template_source)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    for line in _DECLARED.findall(template_source):
        line = line.split("(")[0]  # "numpy (gpuarr and math always)": the names before
        names.update(n for n in re.findall(r"[A-Za-z]\w*", line))
    return frozenset(n for n in names if n not in _NEVER_MODULES)


@dataclasses.dataclass(frozen=True)
class Problem:
    """One refusal: where (1-based line, 0-based column), the source line, and why."""

    line: int
    col: int
    source: str
    why: str

    def format(self, filename):
        """format(filename): ``ex3_norm_log.py:7: `import ctypes`: imports ctypes (...)``"""
        return f"{filename}:{self.line}: `{self.source}`: {self.why}"


def check_source(source, filename="<graded>", allowed=ALWAYS_ALLOWED):
    """check_source(source, filename='<graded>', allowed=ALWAYS_ALLOWED)

    The problems that forbid grading ``source`` (a module's text), in line order; an
    empty list when it may be imported. ``allowed``: the top-level modules it may
    import (``allowed_imports`` of its exercise's template). A file that does not parse
    is one problem."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        return [Problem(e.lineno or 1, (e.offset or 1) - 1, (e.text or "").strip(),
                        f"it does not parse: {e.msg}")]
    lines = source.splitlines()
    checker = _Checker(lines, frozenset(allowed) | ALWAYS_ALLOWED)
    checker.collect_aliases(tree)
    checker.visit(tree)
    return sorted(set(checker.problems), key=lambda p: (p.line, p.col, p.why))


def _root_name(node):
    """The Name at the root of an attribute/subscript/call chain (x in x.a[0].b), or None."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _chain(node):
    """["gpuarr", "linalg", "norm"] for gpuarr.linalg.norm; None if not a pure chain."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


class _Checker(ast.NodeVisitor):
    def __init__(self, lines, allowed):
        self.lines = lines
        self.allowed = allowed
        self.problems = []
        self.modules = {}  # local name -> dotted module path it stands for
        self.constant_name_calls = set()  # ids of getattr names called with a constant

    def problem(self, node, why):
        line = getattr(node, "lineno", 1)
        src = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        self.problems.append(Problem(line, getattr(node, "col_offset", 0), src, why))

    # -- which names stand for modules (flow-insensitive: any binding counts) --------
    def collect_aliases(self, tree):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.modules[a.asname] = a.name
                    else:
                        top = a.name.split(".")[0]
                        self.modules[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    self.modules[a.asname or a.name] = f"{node.module}.{a.name}"
        # m = gpuarr; f = gpuarr.linalg: the new name stands for the module too
        changed = True
        while changed:
            changed = False
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign):
                    chain = _chain(node.value)
                    if chain and chain[0] in self.modules:
                        path = ".".join([self.modules[chain[0]], *chain[1:]])
                        for t in node.targets:
                            if isinstance(t, ast.Name) and self.modules.get(t.id) != path:
                                self.modules[t.id] = path
                                changed = True

    def module_of(self, node):
        chain = _chain(node)
        if chain and chain[0] in self.modules:
            return ".".join([self.modules[chain[0]], *chain[1:]])
        return None

    # -- imports ----------------------------------------------------------------------
    def check_module_name(self, node, name):
        parts = name.split(".")
        if any(p.startswith("_") for p in parts):
            self.problem(node, f"imports {name}: modules whose names begin with _ are "
                               "private (graded code may not use names that begin with _)")
            return
        why = _NEVER_MODULES.get(parts[0])
        if why:
            self.problem(node, f"imports {name}, which graded code may not use: {why}")
        elif parts[0] not in self.allowed:
            self.problem(node, f"imports {name}: this exercise's file may import only "
                               f"{', '.join(sorted(self.allowed))} (the modules its "
                               "template names)")
        elif parts[0] == "gpuarr" and len(parts) > 1 and parts[1] in _FORBIDDEN_GPUARR:
            self.problem(node, f"imports {name}: {_FORBIDDEN_GPUARR[parts[1]]}")
        elif any(p in _FORBIDDEN_ATTRIBUTES for p in parts[1:]):
            bad = next(p for p in parts[1:] if p in _FORBIDDEN_ATTRIBUTES)
            self.problem(node, f"imports {name}: {_FORBIDDEN_ATTRIBUTES[bad]}")

    def visit_Import(self, node):
        for a in node.names:
            self.check_module_name(node, a.name)
            if a.asname:
                self.check_bound_name(node, a.asname)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.level:
            self.problem(node, "a relative import: graded code imports only installed "
                               "modules")
        elif node.module:
            self.check_module_name(node, node.module)
            for a in node.names:
                if a.asname:
                    self.check_bound_name(node, a.asname)
                if a.name == "*":
                    self.problem(node, f"`from {node.module} import *` brings in names "
                                       "this check cannot see; import the names you use")
                else:
                    self.check_module_name(node, f"{node.module}.{a.name}")
        self.generic_visit(node)

    # -- names and attributes -----------------------------------------------------------
    def check_bound_name(self, node, name):
        if name in _FORBIDDEN_NAMES or name in _BY_NAME:
            self.problem(node, f"binds the name {name}, which graded code may not use")

    def visit_Name(self, node):
        if node.id.startswith("__") and node.id not in _ALLOWED_DUNDERS:
            self.problem(node, f"uses {node.id}, which reaches Python's internals")
        elif node.id in _FORBIDDEN_NAMES:
            # called, aliased (run = eval) or passed along: any use is refused
            self.problem(node, f"uses {node.id}, which graded code may not use: "
                               f"{_FORBIDDEN_NAMES[node.id]}")
        elif node.id in _BY_NAME and id(node) not in self.constant_name_calls:
            self.problem(node, f"uses {node.id} other than as {node.id}(x, \"name\") "
                               "with a constant name: write the attribute itself (x.name)")
        self.generic_visit(node)

    def visit_arg(self, node):
        self.check_bound_name(node, node.arg)
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        self.check_bound_name(node, node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.check_bound_name(node, node.name)
        self.generic_visit(node)

    def visit_Attribute(self, node):
        a = node.attr
        owner = self.module_of(node.value)
        if a.startswith("_") and a not in _ALLOWED_DUNDERS:
            self.problem(node, f"uses the private name .{a} (graded code may not use "
                               "names that begin with _: they reach gpuarr's internals)")
        elif a in _FRAME_ATTRIBUTES:
            self.problem(node, f"uses .{a}, which reaches stack frames or compiled code")
        elif a in _FORBIDDEN_ATTRIBUTES:
            self.problem(node, f"uses .{a}: {_FORBIDDEN_ATTRIBUTES[a]}")
        elif owner and owner.split(".")[0] == "gpuarr" and a in _FORBIDDEN_GPUARR:
            self.problem(node, f"uses gpuarr.{a}: {_FORBIDDEN_GPUARR[a]}")
        self.generic_visit(node)

    # -- calls --------------------------------------------------------------------------
    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name) and f.id in _BY_NAME:
            name = node.args[1] if len(node.args) >= 2 else None
            if (isinstance(name, ast.Constant) and isinstance(name.value, str)
                    and not name.value.startswith("_") and len(node.args) <= 3
                    and not node.keywords):
                self.constant_name_calls.add(id(f))
            else:
                self.problem(node, f"calls {f.id}() with a computed name: write the "
                                   "attribute itself (x.name)")
            self.constant_name_calls.add(id(f))  # reported once, here
        elif isinstance(f, ast.Attribute) and f.attr in ("attrgetter", "methodcaller"):
            self.problem(node, f"calls {f.attr}(), which reaches attributes by name")
        self.generic_visit(node)

    # -- strings ------------------------------------------------------------------------
    def visit_Constant(self, node):
        v = node.value
        if isinstance(v, str):
            if v.isidentifier() and v.startswith("_") and v not in _ALLOWED_DUNDERS:
                self.problem(node, f"names {v!r} in a string (graded code may not use "
                                   "names that begin with _)")
            elif v.isidentifier() and v in _FRAME_ATTRIBUTES | {"modules", "settrace"}:
                self.problem(node, f"names {v!r} in a string, which reaches stack frames "
                                   "or modules")
            elif "/proc/" in v or v.startswith("/dev/mem"):
                self.problem(node, "names a file of the system that reads the memory of "
                                   "processes")
        self.generic_visit(node)

    # -- assignments to modules' attributes ---------------------------------------------
    def check_target(self, node, verb):
        if isinstance(node, (ast.Tuple, ast.List)):
            for e in node.elts:
                self.check_target(e, verb)
            return
        if isinstance(node, ast.Starred):
            self.check_target(node.value, verb)
            return
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            root = _root_name(node)
            if root in self.modules:
                what = ast.unparse(node)
                self.problem(node, f"{verb} {what}, an attribute of the module "
                                   f"{self.modules[root]}: graded code may not change "
                                   "gpuarr, NumPy, other modules or the graders")

    def visit_Assign(self, node):
        for t in node.targets:
            self.check_target(t, "assigns to")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self.check_target(node.target, "assigns to")
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self.check_target(node.target, "assigns to")
        self.generic_visit(node)

    def visit_Delete(self, node):
        for t in node.targets:
            self.check_target(t, "deletes")
        self.generic_visit(node)

    def visit_For(self, node):
        self.check_target(node.target, "assigns to")
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_With(self, node):
        for item in node.items:
            if item.optional_vars is not None:
                self.check_target(item.optional_vars, "assigns to")
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_comprehension(self, node):
        self.check_target(node.target, "assigns to")
        self.generic_visit(node)
