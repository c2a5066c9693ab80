"""The notebooks' stored outputs: refresh them, and the rule that compares them with a
fresh run.

    python tools/notebook_outputs.py                           # every notebooks/*.ipynb
    python tools/notebook_outputs.py notebooks/01_gpus.ipynb   # one

notebooks/*.ipynb are stored with their outputs, as a student first sees them: run as
Jupyter started plainly on a machine without a GPU (no GPUARR_SIMULATE_GPUS or
GPUARR_CUDA_EMULATE, so each notebook's first cell simulates two GPUs). This tool runs
each notebook that way through a real kernel (nbclient) and stores what it printed,
scrubbed; on a machine where the first cell finds a GPU it refuses (the outputs would
be that machine's). It imports the gpuarr that `python` here imports (the kernel gets
its directory on PYTHONPATH, as the test does), so after tools/dev-build.sh:
`PYTHONPATH=python python tools/notebook_outputs.py`.

tests/textbook/test_notebooks.py executes each notebook that way anyway (its lessons
tests, in the suite run without GPUs) and, in that same execution, compares the stored
outputs with the fresh ones (`differences`): no notebook runs twice for it. The rule:

- **Text is compared, images are not.** Per code cell, the text of its outputs in
  order (streams joined, since a kernel splits them where the flushes fall; results and
  displays by their text/plain; errors by name and message). A plot's PNG changes with
  every timing it draws and with the matplotlib version, so it is stored, not compared.
- **Scrubbed when stored** (`scrub`), and the fresh text too before comparing: what
  describes the machine that ran it, not the lesson. Absolute paths become `<path>`;
  the interpreter line and the build block of `gpuarr.info()` (Python version, compiler,
  CUDA toolkit, BLAS library, CPU threads), and the host's memory size, become
  placeholders.
- **Masked when compared** (`mask`), on both sides: timings (a number with ns, us, ms
  or s, measured or modeled), speed-ups, memory sizes with a binary unit (B, KiB, MiB,
  GiB: memory readings), and 0x addresses. The transfer ledger's exact counts
  ("400 bytes", "2 copies") are compared: they are the lessons.
- **Decimal numbers within 1% are equal** (`_close`): a seeded training run's loss
  and accuracy repeat exactly on one machine, but another CPU (another BLAS kernel,
  other SIMD widths in the reductions) may round its sums otherwise and move a late
  digit, or one test sample across the line. Integers, and the text around the numbers,
  must match exactly.
- **Lines in any order**: a cell whose lines match once both are sorted matches (the
  profiler lists events that ran at the same time in the order they finished).
- **Cell tags** (Jupyter's cell metadata "tags") for the rest: `random-values` masks
  every decimal number in that cell's output (values drawn without a seed; shapes,
  devices and integers still compared); `nbval-ignore-output` (nbval's tag) leaves the
  cell's output out of the comparison (a result that follows a measured time, such as
  which device was faster).

Not nbval: nbval executes the notebooks itself, and CI already executes each one for
its lessons; this compares inside that execution.
"""
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIMULATES = "No GPU found: gpuarr simulates 2 GPUs"
RANDOM_TAG, IGNORE_TAG = "random-values", "nbval-ignore-output"

# --- scrubbing: the machine that ran it ------------------------------------------------

_SCRUBS = [
    # absolute paths (POSIX, home-relative, Windows drive); a path names the machine's
    # directories and often its user
    (re.compile(r"(?<![\w.>)-])(?:~|[A-Za-z]:)?[/\\](?:[\w.+@-]+[/\\])+[\w.+@-]*"), "<path>"),
    # gpuarr.info(): the interpreter that ran it, and the build block under "build:"
    (re.compile(r"^  Python [0-9][^\n]*\n", re.M), ""),
    (re.compile(r"^build:\n(?:  [^\n]*\n)+", re.M),
     "build: (this machine's build: run gpuarr.info() to see yours)\n"),
    # the host's memory size, as gpuarr.info() lists the CPU device
    (re.compile(r"(host CPU) +\([0-9.]+ [KMGT]iB\)"), r"\1"),
]


def scrub(text):
    """`text` without the machine's paths and details (idempotent)."""
    for pattern, replacement in _SCRUBS:
        text = pattern.sub(replacement, text)
    return text


# --- masking: what changes from run to run ---------------------------------------------

_MASKS = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x<address>"),
    (re.compile(r"[0-9]+(?:\.[0-9]+)? ?(?:ns|us|µs|ms|s)\b"), "<time>"),
    # a profile's rows: "start -> end us", the start without a unit of its own
    (re.compile(r"[0-9]+(?:\.[0-9]+)? *-> *<time>"), "<time> -> <time>"),
    (re.compile(r"(speed-up[^0-9\n]*)[0-9]+(?:\.[0-9]+)?"), r"\1<ratio>"),
    (re.compile(r"[0-9]+(?:\.[0-9]+)? ?(?:B|KiB|MiB|GiB|TiB)\b"), "<memory>"),
]
# a decimal number, with the padding NumPy puts around it to align columns
_DECIMAL = re.compile(r" *-?[0-9]+\.[0-9]*(?:e[+-]?[0-9]+)? *")
# column padding that depends on the masked values' widths
_PADDING = re.compile(r" {2,}")


def mask(text, tags=()):
    """`text` with what varies from run to run replaced by placeholders."""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    if RANDOM_TAG in tags:
        text = _DECIMAL.sub("<value>", text)
    return _PADDING.sub(" ", text)


# --- a notebook's text, cell by cell ---------------------------------------------------

def _output_text(output):
    kind = output.get("output_type")
    if kind == "stream":
        return "".join(output.get("text", ""))
    if kind == "error":
        return f"{output.get('ename')}: {output.get('evalue')}\n"
    return "".join(output.get("data", {}).get("text/plain", "")) + "\n"


def cell_texts(nb):
    """(source, tags, text) of each code cell: the text of its outputs in order."""
    return [(c.source, c.get("metadata", {}).get("tags", []),
             "".join(_output_text(o) for o in c.get("outputs", [])))
            for c in nb.cells if c.cell_type == "code"]


_NUMBER = re.compile(r"-?[0-9]+\.[0-9]*(?:e[+-]?[0-9]+)?")


def _close(a, b):
    """Do texts a and b differ only in decimal numbers within 1% of each other?"""
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        x, y = float(x), float(y)
        if abs(x - y) > 0.01 * max(abs(x), abs(y)) + 1e-12:
            return False
    return True


def _sorted_lines(a, b):
    """a and b with their lines in sorted order: a profile's rows of events that ran at
    the same time come in the order they finished, which changes from run to run."""
    return "\n".join(sorted(a.splitlines())), "\n".join(sorted(b.splitlines()))


def differences(stored, fresh):
    """How the stored notebook's outputs differ from a fresh run's, by the rule above:
    one line per cell that differs (empty when they match)."""
    found = []
    old, new = cell_texts(stored), cell_texts(fresh)
    if [s for s, _, _ in old] != [s for s, _, _ in new]:
        return ["the fresh run is of other code than the stored notebook's"]
    for i, ((source, tags, a), (_, _, b)) in enumerate(zip(old, new)):
        if IGNORE_TAG in tags:
            continue
        a, b = mask(scrub(a), tags), mask(scrub(b), tags)
        if a != b and not _close(a, b) and not _close(*_sorted_lines(a, b)):
            first = source.strip().splitlines()[0] if source.strip() else ""
            lines = [(x, y) for x, y in zip(a.splitlines() + [""] * 99,
                                            b.splitlines() + [""] * 99) if x != y]
            stored_line, fresh_line = lines[0] if lines else ("", "")
            found.append(f"code cell {i} ({first!r}): stored {stored_line!r}, "
                         f"fresh {fresh_line!r}")
    return found


# --- storing ---------------------------------------------------------------------------

def _scrubbed_output(output):
    output = dict(output)
    if output.get("output_type") == "stream":
        output["text"] = scrub("".join(output.get("text", "")))
    elif "data" in output:
        data = dict(output["data"])
        if "text/plain" in data:
            data["text/plain"] = scrub("".join(data["text/plain"]))
        output["data"] = data
    return output


def store(stored, fresh):
    """`stored` (the notebook as read) with the outputs of `fresh` (its executed copy),
    scrubbed; its own metadata kept (an execution adds the kernel's version and
    timings, which describe the machine)."""
    import nbformat
    code = [c for c in fresh.cells if c.cell_type == "code"]
    for i, cell in enumerate([c for c in stored.cells if c.cell_type == "code"]):
        cell.outputs = [nbformat.from_dict(_scrubbed_output(o)) for o in code[i].outputs]
        cell.execution_count = i + 1
        cell.metadata.pop("execution", None)
    return stored


def execute(nb, env=None):
    """Run `nb` in place through a python3 kernel in a fresh working directory, with
    `env` as the kernel's environment (default: this process's)."""
    import nbclient
    with tempfile.TemporaryDirectory() as tmp:
        client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                         record_timing=False, coalesce_streams=True,
                                         resources={"metadata": {"path": tmp}})
        # execute()'s keywords go to the kernel manager's start: env= replaces the
        # environment the kernel inherits
        client.execute(**({} if env is None else {"env": env}))
    return nb


def student_env():
    """The environment of a Jupyter started plainly: no gpuarr device variable, and
    this gpuarr on PYTHONPATH."""
    import gpuarr
    env = {k: v for k, v in os.environ.items()
           if k not in ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE")}
    here = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    return env


def refresh(path):
    import nbformat
    stored = nbformat.read(path, as_version=4)
    fresh = execute(nbformat.read(path, as_version=4), env=student_env())
    first = cell_texts(fresh)[0][2]
    if SIMULATES not in first:
        raise SystemExit(f"{path}: the first cell found a GPU here, so its outputs would "
                         f"be this machine's; refresh on a machine without a GPU "
                         f"(first cell printed: {first[:200]!r})")
    nbformat.write(store(stored, fresh), path)
    print(f"stored: {os.path.relpath(path, ROOT)}")


def main(paths):
    if not paths:
        notebooks = os.path.join(ROOT, "notebooks")
        paths = sorted(os.path.join(notebooks, p) for p in os.listdir(notebooks)
                       if p.endswith(".ipynb"))
    for p in paths:
        refresh(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
