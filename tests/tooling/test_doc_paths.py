"""Every source path that README.md, docs/*.md and bench/README.md name exists, so a
reader who follows one finds the file (issue 41, item 6).

What counts as a path: a token starting with one of the repository's folders (csrc/,
tests/, tools/, python/gpuarr/, bench/, notebooks/, .ci/, docs/, cmake/), and a bare C
or CUDA file name of the project's own prefixes (ga_array.c, k_reduce.cu, py_axes.c),
which must exist somewhere under csrc/. A line number or a test id after the path
(`ga_array.h:137`, `test_x.py::test_y`) is not part of it; `{a,b}` names each of a and
b; a glob (`csrc/cuda/kernels/k_*.cu`, or `<op>` standing for a name to fill in) must
match at least one file. Nothing is skipped: a stale path fails its document's test."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ["README.md", "bench/README.md",
        *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]

PATH = re.compile(r"(?<![\w./-])((?:csrc|tests|tools|python/gpuarr|bench|notebooks|\.ci|docs|"
                  r"cmake)/[\w./*{},<>-]*)")
BARE = re.compile(r"(?<![\w./<*-])((?:ga|k|py)_[\w*]+\.(?:c|h|cu|cuh|cpp))\b")
# Where a tool writes its results: the docs say where they land, not a source file.
OUTPUTS = ("bench/results/",)  # tools/gpu_run.py --collect makes bench/results/<date>-<gpu>/


def _expand(token):
    """`a{b,c/{d,e}}f` -> abf, ac/df, ac/ef (nested braces, commas at the top level)."""
    start = token.find("{")
    if start < 0:
        return [token]
    depth, parts, last = 0, [], start + 1
    for i in range(start, len(token)):
        if token[i] == "{":
            depth += 1
        elif token[i] == "}":
            depth -= 1
            if depth == 0:
                parts.append(token[last:i])
                head, tail = token[:start], token[i + 1:]
                return [x for p in parts for x in _expand(head + p + tail)]
        elif token[i] == "," and depth == 1:
            parts.append(token[last:i])
            last = i + 1
    return [token]  # an unclosed brace: checked as written, so it fails


def _exists(path, root):
    """Whether a repository path (or glob) names something in `root`."""
    if path.startswith(OUTPUTS):
        return True
    glob = re.sub(r"<[^<>/]*>", "*", path)
    if "*" in glob:
        return any(root.glob(glob.rstrip("/")))
    p = root / path
    return p.is_dir() if path.endswith("/") else p.exists()


def _bare_exists(name, root):
    return any((root / "csrc").rglob(re.sub(r"<[^<>/]*>", "*", name)))


def named_paths(text):
    """(line number, token) for every path and bare source file name in a markdown text."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in PATH.finditer(line):
            found.append((n, m.group(1).rstrip(".,;")))
        for m in BARE.finditer(line):
            found.append((n, m.group(1)))
    return found


def stale_paths(text, root=ROOT):
    """The named paths of `text` that `root` lacks, as 'line N: token' strings."""
    stale = []
    for n, token in named_paths(text):
        bare = "/" not in token
        for path in _expand(token):
            if not (_bare_exists(path, root) if bare else _exists(path, root)):
                stale.append(f"line {n}: {path}" + (" (under csrc/)" if bare else ""))
    return stale


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_a_document_names_exists(doc):
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert named_paths(text), f"{doc} names no path: is the pattern still right?"
    stale = stale_paths(text)
    assert not stale, f"{doc} names paths that do not exist:\n" + "\n".join(stale)


def test_the_check_catches_a_missing_file(tmp_path):
    """The check fails on purpose on a made-up document, so it cannot pass vacuously."""
    (tmp_path / "csrc" / "core").mkdir(parents=True)
    (tmp_path / "csrc" / "core" / "ga_error.c").write_text("/* ga_error.c: errors. */\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "dev-build.sh").write_text("")
    doc = tmp_path / "README.md"
    doc.write_text(
        "Errors live in `csrc/core/ga_error.c:12` (ga_error.c), built by tools/dev-build.sh.\n"
        "The old `csrc/ga_error.c`, ga_gone.h and csrc/{core,sim}/ are gone;\n"
        "csrc/cuda/kernels/k_*.cu matches nothing here, csrc/core/ga_<name>.c does;\n"
        "bench/results/<date>/ is an output, not a source.\n")
    assert stale_paths(doc.read_text(), tmp_path) == [
        "line 2: csrc/ga_error.c", "line 2: csrc/sim/", "line 2: ga_gone.h (under csrc/)",
        "line 3: csrc/cuda/kernels/k_*.cu"]
