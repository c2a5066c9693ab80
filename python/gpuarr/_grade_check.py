"""The static check of ``python -m gpuarr.grade``: reject, before it is imported, graded
code that reaches around what grades it.

A student's module runs in the same process as its grader, so nothing inside that
process is out of its reach: ctypes reads and writes any memory, frames lead to the
grader's variables, and every gpuarr function can be replaced. The library closes what
it can (a counting block sees every copy; the graders' functions are checked after each
test); this check closes the rest for the teacher's grading run, by refusing code that
uses any of the means, before the code ever runs. It reads the syntax tree only
(Python's ``ast``), so it cannot be fooled by what the code would compute, only by
means it does not list; the lists are deliberately broad for first-year exercises
(no ``_`` names at all, no ``getattr`` with a computed name), and each refusal names
the line and says why.
"""
import ast
import dataclasses

# Modules that graded code may not import (nor any submodule, nor any module whose
# name begins with "_"), with the reason shown to the student.
_FORBIDDEN_MODULES = {
    "ctypes": "it reads and writes any memory of the process",
    "cffi": "it reads and writes any memory of the process",
    "mmap": "it maps memory of the process",
    "inspect": "it reaches the grader's stack frames and variables",
    "gc": "it reaches every object of the process, the grader's included",
    "sys": None,  # allowed, but only the attributes in _SYS_ALLOWED
    "importlib": "it loads or reloads modules behind the grader's back",
    "builtins": "it changes Python's own functions",
    "types": "it builds functions and code objects",
    "code": "it compiles and runs code that this check cannot read",
    "codeop": "it compiles and runs code that this check cannot read",
    "dis": "it reads compiled code",
    "marshal": "it loads compiled code",
    "pickle": "it runs code hidden in data",
    "runpy": "it runs code that this check cannot read",
    "subprocess": "it runs other programs",
    "multiprocessing": "it runs other processes",
    "signal": "it interrupts the grader",
    "atexit": "it runs code after the grader",
    "faulthandler": "it reads the grader's stack",
    "trace": "it traces the grader",
    "tracemalloc": "it traces the grader",
    "pdb": "it stops the grader",
    "bdb": "it traces the grader",
    "pytest": "graded code does not need the test runner",
    "unittest": "graded code does not need the test runner (unittest.mock patches)",
    "conftest": "it is the graders' own file",
}
_FORBIDDEN_GPUARR = {
    "testing": "gpuarr.testing holds the graders' helpers",
    "pytest_plugin": "gpuarr.pytest_plugin is the graders' plugin",
    "grade": "gpuarr.grade is the grading run itself",
}
# The only attributes of sys that graded code may use.
_SYS_ALLOWED = {"stdout", "stderr", "float_info", "int_info", "maxsize", "version",
                "version_info", "platform", "byteorder", "getsizeof", "float_repr_style"}
# Attributes of os that run programs, read raw files or memory, or end the process.
_OS_FORBIDDEN = {"system", "popen", "fork", "forkpty", "kill", "killpg", "abort",
                 "execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp",
                 "execvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv",
                 "spawnve", "spawnvp", "spawnvpe", "posix_spawn", "posix_spawnp",
                 "open", "read", "pread", "readv", "write", "pwrite", "dup", "dup2",
                 "fdopen", "_exit", "putenv", "unsetenv", "register_at_fork"}
# Attributes (without a leading "_") that lead to stack frames and compiled code.
_FRAME_ATTRIBUTES = {"f_back", "f_locals", "f_globals", "f_builtins", "f_code",
                     "f_trace", "f_lineno", "f_lasti", "tb_frame", "tb_next", "gi_frame",
                     "cr_frame", "ag_frame", "gi_code", "cr_code", "ag_code", "co_code",
                     "co_consts", "co_names", "co_varnames", "co_filename"}
# Built-in functions graded code may not call, and why.
_FORBIDDEN_CALLS = {
    "eval": "it runs code that this check cannot read",
    "exec": "it runs code that this check cannot read",
    "compile": "it compiles code that this check cannot read",
    "globals": "it reaches module variables by name",
    "locals": "it reaches variables by name",
    "vars": "it reaches an object's variables by name",
    "setattr": "it changes attributes by name",
    "delattr": "it deletes attributes by name",
    "breakpoint": "it stops the grader",
    "memoryview": "it reads raw memory",
}
_ALLOWED_DUNDERS = {"__name__", "__doc__", "__main__", "__init__", "__file__"}


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


def check_source(source, filename="<graded>"):
    """check_source(source, filename='<graded>')

    The problems that forbid grading ``source`` (a module's text), in line order; an
    empty list when it may be imported. A file that does not parse is one problem."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        return [Problem(e.lineno or 1, (e.offset or 1) - 1, (e.text or "").strip(),
                        f"it does not parse: {e.msg}")]
    lines = source.splitlines()
    checker = _Checker(lines)
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
    def __init__(self, lines):
        self.lines = lines
        self.problems = []
        self.modules = {}  # local name -> dotted module path it stands for

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
        why = _FORBIDDEN_MODULES.get(parts[0])
        if why:
            self.problem(node, f"imports {name}, which graded code may not use: {why}")
        if parts[0].startswith("test_"):
            self.problem(node, f"imports {name}: it is a grader")
        if parts[0] == "gpuarr" and len(parts) > 1 and parts[1] in _FORBIDDEN_GPUARR:
            self.problem(node, f"imports {name}: {_FORBIDDEN_GPUARR[parts[1]]}")

    def visit_Import(self, node):
        for a in node.names:
            self.check_module_name(node, a.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.level:
            self.problem(node, "a relative import: graded code imports only installed "
                               "modules")
        elif node.module:
            self.check_module_name(node, node.module)
            for a in node.names:
                if a.name == "*":
                    self.problem(node, f"`from {node.module} import *` brings in names "
                                       "this check cannot see; import the names you use")
                else:
                    self.check_module_name(node, f"{node.module}.{a.name}")
        self.generic_visit(node)

    # -- names and attributes -----------------------------------------------------------
    def visit_Name(self, node):
        if node.id.startswith("__") and node.id not in _ALLOWED_DUNDERS:
            self.problem(node, f"uses {node.id}, which reaches Python's internals")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        a = node.attr
        owner = self.module_of(node.value)
        if a.startswith("_") and a not in _ALLOWED_DUNDERS:
            self.problem(node, f"uses the private name .{a} (graded code may not use "
                               "names that begin with _: they reach gpuarr's internals)")
        elif a in _FRAME_ATTRIBUTES:
            self.problem(node, f"uses .{a}, which reaches stack frames or compiled code")
        elif owner == "sys" and a not in _SYS_ALLOWED:
            self.problem(node, f"uses sys.{a}: graded code may use only "
                               f"{', '.join(sorted(_SYS_ALLOWED))} of sys")
        elif owner == "os" and a in _OS_FORBIDDEN:
            self.problem(node, f"uses os.{a}, which runs programs, reads raw files or "
                               "ends the process")
        elif owner and owner.split(".")[0] == "gpuarr" and a in _FORBIDDEN_GPUARR:
            self.problem(node, f"uses gpuarr.{a}: {_FORBIDDEN_GPUARR[a]}")
        self.generic_visit(node)

    # -- calls --------------------------------------------------------------------------
    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in _FORBIDDEN_CALLS:
                self.problem(node, f"calls {f.id}(), which graded code may not use: "
                                   f"{_FORBIDDEN_CALLS[f.id]}")
            elif f.id in ("getattr", "hasattr") and len(node.args) >= 2:
                name = node.args[1]
                if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                    self.problem(node, f"calls {f.id}() with a computed name: write the "
                                       "attribute itself (x.name)")
            elif f.id == "open" and node.args:
                path = node.args[0]
                if isinstance(path, ast.Constant) and isinstance(path.value, str) and (
                        path.value.startswith(("/proc", "/dev", "/sys"))):
                    self.problem(node, "opens a file of the system (/proc, /dev, /sys), "
                                       "which reads the memory of processes")
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
