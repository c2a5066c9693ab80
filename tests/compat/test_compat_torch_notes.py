"""The PyTorch notes' device cells: every code block of "CUDA semantics"
(docs.pytorch.org/docs/stable/notes/cuda.html; pytorch/pytorch
docs/source/notes/cuda.rst) that teaches the chapter's lesson, run as printed with only
`import torch` changed to `import gpuarr.compat.torch as torch`, on 0, 1 and 2 GPUs of
every kind; then the habits whose sections print no code (pinned memory and
`non_blocking=True`, the memory queries, `CUDA_VISIBLE_DEVICES`, `set_device`), in the
tests' own cells. docs/porting-cells.md lists every block of the page and its test,
including the blocks outside the chapter (TF32, streams, CUDA graphs, ...)."""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpuarr
from compat_cells import Notebook, needs_two_gpus

IMPORTS = """
import gpuarr.compat.torch as torch
from gpuarr.compat.torch import nn
"""
# The recipe every tutorial opens with: one device for the whole script.
CHOOSE = """
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
print('Using device:', device)
if device.type == 'cuda':
    print(torch.cuda.get_device_name(0))
    print('Allocated:', round(torch.cuda.memory_allocated(0) / 1024**3, 1), 'GB')
    print('Reserved: ', round(torch.cuda.memory_reserved(0) / 1024**3, 1), 'GB')
"""


# The notes' code blocks as printed, numbered in page order (N1-N8 in
# docs/porting-cells.md). N1, the "CUDA semantics" example: it names a third GPU (cuda2).
CUDA_SEMANTICS = """
cuda = torch.device('cuda')     # Default CUDA device
cuda0 = torch.device('cuda:0')
cuda2 = torch.device('cuda:2')  # GPU 2 (these are 0-indexed)

x = torch.tensor([1., 2.], device=cuda0)
# x.device is device(type='cuda', index=0)
y = torch.tensor([1., 2.]).cuda()
# y.device is device(type='cuda', index=0)

with torch.cuda.device(1):
    # allocates a tensor on GPU 1
    a = torch.tensor([1., 2.], device=cuda)

    # transfers a tensor from CPU to GPU 1
    b = torch.tensor([1., 2.]).cuda()
    # a.device and b.device are device(type='cuda', index=1)

    # You can also use ``Tensor.to`` to transfer a tensor:
    b2 = torch.tensor([1., 2.]).to(device=cuda)
    # b.device and b2.device are device(type='cuda', index=1)

    c = a + b
    # c.device is device(type='cuda', index=1)

    z = x + y
    # z.device is device(type='cuda', index=0)

    # even within a context, you can specify the device
    # (or give a GPU index to the .cuda call)
    d = torch.randn(2, device=cuda2)
    e = torch.randn(2).to(cuda2)
    f = torch.randn(2).cuda(cuda2)
    # d.device, e.device, and f.device are all device(type='cuda', index=2)
"""
WHERE = "print([t.device.index for t in (x, y, a, b, b2, c, z, d, e, f)])"
# N2, "Asynchronous execution": timing needs synchronize (or events).
N2_TIMING = """
start_event = torch.cuda.Event(enable_timing=True)
end_event = torch.cuda.Event(enable_timing=True)
start_event.record()

# Run some things here

end_event.record()
torch.cuda.synchronize()  # Wait for the events to be recorded!
elapsed_time_ms = start_event.elapsed_time(end_event)
"""
# N3-N8, "Best practices: device-agnostic code". N3 carries its own import line.
N3_ARGPARSE = """
import argparse
import gpuarr.compat.torch as torch

parser = argparse.ArgumentParser(description='PyTorch Example')
parser.add_argument('--disable-cuda', action='store_true',
                    help='Disable CUDA')
args = parser.parse_args()
args.device = None
if not args.disable_cuda and torch.cuda.is_available():
    args.device = torch.device('cuda')
else:
    args.device = torch.device('cpu')
"""
N4_ARGS_DEVICE = """
x = torch.empty((8, 42), device=args.device)
net = Network().to(device=args.device)
"""
N5_LOADER = """
cuda0 = torch.device('cuda:0')  # CUDA GPU 0
for i, x in enumerate(train_loader):
    x = x.to(cuda0)
"""
N6_CONTEXT = """
print("Outside device is 0")  # On device 0 (default in most scenarios)
with torch.cuda.device(1):
    print("Inside device is 1")  # On device 1
print("Outside device is still 0")  # On device 0
"""
# N7 as printed, less the output lines the page shows indented under each print()
# (not Python); NOTES_N7_OUT is what they show, compared below.
N7_NEW = """
cuda = torch.device('cuda')
x_cpu = torch.empty(2)
x_gpu = torch.empty(2, device=cuda)
x_cpu_long = torch.empty(2, dtype=torch.int64)

y_cpu = x_cpu.new_full([3, 2], fill_value=0.3)
print(y_cpu)

y_gpu = x_gpu.new_full([3, 2], fill_value=-5)
print(y_gpu)

y_cpu_long = x_cpu_long.new_tensor([[1, 2, 3]])
print(y_cpu_long)
"""
NOTES_N7_OUT = [(np.full((3, 2), 0.3), "cpu"), (np.full((3, 2), -5.0), "cuda:0"),
                (np.array([[1, 2, 3]]), "cpu")]
N8_LIKE = """
x_cpu = torch.empty(2, 3)
x_gpu = torch.empty(2, 3)

y_cpu = torch.ones_like(x_cpu)
y_gpu = torch.zeros_like(x_gpu)
"""
# The reader's model that N4 names (the notes leave `Network` to the reader).
READERS_NETWORK = """
class Network(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(42, 2)

    def forward(self, x):
        return self.fc(x)
"""
# The first name each block outside the chapter meets (TF32 and reduced-precision
# flags, streams, the pluggable allocator, CUDA graphs, NCCL): the shim's error.
OUTSIDE = ("backends", "cuda.Stream", "cuda.stream", "cuda.current_stream",
           "cuda.default_stream", "cuda.memory", "cuda.CUDAGraph", "cuda.graph",
           "cuda.make_graphed_callables", "nn.Dropout", "optim", "distributed")
NO_GPU = r"gpu\(0\) does not exist|invalid device ordinal 0"


def with_pythonpath():
    """The environment of a fresh Python that imports this gpuarr."""
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(gpuarr.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    return env


def needs_a_gpu():
    if gpuarr.num_gpus() == 0:
        pytest.skip("needs a GPU (set GPUARR_SIMULATE_GPUS=2 to simulate two)")


@pytest.fixture
def nb():
    nb = Notebook(IMPORTS)
    nb.run(CHOOSE)
    return nb


def test_choosing_the_device_once():
    _, printed = Notebook(IMPORTS).run(CHOOSE)
    if gpuarr.num_gpus() == 0:
        assert printed == "Using device: cpu\n"
    else:
        name = f"{gpuarr.device_kind(gpuarr.gpu(0))} gpu(0)"
        assert printed.startswith(f"Using device: cuda\n{name}\nAllocated: "), printed
        assert printed.endswith(" GB\n") and "Reserved:  " in printed


def test_a_device_is_torchs_and_gpuarrs(nb):
    out, _ = nb.run("d = torch.device('cuda', 1)\nd.type, d.index, str(d), repr(d)")
    assert out == ("cuda", 1, "cuda:1", "gpu(1)")
    assert nb.run("torch.device('cuda:1')")[0] == gpuarr.gpu(1)
    assert nb.run("torch.device('cpu').type, torch.device('cpu').index")[0] == ("cpu", None)
    # a bare 'cuda' is "the current GPU", never equal to an indexed one (as PyTorch)
    assert nb.run("torch.device('cuda') == torch.device('cuda:0')")[0] is False
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        nb.run("torch.device('tpu')")


def test_the_cuda_semantics_cell(nb):
    """The notes' walk through the current device: `cuda` is made before the block
    and means GPU 1 inside it; an explicit index wins over the block."""
    needs_two_gpus()
    out, _ = nb.run("""
cuda = torch.device('cuda')     # the current GPU, whichever it is when data is placed
cuda0 = torch.device('cuda:0')

x = torch.tensor([1., 2.], device=cuda0)
y = torch.tensor([1., 2.]).cuda()            # the current GPU: 0
with torch.cuda.device(1):
    a = torch.tensor([1., 2.], device=cuda)  # GPU 1
    b = torch.tensor([1., 2.]).cuda()        # GPU 1
    b2 = torch.tensor([1., 2.]).to(device=cuda)
    c = a + b                                # GPU 1, where its operands are
    z = x + y                                # GPU 0, where its operands are
    d = torch.randn(2, device=cuda0)         # an index names its GPU in any block
    e = torch.randn(2).to(cuda0)
    f = torch.randn(2).cuda(cuda0)
[t.device.index for t in (x, y, a, b, b2, c, z, d, e, f)]
""")
    assert out == [0, 0, 1, 1, 1, 1, 0, 0, 0, 0]
    assert nb.run("torch.cuda.current_device()")[0] == 0      # restored after the block
    np.testing.assert_array_equal(nb["c"].numpy(), [2.0, 4.0])


def test_the_cuda_semantics_cell_as_printed_on_three_gpus(nb):
    """As printed, the cell needs three GPUs: on fewer it stops at the first missing
    one saying what exists (PyTorch: invalid device ordinal); a fresh process with
    three simulated GPUs runs it through."""
    expected = "[0, 0, 1, 1, 1, 1, 0, 2, 2, 2]\n"
    if gpuarr.num_gpus() >= 3:
        nb.run(CUDA_SEMANTICS)
        assert nb.run(WHERE)[1] == expected
        return
    # it stops at the first GPU that is missing (cuda0, device(1) or cuda2)
    with pytest.raises(RuntimeError, match=r"does not exist.*The devices that exist are|"
                                           r"invalid device ordinal"):
        nb.run(CUDA_SEMANTICS)
    env = with_pythonpath()
    env.pop("GPUARR_CUDA_EMULATE", None)
    env["GPUARR_SIMULATE_GPUS"] = "3"
    out = subprocess.run([sys.executable, "-c", IMPORTS + CUDA_SEMANTICS + WHERE],
                         capture_output=True, text=True, env=env, timeout=120)
    assert (out.returncode, out.stdout) == (0, expected), out.stderr


def torch_cuda_device_1_if_any(nb):
    """`with torch.cuda.device(1):` where there is a GPU 1, else a block that does
    nothing (the current device stays 0)."""
    torch = nb["torch"]
    return torch.cuda.device(1) if gpuarr.num_gpus() >= 2 else torch.cuda.device(0)


def test_n2_timing_with_events_and_synchronize(nb):
    """The events are recorded on the current GPU; without one the block stops at
    its first record(), as PyTorch's does without CUDA."""
    if gpuarr.num_gpus() == 0:
        with pytest.raises(RuntimeError, match=NO_GPU):
            nb.run(N2_TIMING)
        return
    nb.run(N2_TIMING)
    assert nb["start_event"]._event.device == gpuarr.gpu(0)
    assert isinstance(nb["elapsed_time_ms"], float) and nb["elapsed_time_ms"] >= 0.0
    with torch_cuda_device_1_if_any(nb):
        nb.run("end_event.record()")
        where = nb["end_event"]._event.device
    assert where == gpuarr.gpu(1 if gpuarr.num_gpus() >= 2 else 0)


def test_a_timing_event_says_what_it_cannot_do(nb):
    torch = nb["torch"]
    with pytest.raises(NotImplementedError, match="interprocess=True.* outside the GPU"):
        torch.cuda.Event(interprocess=True)
    with pytest.raises(ValueError, match="streams are outside the GPU chapter; call "
                                         "record\\(\\)"):
        torch.cuda.Event().record(stream=object())
    with pytest.raises(TypeError, match="needs another torch.cuda.Event, not Event"):
        torch.cuda.Event().elapsed_time(gpuarr.Event())


def test_n3_n4_the_device_from_the_command_line(monkeypatch):
    """N3 reads sys.argv, so the test sets the script's command line (a notebook's
    own argv would make argparse exit, in PyTorch as here)."""
    gpu = gpuarr.num_gpus() > 0
    for argv, kind in ((["train.py"], "cuda" if gpu else "cpu"),
                       (["train.py", "--disable-cuda"], "cpu")):
        monkeypatch.setattr(sys, "argv", argv)
        nb = Notebook("")
        nb.run(N3_ARGPARSE)
        nb.run(READERS_NETWORK)
        nb.run(N4_ARGS_DEVICE)
        where = gpuarr.gpu(0) if kind == "cuda" else gpuarr.cpu()
        assert (nb["args"].device.type, nb["x"].device, nb["x"].shape) == \
            (kind, where, (8, 42)), argv
        assert [p.device for p in nb["net"].parameters()] == [where, where], argv


def test_n5_each_batch_to_gpu_0(nb):
    """The notes leave `train_loader` to the reader: three CPU batches here."""
    nb.run("train_loader = [torch.ones(2, 3) * i for i in range(3)]")
    if gpuarr.num_gpus() == 0:
        with pytest.raises(RuntimeError, match=NO_GPU):
            nb.run(N5_LOADER)
        return
    gpuarr.reset_transfer_stats()
    nb.run(N5_LOADER)
    assert (nb["i"], nb["x"].device) == (2, gpuarr.gpu(0))
    assert gpuarr.transfer_stats().h2d_count == 3
    np.testing.assert_array_equal(nb["x"].numpy(), np.full((2, 3), 2.0, np.float32))


def test_n6_the_current_device_inside_a_block(nb):
    needs_two_gpus()
    _, printed = nb.run(N6_CONTEXT)
    assert printed == ("Outside device is 0\nInside device is 1\n"
                       "Outside device is still 0\n")
    assert nb.run("torch.cuda.current_device()")[0] == 0


def test_n7_new_tensors_keep_the_device_and_dtype(nb):
    """The prints show the notes' values and devices in gpuarr's format (`@gpu(0)`
    where PyTorch prints `device='cuda:0'`)."""
    if gpuarr.num_gpus() == 0:
        with pytest.raises(RuntimeError, match=NO_GPU):
            nb.run(N7_NEW)
        return
    _, printed = nb.run(N7_NEW)
    assert printed == ("[[0.3 0.3]\n [0.3 0.3]\n [0.3 0.3]]\n"
                       "[[-5. -5.]\n [-5. -5.]\n [-5. -5.]] @gpu(0)\n"
                       "[[1 2 3]]\n")
    got = [nb[n] for n in ("y_cpu", "y_gpu", "y_cpu_long")]
    for t, (values, where) in zip(got, NOTES_N7_OUT):
        assert str(t.device) == where
        np.testing.assert_allclose(t.numpy(), values, rtol=1e-6)
    assert [t.dtype for t in got] == [gpuarr.float32, gpuarr.float32, gpuarr.int64]


def test_n8_ones_like_and_zeros_like(nb):
    """As printed, both inputs are made on the CPU (x_gpu names no device), so both
    results are there too, as in PyTorch."""
    nb.run(N8_LIKE)
    for name, value in (("y_cpu", 1.0), ("y_gpu", 0.0)):
        t = nb[name]
        assert (t.device, t.dtype, t.shape) == (gpuarr.cpu(), gpuarr.float32, (2, 3))
        np.testing.assert_array_equal(t.numpy(), np.full((2, 3), value, np.float32))


def test_blocks_outside_the_chapter_raise_the_shims_error(nb):
    for name in OUTSIDE:
        with pytest.raises(AttributeError, match=rf"covers the GPU chapter; "
                                                 rf"`torch\.{re.escape(name)}` is not part"):
            nb.run(f"torch.{name}")


def test_set_device_then_bare_cuda_and_a_model(nb):
    needs_two_gpus()
    out, _ = nb.run("""
torch.cuda.set_device(1)
model = nn.Sequential(nn.Linear(4, 2), nn.ReLU()).cuda()
batch = torch.randn(3, 4).cuda()
out = model(batch)
torch.cuda.set_device(0)
out.device, model[0].weight.device, out.is_cuda, out.get_device()
""")
    assert out == (gpuarr.gpu(1), gpuarr.gpu(1), True, 1)


def test_pinned_memory_and_non_blocking_copies(nb):
    needs_a_gpu()
    nb.run("""
x = torch.randn(128, 128).pin_memory()
x_dev = x.to(device, non_blocking=True)     # from pinned memory: the host goes on
y_dev = x_dev.mm(x_dev)                     # queued behind the copy on the device
""")
    gpuarr.synchronize()
    gpuarr.reset_transfer_stats()
    out, _ = nb.run("""
y = y_dev.to('cpu', non_blocking=True)      # lands in pinned memory; no wait yet
torch.cuda.synchronize()                    # now y may be read
x.is_pinned(), x_dev.device, y.is_pinned()
""")
    assert out == (True, gpuarr.gpu(0), True)
    assert gpuarr.transfer_stats().d2h_count == 1
    # the copy itself did not wait for the device (synchronize did, once)
    assert gpuarr.transfer_stats().syncs <= 1
    x = nb["x"].numpy().astype(np.float64)
    np.testing.assert_allclose(nb["y"].numpy(), x @ x, rtol=1e-4, atol=1e-4)


def test_a_non_blocking_copy_to_the_cpu_does_not_wait(nb):
    needs_a_gpu()
    nb.run("v = torch.ones(1000, device=device) * 2")
    gpuarr.synchronize()
    gpuarr.reset_transfer_stats()
    nb.run("w = v.to('cpu', non_blocking=True)")
    assert gpuarr.transfer_stats().syncs == 0
    nb.run("torch.cuda.synchronize()\nwv = w.numpy()")
    np.testing.assert_array_equal(nb["wv"], np.full(1000, 2.0, np.float32))


def test_the_memory_queries_follow_a_tensor(nb):
    needs_a_gpu()
    gpuarr.synchronize()
    out, _ = nb.run("""
torch.cuda.empty_cache()
torch.cuda.reset_peak_memory_stats()
before = torch.cuda.memory_allocated()
big = torch.empty(1024, 1024, device='cuda')       # 4 MiB of float32
during = torch.cuda.memory_allocated()
peak = torch.cuda.max_memory_allocated()
del big
after = torch.cuda.memory_allocated()
free, total = torch.cuda.mem_get_info()
during - before, peak >= during, after == before, 0 < free <= total
""")
    assert out == (4 * 1024 * 1024, True, True, True)


@pytest.mark.parametrize("visible", ["1", ""])
def test_cuda_visible_devices_before_the_import(visible):
    """The recipe: set the variable in os.environ before importing torch. In a fresh
    process (this one imported gpuarr already): with '1', GPU 1 alone, renumbered 0;
    with '', none."""
    cell = textwrap.dedent(f"""
        import os
        os.environ['CUDA_VISIBLE_DEVICES'] = {visible!r}
        import gpuarr.compat.torch as torch
        print(torch.cuda.device_count(), torch.cuda.is_available())
    """)
    env = with_pythonpath()
    env.pop("CUDA_VISIBLE_DEVICES", None)
    out = subprocess.run([sys.executable, "-c", cell], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    # GPU 1 exists only with two GPUs; an entry naming no GPU hides it and the rest
    n = 1 if visible == "1" and gpuarr.num_gpus() >= 2 else 0
    assert out.stdout == f"{n} {n > 0}\n"
