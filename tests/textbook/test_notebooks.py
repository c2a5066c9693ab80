"""Every notebook in notebooks/ executes without an error, with whatever GPUs this
process has (CI runs the suite with 0 GPUs and with GPUARR_SIMULATE_GPUS=2; the kernel
inherits the environment). Without a GPU, the notebooks also run as a student opens
them (Jupyter started without the variable) and with it, and teach the same lessons:
the key outputs are checked, not only that cells run. The notebooks are stored with
their outputs; the run as a student opens them also checks that the stored outputs
match the fresh ones where they are deterministic (tools/notebook_outputs.py holds the
rule and refreshes them)."""
import os
import pathlib
import re
import sys

import pytest

import gpuarr

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
sys.path.insert(0, str(ROOT / "tools"))
import notebook_outputs  # noqa: E402  (tools/ is not a package)


def execute(path, tmp_path, monkeypatch, executed=None):
    """Run the notebook; return its code cells' text outputs, one string per cell (and
    the executed notebook in the list `executed`, when given)."""
    # the kernel must import the same gpuarr as this test (installed, or a source tree)
    here = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [here, os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError with the cell and traceback
    if executed is not None:
        executed.append(nb)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    texts = []
    for c in nb.cells:
        if c.cell_type == "code":
            texts.append("".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")
                                 for o in c.get("outputs", [])))
    return texts


def check_lessons(name, lessons, tmp_path, monkeypatch, simulate=None):
    """Run notebooks/`name` as a student opens it (no emulated CUDA; GPUARR_SIMULATE_GPUS
    = `simulate`, or unset) and check each (line of a code cell, regular expression)
    of `lessons` against that cell's output. Run so (no variable), the stored outputs
    are compared with this run's too. Returns (texts, sources) per code cell."""
    monkeypatch.delenv("GPUARR_CUDA_EMULATE", raising=False)
    if simulate is None:
        monkeypatch.delenv("GPUARR_SIMULATE_GPUS", raising=False)
    else:
        monkeypatch.setenv("GPUARR_SIMULATE_GPUS", simulate)
    path = next(p for p in NOTEBOOKS if p.name == name)
    executed = []
    texts = execute(path, tmp_path, monkeypatch, executed)
    stored = nbformat.read(path, as_version=4)
    sources = [c.source for c in stored.cells if c.cell_type == "code"]
    if simulate is None:
        differ = notebook_outputs.differences(stored, executed[0])
        assert not differ, (
            f"{name}: the stored outputs differ from this run's (tools/notebook_outputs.py "
            f"says what is compared; run it to store fresh outputs, or tag a cell whose "
            f"output cannot repeat):\n" + "\n".join(differ))
    for line, expected in lessons:
        assert re.search(expected, cell_output(texts, sources, line)), \
            (line, expected, cell_output(texts, sources, line))
    return texts, sources


def cell_output(texts, sources, line):
    """The output of the code cell that holds `line`."""
    return texts[next(i for i, s in enumerate(sources) if line in s)]


# The lessons are checked once, in the suite run without GPUs: each test sets up the
# GPUs it needs.
lessons_once = pytest.mark.skipif(
    gpuarr._core._gpu_mode()[0] != "none",
    reason="the lessons are checked once, in the suite run without GPUs (each test sets "
           "up the GPUs it needs)")
SIMULATES = "No GPU found: gpuarr simulates 2 GPUs"


# The notebooks that a lessons test below runs as a student opens them (no variable set):
# in the suite run without GPUs that run is this test's, cell for cell, with the outputs
# checked as well, so this test leaves them to it there (each execution starts a kernel
# and takes 10-40 s; CI ran them twice in that stage).
RUN_PLAINLY_BY_LESSONS = {"01_gpus.ipynb", "02_exercises.ipynb", "03_async_parallel.ipynb",
                          "04_multi_gpu_training.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path, monkeypatch):
    if path.name in RUN_PLAINLY_BY_LESSONS and gpuarr._core._gpu_mode()[0] == "none":
        pytest.skip("checked once, in the suite run without GPUs, by its lessons test "
                    "(the same execution, outputs checked too)")
    execute(path, tmp_path, monkeypatch)


# Cell text (a line of the code) -> a regular expression its output must match, on
# two GPUs.
LESSONS_01 = [
    ("ga.info()", r"devices \(2 GPUs"),
    ("X + Y", r"DeviceMismatchError:"),
    # queued is not done: the host's launches and the device's ops, on two rows
    ("queued is not done ...", r"the device finished the work at"),
    ("queued is not done ...", r"    host launch multiply"),
    ("queued is not done ...", r" compute     op sqrt"),
    ("one device-to-host copy per step", r"device->host: 100 copies, 400 bytes"),
    ("one copy at the end", r"device->host: 1 copy, 400 bytes"),
    ("np.asarray(X)", r"TypeError:"),
    # the model's 2 parameters once, 2 epochs of 10 batches of (X, y); the 20 losses once
    ("def prepare_batch(self, batch)", r"host->device: 42 copies"),
    ("def prepare_batch(self, batch)", r"device->host: 1 copy, 80 bytes"),
    ("criterion.to(try_gpu())", r"DeviceMismatchError:"),
    ("criterion.to(try_gpu())", r"criterion\.cuda\(\)"),
    ("criterion.to(try_gpu())", r"\(gpu\(0\), gpu\(0\)\)"),
    # the input to gpu(0), the activation to gpu(1) and its gradient back to gpu(0)
    ("class VeryBigModule", r"host->device: 1 copy"),
    ("class VeryBigModule", r"device->device: 2 copies"),
    ("class VeryBigModule", r"\(gpu\(0\), gpu\(1\)\)"),
]


@lessons_once
@pytest.mark.parametrize("variable", [None, "2"],
                         ids=["jupyter started plainly", "GPUARR_SIMULATE_GPUS=2"])
def test_notebook_01_teaches_the_same_without_setup(variable, tmp_path, monkeypatch):
    texts, _ = check_lessons("01_gpus.ipynb", LESSONS_01, tmp_path, monkeypatch, variable)
    assert (SIMULATES in texts[0]) == (variable is None), texts[0]


# Cell text -> a regular expression its output must match, on two simulated GPUs
# (no timing is compared, except that a clock stopped before synchronize() reads
# less than half the time until the work is done: in fact about a thousandth).
LESSONS_02 = [
    ("mode = ga.device_kind", r"devices: \[cpu\(0\), gpu\(0\), gpu\(1\)\]"),
    ("mode = ga.device_kind", r"These GPUs are simulated"),
    ("def time_matmul", r"n +cpu\(0\) +gpu\(0\) +gpu\(1\)\n(.*ms\n){5}"),
    ("queued, done = [], []", r"gpu\(0\): without synchronize\(\) +[0-9.]+ ms \| "
                              r"with synchronize\(\) +[0-9.]+ ms"),
    ("Z = X.to(Y.device) + Y", r"Z lives on gpu\(0\) \| work done: cpu\(0\): nothing; "
                               r"gpu\(0\): 1 elementwise operation; gpu\(1\): nothing"),
    ("ga.save(path", r"\Acpu\(0\) +bit-for-bit: True\ngpu\(0\) +bit-for-bit: True\n"
                     r"gpu\(1\) +bit-for-bit: True\n\Z"),
    ("log_host = []", r"\.item\(\) every step: +[0-9.]+ ms, 1000 device-to-host copies"),
    ("log_host = []", r"log on the device: +[0-9.]+ ms, 1 device-to-host cop"),
    ("def two_devices", r"two devices \(gpu\(0\), gpu\(1\)\): .* speed-up [0-9.]+"),
    ("da.from_array(x", r"\(4, 1\) chunks of Array -> gpu\(0\) \(4000, 500\)\n"
                        r"column means after: True"),
    # modeled time (docs/modeled_time.md): the simulated GPUs carry a T4's model
    ("mode = ga.device_kind", r"performance model: NVIDIA T4"),
    # a tiny product is the launch and sync latencies (15 us); a big one is the GPU's
    ("def modeled_matmul", r"n +cpu\(0\) measured +gpu\(0\) modeled T4 +faster\n"
                           r" +8 +[0-9.]+ms +0\.015ms +(CPU|GPU)\n(.*\n){3}"
                           r" +512 +[0-9.]+ms +0\.048ms +GPU\n"),
    ("with ga.profile() as prof:\n    y = ((x * 2", r"gpu\(0\): the calls returned at 0\.0 us, "
                                                r"the device finished the work at [0-9.]+ us "
                                                r"\(modeled T4\)"),
    ("def item_loop", r"\.item\(\) every step: +20 steps in [0-9.]+ ms \(modeled T4\), 20 host "
                      r"waits\nlog on the device: +20 steps in [0-9.]+ ms \(modeled T4\), 1 host "
                      r"waits"),
    ("fig, axes = plt.subplots(2, 1, figsize=(10, 4))",
     r"two devices: [0-9.]+ ms \(modeled T4\)\none device: [0-9.]+ ms \(modeled T4\)\n"
     r"speed-up \(modeled T4\): 1\.9[0-9]"),
]


@lessons_once
@pytest.mark.parametrize("variable", [None, "2:T4"],
                         ids=["jupyter started plainly", "GPUARR_SIMULATE_GPUS=2:T4"])
def test_notebook_02_measures_the_same_without_setup(variable, tmp_path, monkeypatch):
    texts, sources = check_lessons("02_exercises.ipynb", LESSONS_02, tmp_path, monkeypatch,
                                   variable)
    assert (SIMULATES in texts[0]) == (variable is None), texts[0]
    out = cell_output(texts, sources, "queued, done = [], []")
    queued, done = map(float, re.findall(r"([0-9.]+) ms", out))
    assert queued < done / 2, out
    # on the modeled clock: the host returns at once, the device works on; the host's
    # .item() waits cost more than one wait at the end
    out = cell_output(texts, sources, "y = ((x * 2 + 1).exp() * x).sqrt()\n"
                                      "    ga.synchronize(device)")
    returned, finished = map(float, re.findall(r"([0-9.]+) us", out))
    assert returned < finished / 2, out
    out = cell_output(texts, sources, "def item_loop")
    item, on_device = map(float, re.findall(r"in ([0-9.]+) ms", out))
    assert item > on_device, out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_notebook_has_its_outputs_and_no_machine_details(path):
    """Stored as tools/notebook_outputs.py stores it: every code cell run, in order,
    without errors, and nothing in the outputs or metadata that describes the machine
    that ran it (paths, the interpreter's version, execution timestamps)."""
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.get("execution_count") for c in code] == list(range(1, len(code) + 1)), \
        f"{path.name} is stored without its outputs: run tools/notebook_outputs.py"
    assert "version" not in nb.metadata.get("language_info", {}), path.name
    for i, cell in enumerate(code):
        assert "execution" not in cell.metadata, (path.name, i)
        for output in cell.outputs:
            assert output.output_type != "error", (path.name, i, output)
            text = notebook_outputs._output_text(output)
            assert notebook_outputs.scrub(text) == text, (path.name, i, text)


def test_the_comparison_masks_what_varies_and_catches_what_does_not():
    """The rule of tools/notebook_outputs.py on outputs of the notebooks' own kinds."""
    def nb(*outputs, tags=()):
        cell = nbformat.v4.new_code_cell("x", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text=t) for t in outputs])
        cell.metadata["tags"] = list(tags)
        return nbformat.v4.new_notebook(cells=[cell])

    same = [("queued in 0.8 ms, done after 51.6 ms", "queued in 1.2 ms, done after 9 ms"),
            ("    host launch add  125.9 ->   127.4 us", "    host launch add  25.1 ->  7.0 us"),
            ("both at once 6 ms (speed-up 4.14 over", "both at once 9 ms (speed-up 1.02 over"),
            ("0 B / 16.0 GiB", "12 KiB / 16.0 GiB"),
            ("<Event at 0x7f3a>", "<Event at 0x55aa01>"),
            ("module /home/ana/gpuarr/_core.so\n", "module C:\\Users\\bo\\gpuarr\\_core.so\n"),
            # streams split where the kernel's flushes fell
            ("a\nb\n", ("a\n", "b\n")),
            # events that ran at the same time, listed in the order they finished
            ("host launch add 1 ms -> 2 ms\ncompute op multiply 3 ms -> 4 ms\n",
             "compute op multiply 3 ms -> 5 ms\nhost launch add 1 ms -> 2 ms\n"),
            # another CPU's rounding: a late digit, within 1%
            ("test accuracy 0.926, loss 0.21436", "test accuracy 0.923, loss 0.21437")]
    for stored, fresh in same:
        fresh = fresh if isinstance(fresh, tuple) else (fresh,)
        assert notebook_outputs.differences(nb(stored), nb(*fresh)) == [], (stored, fresh)
    differ = [("device->host: 100 copies, 400 bytes", "device->host: 99 copies, 400 bytes"),
              ("labels [0 1 2]", "labels [0 2 1]"),
              ("test accuracy 0.926", "test accuracy 0.906"),
              ("loss 0.5 after 3 epochs", "loss 0.5 after 4 epochs"),
              ("array([0.25, 0.5], device=gpu(0))", "array([0.75, 0.5], device=gpu(0))")]
    for stored, fresh in differ:
        assert notebook_outputs.differences(nb(stored), nb(fresh)), (stored, fresh)
    drawn = ("array([[0.98995197, 0.38728827],\n       [0.7400381 , 0.4590273 ]], "
             "device=gpu(1))")
    again = ("array([[0.362051  , 0.14581025],\n       [0.91552234, 0.5       ]], "
             "device=gpu(1))")
    assert notebook_outputs.differences(nb(drawn, tags=["random-values"]),
                                        nb(again, tags=["random-values"])) == []
    assert notebook_outputs.differences(nb(drawn, tags=["random-values"]),
                                        nb(again.replace("gpu(1)", "gpu(0)"),
                                           tags=["random-values"]))
    assert notebook_outputs.differences(nb("GPU", tags=["nbval-ignore-output"]),
                                        nb("CPU", tags=["nbval-ignore-output"])) == []


# Cell text -> a regular expression its output must match, on two simulated GPUs.
LESSONS_04 = [
    ("def split_batch", r"chunk \(3, 64\) on gpu\(0\) labels \[0 1 2\]\n"
                        r"chunk \(3, 64\) on gpu\(1\) labels \[3 4 5\]\n"
                        r".*device->device: 2 copies, 792 bytes; waits: 0"),
    ("def allreduce", r"after:  \[\[\[3\.0, 3\.0\]\], \[\[3\.0, 3\.0\]\]\]\n"
                      r".*device->host: 0 copies, 0 bytes; device->device: 2 copies, "
                      r"16 bytes; waits: 0"),
    ("def train_batch", r"from scratch on 1 device\(s\): [0-9]+ ms per epoch, test accuracy "
                        r"(0\.9[0-9]+)\nfrom scratch on 2 device\(s\): [0-9]+ ms per epoch, "
                        r"test accuracy \1\n"),
    ("def train_concise", r"DataParallel on 1 device\(s\): [0-9]+ ms per epoch, test accuracy "
                          r"(0\.9[0-9]+)\n  waits for a device during training: 0\n"
                          r"DataParallel on 2 device\(s\): [0-9]+ ms per epoch, test "
                          r"accuracy \1\n  waits for a device during training: 0\n"),
]


@lessons_once
def test_notebook_04_trains_the_same_on_one_and_two_devices(tmp_path, monkeypatch):
    texts, _ = check_lessons("04_multi_gpu_training.ipynb", LESSONS_04, tmp_path,
                             monkeypatch)
    assert SIMULATES in texts[0], texts[0]


LESSONS_03 = [
    ("queued = time.perf_counter()", r"gpu\(0\): calls returned after [0-9.]+ ms, the work "
                                     r"was done after [0-9.]+ ms"),
    # 50 products of 256 x 256 on the T4 model: 50 x (5 us + 2 * 256**3 / 8.1e12 s)
    ("with ga.profile() as prof:\n    for _ in range(50)",
     r"gpu\(0\): the calls returned at 0\.0 us, the device finished at 457\.1 us "
     r"\(modeled T4\)"),
    ("read once at the end", r"read once at the end: [0-9.]+\nwaits: 1\n"
                             r"read every step: +[0-9.]+\nwaits: 20\n"),
    ("def run(x, steps=8)", r"gpu\(0\) alone [0-9]+ ms, gpu\(1\) alone [0-9]+ ms, both at "
                            r"once [0-9]+ ms \(speed-up [0-9.]+ over one after the other\)"),
    ("def compute_then_copy", r"pinned: True \| an array on gpu\(0\) False\n8 products and 8 "
                              r"copies to the host: queued in [0-9.]+ ms with 0 waits, done "
                              r"after [0-9]+ ms;.* device->host: 8 copies.*waits: 2>\n"
                              r"each result on the host, pinned: True"),
    # the timeline: the copy queue as a track of its own beside the compute queue
    ("copied out as soon as it is queued",
     r"gpu\(0\) compute: 8 products \| gpu\(0\) copy: 8 copies gpu\(0\) -> cpu\(0\), 2 MiB\n"
     r"every copy starts after the product it reads: True\n"),
]


@lessons_once
def test_notebook_03_shows_queues_waits_and_two_devices(tmp_path, monkeypatch):
    texts, sources = check_lessons("03_async_parallel.ipynb", LESSONS_03, tmp_path,
                                   monkeypatch)
    out = cell_output(texts, sources, "queued = time.perf_counter()")
    queued, done = map(float, re.findall(r"([0-9.]+) ms", out))
    assert queued < done / 2, out
    # the same total both ways: a float32 sum on the device, a float64 one of float32
    # reads on the host (they may differ in the last printed digit: 1283.401, 1283.4)
    out = cell_output(texts, sources, "read once at the end")
    once, every = map(float, re.findall(r"(?:end|step): +([0-9.]+)", out))
    assert abs(once - every) <= 1e-5 * abs(every), out
