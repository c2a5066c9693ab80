"""How fast is gpuarr on this GPU? One table, every number synchronised.

    python bench/gpu.py [--device I] [--quick] [--rounds N] [--allow-simulated]
                        [--json PATH] [--markdown PATH] [--budget SECONDS]

Rows (each timed as: warm up, synchronise, run the operation in a loop, synchronise
once, best of --rounds):

  copy            device-to-device copy of a large array: the bandwidth ceiling
  elementwise     add, multiply by a scalar, exp: GB/s and the fraction of the copy's
  reduction       sum, max, argmax, a matrix's column and row sums, and row sums of
                  short rows (128): GB/s and fraction of copy
  scan            cumulative_sum of a vector, and along the rows of a matrix (many
                  rows: issue 29's row-scan routing)
  sort            sort and argsort of a float32 vector (the bytes of one read and
                  one write: a fraction of copy that radix or merge passes divide)
  gather          x[idx] with a random int64 index array on the device, and with a
                  sequential one (the contiguous-index fast path)
  boolean mask    x[mask], half the elements kept (one host wait: the result's size),
                  and nonzero(mask)
  random          uniform and normal float32 draws (bytes written)
                  (every row above is timed for CuPy and PyTorch too, on the same
                  data, when they are importable and the GPU is real)
  matmul          float32 (and float16) GEMM through gpuarr (cuBLAS underneath) in
                  TFLOP/s, next to CuPy and PyTorch on the same GPU when importable
  launch          time per tiny operation (a 1-element add) in a loop of many,
                  synchronised once: what every small kernel costs at least (CuPy's
                  and PyTorch's too); and a DLPack hand-over to each of them
  transfer        host-to-device (gpuarr.asarray(host, device=gpu)) and
                  device-to-host (x.numpy()) GB/s of a large array; gpuarr stages
                  through pinned host memory
  exercise 1      the chapter's exercise: n x n matmul on the CPU against each GPU,
                  by size, in milliseconds
  training step   one SGD step of a 784-256-10 MLP (ReLU, cross entropy, batch 128,
                  float32; bench_cpu.py's peers row): gpuarr's nn + autograd + optim,
                  the same step under gpuarr.capture, and, on a real GPU, PyTorch
                  eager, PyTorch's whole step captured in a CUDA graph, and JAX's jit
                  of grad + update (issue 45): a small model is bound by launches and
                  their host work, which the launches per step (from the CUDA
                  plugin's counters) show

Where the GPU carries a performance model (a real T4, A100-SXM4-40GB or H100 SXM, or
simulated ones started with GPUARR_SIMULATE_GPUS=1:T4; docs/modeled_time.md), each
gpuarr row also records the model's time over the measured one ("modeled/measured";
"modeled_over_measured" in --json): how far the roofline is from this GPU.

--json and --markdown write the table (the markdown puts gpuarr, CuPy and PyTorch side
by side) after every section, so a run stopped from outside keeps what it measured;
--budget stops starting new rows after that many seconds (a note says what was left).
The bytes behind each GB/s are the fewest the operation must read and write; PyTorch's
sort also writes the indices (it has no values-only sort), which is not counted.

Without a real CUDA GPU (gpuarr._core._gpu_mode()[0] != "cuda") it says so and exits 0.
With --allow-simulated it runs the same table on simulated or emulated GPUs, labelled
as such: their numbers are CPU numbers and say nothing about GPUs (this is how the
script itself is tested). Benchmarks are not tests: nothing here asserts.
"""
import argparse
import datetime
import json
import platform
import sys
import time

import numpy as np

import gpuarr
from gpuarr import _core

GB = 1e9


# The last timed() row's modeled time over its measured time, where the GPU carries a
# performance model (docs/modeled_time.md): Table.add records it with the next gpuarr
# row, so a real T4, A100 or H100 shows how far the model is from the measurement.
_last_model_ratio = [None]


def timed(fn, device, rounds, min_time):
    """Best seconds per call of fn on device: warm up, then loops of doubling length
    until one lasts min_time, synchronising only at the ends of a loop. Where the device
    carries a performance model, two events around each loop also give the modeled time
    (cheap: two event records), kept in _last_model_ratio."""
    fn()
    gpuarr.synchronize(device)
    modeled = gpuarr.device_model(device) is not None
    best, best_modeled = float("inf"), None
    for _ in range(rounds):
        n = 1
        while True:
            gpuarr.synchronize(device)
            if modeled:
                e0, e1 = gpuarr.Event(), gpuarr.Event()
                e0.record(device)
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            if modeled:
                e1.record(device)
            gpuarr.synchronize(device)
            dt = time.perf_counter() - t0
            if dt >= min_time or n >= 1 << 20:
                break
            n *= 2 if dt <= 0 else max(2, min(64, int(min_time / dt * 1.2)))
        if dt / n < best:
            best = dt / n
            best_modeled = e0.elapsed_time(e1, clock="modeled") / 1e3 / n if modeled else None
    _last_model_ratio[0] = None if best_modeled is None or best <= 0 else best_modeled / best
    return best


def timed_foreign(fn, sync, rounds, min_time):
    """timed() for another library, with its own synchronisation."""
    fn()
    sync()
    best = float("inf")
    for _ in range(rounds):
        n = 1
        while True:
            sync()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            sync()
            dt = time.perf_counter() - t0
            if dt >= min_time or n >= 1 << 20:
                break
            n *= 2 if dt <= 0 else max(2, min(64, int(min_time / dt * 1.2)))
        best = min(best, dt / n)
    return best


class Table:
    """The rows as printed (`rows`: group, operation, size, time, rate, vs) and the same
    rows as records for --json and --markdown (`records`: numbers, library, ratio)."""

    def __init__(self, label, budget=None):
        self.label = label
        self.rows = []
        self.records = []
        self.copy_bw = None  # device copy bytes/s, the ceiling other rows are set against
        self.deadline = None if budget is None else time.perf_counter() + budget
        self.budget = budget
        self.out_of_time = False
        self.failed = []  # operations or sections that raised

    def add(self, group, what, size, seconds, rate, vs="", *, lib="gpuarr", value=None,
            unit=None, of_copy=None, ratio=None):
        """A measured row; `value` `unit` the rate as a number, `of_copy` its fraction of
        the copy's bandwidth, `ratio` gpuarr's time over this (peer) library's."""
        model_ratio = None
        if lib == "gpuarr":
            model_ratio, _last_model_ratio[0] = _last_model_ratio[0], None
            if model_ratio is not None:
                vs = f"{vs}; modeled/measured {model_ratio:.2f}".lstrip("; ")
        self.rows.append((group, what, size, _fmt_time(seconds), rate, vs))
        self.records.append({"group": group, "operation": what.split(": ", 1)[-1].strip()
                             if lib != "gpuarr" else what, "lib": lib, "size": size,
                             "seconds": seconds, "rate": value, "unit": unit,
                             "of_copy": of_copy, "gpuarr_time_over_lib": ratio,
                             "modeled_over_measured": model_ratio,
                             "text": rate, "vs": vs})

    def note(self, group, what, text):
        self.rows.append((group, what, "", "", text, ""))
        self.records.append({"group": group, "operation": what.strip(), "note": text})

    def over(self):
        """True (once noted) when --budget is spent: start no more rows."""
        if self.deadline is None or time.perf_counter() < self.deadline:
            return False
        if not self.out_of_time:
            self.out_of_time = True
            self.note("budget", "rows left out",
                      f"skipped: the --budget of {self.budget:g} s was spent")
        return True

    def print(self):
        head = ("group", "operation", "size", "time", "rate", "vs reference")
        widths = [max(len(str(r[i])) for r in self.rows + [head]) for i in range(6)]
        line = "  ".join("{:<%d}" % w for w in widths)
        print(line.format(*head))
        print("  ".join("-" * w for w in widths))
        for r in self.rows:
            print(line.format(*r).rstrip())

    def to_json(self, meta):
        return json.dumps({"meta": meta, "records": self.records}, indent=1)

    def to_markdown(self, meta):
        """gpuarr, CuPy and PyTorch side by side (one line per operation), then the notes."""
        out = [f"# bench/gpu.py on {meta.get('device_name', '?')}", ""]
        for k in ("date", "mode", "gpuarr", "numpy", "cupy", "torch", "jax", "python",
                  "compute_capability", "total_memory_gib", "copy_GBps", "sizes"):
            if meta.get(k) not in (None, ""):
                out.append(f"- {k}: {meta[k]}")
        if self.label:
            out.append(f"- **{self.label.strip()}**")
        out += ["", "| group | operation | size | gpuarr | rate | of copy | cupy | torch "
                "| gpuarr / cupy | gpuarr / torch |",
                "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        lines = {}
        order = []
        for r in self.records:
            if "note" in r:
                continue
            key = (r["group"], r["operation"], r["size"])
            if key not in lines:
                lines[key] = {}
                order.append(key)
            lines[key][r["lib"]] = r
        for key in order:
            libs = lines[key]
            g = libs.get("gpuarr", {})
            cells = [key[0], key[1], key[2],
                     _fmt_time(g.get("seconds")), g.get("text", ""),
                     "" if g.get("of_copy") is None else f"{g['of_copy']:.2f}"]
            for lib in ("cupy", "torch"):
                cells.append(_fmt_time(libs[lib]["seconds"]) if lib in libs else "")
            for lib in ("cupy", "torch"):
                ratio = libs.get(lib, {}).get("gpuarr_time_over_lib")
                cells.append("" if ratio is None else f"{ratio:.2f}")
            out.append("| " + " | ".join(str(c) for c in cells) + " |")
        notes = [r for r in self.records if "note" in r]
        if notes:
            out += ["", "Notes:", ""]
            out += [f"- {r['group']} / {r['operation']}: {r['note']}" for r in notes]
        return "\n".join(out) + "\n"


def _fmt_time(s):
    if isinstance(s, str) or s is None:
        return ""
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.2f} s"


def _fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


class Peers:
    """CuPy and PyTorch on the same GPU, when importable and the GPU is real: each
    bandwidth row is timed for them too, on copies of the same data, so one command
    gives the comparison table. `names` are the libraries present; `arrays(lib)` the
    operands converted for that library; `sync(lib)` waits for its work."""

    def __init__(self, dev, real_cuda):
        self.dev, self.libs, self.missing = dev, {}, []
        if not real_cuda:
            return
        try:
            import cupy
            self.libs["cupy"] = cupy
        except ImportError:
            self.missing.append("cupy: not installed")
        try:
            import torch
            if torch.cuda.is_available():
                self.libs["torch"] = torch
            else:
                self.missing.append("torch: installed without CUDA")
        except ImportError:
            self.missing.append("torch: not installed")

    def convert(self, name, host):
        if name == "cupy":
            with self.libs["cupy"].cuda.Device(self.dev.index):
                return self.libs["cupy"].asarray(host)
        torch = self.libs["torch"]
        return torch.from_numpy(np.ascontiguousarray(host)).to(
            torch.device("cuda", self.dev.index))

    def sync(self, name):
        if name == "cupy":
            return self.libs["cupy"].cuda.Device(self.dev.index).synchronize
        torch = self.libs["torch"]
        return lambda: torch.cuda.synchronize(torch.device("cuda", self.dev.index))


def _torch_sort(o):
    return o["tc"].sort(o["x"], stable=True).values


def bandwidth_rows():
    """(group, operation, bytes moved, gpuarr, cupy, torch): each op a function of the
    operands dict (x, y, out, m, s, idx, seq, mask) of its library; None: not measured
    there. Bytes moved are the least a kernel must read and write, so GB/s over them, as
    a fraction of the copy's, says how close to the memory's speed the operation runs.
    The families are those of issue 29's estimates."""
    def nb(o):
        return o["x"].nbytes

    def f32(o):  # the float32 dtype object of the operands' library
        return o["x"].dtype
    return [
        ("elementwise", "add x + y", lambda o: 3 * nb(o),
         lambda o: gpuarr.add(o["x"], o["y"], out=o["out"]),
         lambda o: o["cp"].add(o["x"], o["y"], out=o["out"]),
         lambda o: o["tc"].add(o["x"], o["y"], out=o["out"])),
        ("elementwise", "multiply x * 2.0", lambda o: 2 * nb(o),
         lambda o: gpuarr.multiply(o["x"], 2.0, out=o["out"]),
         lambda o: o["cp"].multiply(o["x"], 2.0, out=o["out"]),
         lambda o: o["tc"].mul(o["x"], 2.0, out=o["out"])),
        ("elementwise", "exp(x)", lambda o: 2 * nb(o),
         lambda o: gpuarr.exp(o["x"], out=o["out"]),
         lambda o: o["cp"].exp(o["x"], out=o["out"]),
         lambda o: o["tc"].exp(o["x"], out=o["out"])),
        ("reduction", "sum(x)", nb, lambda o: gpuarr.sum(o["x"]),
         lambda o: o["x"].sum(), lambda o: o["x"].sum()),
        ("reduction", "max(x)", nb, lambda o: gpuarr.max(o["x"]),
         lambda o: o["x"].max(), lambda o: o["x"].max()),
        ("reduction", "argmax(x)", nb, lambda o: gpuarr.argmax(o["x"]),
         lambda o: o["x"].argmax(), lambda o: o["x"].argmax()),
        # NaN-aware (issue 46): the plain max, then one bool read back (x has no NaN)
        ("reduction", "nanmax(x)", nb, lambda o: gpuarr.nanmax(o["x"]),
         lambda o: o["cp"].nanmax(o["x"]), None),
        ("reduction", "sum(m, axis=0)", nb, lambda o: gpuarr.sum(o["m"], axis=0),
         lambda o: o["m"].sum(axis=0), lambda o: o["m"].sum(dim=0)),
        ("reduction", "sum(m, axis=1)", nb, lambda o: gpuarr.sum(o["m"], axis=1),
         lambda o: o["m"].sum(axis=1), lambda o: o["m"].sum(dim=1)),
        ("reduction", "sum(s, axis=1), rows of 128", nb,
         lambda o: gpuarr.sum(o["s"], axis=1),
         lambda o: o["s"].sum(axis=1), lambda o: o["s"].sum(dim=1)),
        ("scan", "cumulative_sum(x)", lambda o: 2 * nb(o),
         lambda o: gpuarr.cumulative_sum(o["x"]),
         lambda o: o["cp"].cumsum(o["x"]), lambda o: o["tc"].cumsum(o["x"], 0)),
        ("scan", "cumulative_sum(m, axis=1)", lambda o: 2 * nb(o),
         lambda o: gpuarr.cumulative_sum(o["m"], axis=1),
         lambda o: o["cp"].cumsum(o["m"], axis=1), lambda o: o["tc"].cumsum(o["m"], 1)),
        # sorts: the least traffic is one read and one write; a radix sort makes a
        # pass per key byte, so its fraction of copy speed is below 1 / passes
        ("sort", "sort(x)", lambda o: 2 * nb(o),
         lambda o: gpuarr.sort(o["x"]), lambda o: o["cp"].sort(o["x"]), _torch_sort),
        # argsort reads the keys and writes int64 positions
        ("sort", "argsort(x)", lambda o: 3 * nb(o),
         lambda o: gpuarr.argsort(o["x"]), lambda o: o["cp"].argsort(o["x"]),
         lambda o: o["tc"].argsort(o["x"], stable=True)),
        # nanmedian on the device: a sort of each row (NaNs last), a count and a gather
        ("sort", "nanmedian(s, axis=1), rows of 128", lambda o: 2 * o["s"].nbytes,
         lambda o: gpuarr.nanmedian(o["s"], axis=1),
         lambda o: o["cp"].nanmedian(o["s"], axis=1),
         lambda o: o["tc"].nanmedian(o["s"], dim=1).values),
        # gather: read the index (8 bytes) and the element, write the element
        ("gather", "x[idx], random int64 idx", lambda o: nb(o) * 2 + o["idx"].nbytes,
         lambda o: o["x"][o["idx"]], lambda o: o["x"][o["idx"]],
         lambda o: o["x"][o["idx"]]),
        ("gather", "x[seq], sequential int64 idx", lambda o: nb(o) * 2 + o["seq"].nbytes,
         lambda o: o["x"][o["seq"]], lambda o: o["x"][o["seq"]],
         lambda o: o["x"][o["seq"]]),
        # boolean mask: read the mask and x, write the selected half
        ("boolean mask", "x[x > 0.5] (half kept)", lambda o: nb(o) * 3 // 2 + o["mask"].nbytes,
         lambda o: o["x"][o["mask"]], lambda o: o["x"][o["mask"]],
         lambda o: o["x"][o["mask"]]),
        # nonzero: read the mask, write an int64 position per kept element (half)
        ("boolean mask", "nonzero(mask) (half set)", lambda o: o["mask"].nbytes * 5,
         lambda o: gpuarr.nonzero(o["mask"]), lambda o: o["cp"].nonzero(o["mask"]),
         lambda o: o["tc"].nonzero(o["mask"], as_tuple=True)),
        # random: write every element once
        ("random", "uniform float32", nb,
         lambda o: gpuarr.random.uniform(size=o["x"].shape, dtype="float32",
                                         device=o["x"].device),
         lambda o: o["cp"].random.random_sample(o["x"].shape, dtype=f32(o)),
         lambda o: o["tc"].rand(o["x"].shape, device=o["x"].device)),
        ("random", "normal float32", nb,
         lambda o: gpuarr.random.normal(size=o["x"].shape, dtype="float32",
                                        device=o["x"].device),
         lambda o: o["cp"].random.standard_normal(o["x"].shape, dtype=f32(o)),
         lambda o: o["tc"].randn(o["x"].shape, device=o["x"].device)),
    ]


def bench_bandwidth(t, dev, n, rounds, min_time, real_cuda=False):
    rng = np.random.default_rng(0)
    host = {"x": rng.random(n, dtype=np.float32), "y": rng.random(n, dtype=np.float32),
            "idx": rng.integers(0, n, n, dtype=np.int64),
            "seq": np.arange(n, dtype=np.int64)}
    host["mask"] = host["x"] > 0.5
    rows = max(1, n // 1024)
    short = max(1, n // 128)
    size = f"{n} f32 ({_fmt_bytes(host['x'].nbytes)})"

    ops = {k: gpuarr.asarray(v, device=dev) for k, v in host.items()}
    ops["out"] = gpuarr.empty((n,), device=dev)
    ops["m"] = gpuarr.reshape(ops["x"][: rows * 1024], (rows, 1024))
    ops["s"] = gpuarr.reshape(ops["x"][: short * 128], (short, 128))
    x = ops["x"]
    s = timed(lambda: x.copyto(dev), dev, rounds, min_time)
    copy_bw = 2 * x.nbytes / s  # read + write
    t.add("copy", "device-to-device copy", size, s, f"{copy_bw / GB:.1f} GB/s",
          "1.00 (ceiling)", value=copy_bw / GB, unit="GB/s", of_copy=1.0)
    t.copy_bw = copy_bw

    peers = Peers(dev, real_cuda)
    peer_ops = {}
    for name, lib in peers.libs.items():
        try:
            o = {k: peers.convert(name, v) for k, v in host.items()}
            o["out"] = o["x"].copy() if name == "cupy" else o["x"].clone()
            o["m"] = o["x"][: rows * 1024].reshape(rows, 1024)
            o["s"] = o["x"][: short * 128].reshape(short, 128)
        except Exception as e:  # a peer that cannot take the data: a note, go on
            t.note("peers", name, f"setup failed: {type(e).__name__}: {e}")
            continue
        o["cp" if name == "cupy" else "tc"] = lib
        peer_ops[name] = o
    for note in peers.missing:
        t.note("peers", note.split(":")[0], note)

    for group, what, traffic, fn, fn_cp, fn_tc in bandwidth_rows():
        if t.over():
            return
        sz = (f"{rows}x1024 f32" if "(m," in what else f"{short}x128 f32" if "(s," in what
              else size)
        try:
            s = timed(lambda: fn(ops), dev, rounds, min_time)
        except Exception as e:  # one operation failing on a GPU: a note, go on
            t.note(group, what, f"FAILED: {type(e).__name__}: {e}")
            t.failed.append(what)
            continue
        bw = traffic(ops) / s
        t.add(group, what, sz, s, f"{bw / GB:.1f} GB/s", f"{bw / copy_bw:.2f} of copy",
              value=bw / GB, unit="GB/s", of_copy=bw / copy_bw)
        for name, pfn in (("cupy", fn_cp), ("torch", fn_tc)):
            if name not in peer_ops:
                continue
            o = peer_ops[name]
            try:
                ps = timed_foreign(lambda: pfn(o), peers.sync(name), rounds, min_time)
            except Exception as e:  # a peer's API difference is a note, not a failure
                t.note(group, f"  {name}: {what}", f"{type(e).__name__}: {e}")
                continue
            pbw = traffic(ops) / ps
            t.add(group, f"  {name}: {what}", sz, ps, f"{pbw / GB:.1f} GB/s",
                  f"gpuarr takes {s / ps:.2f}x {name}'s time", lib=name, value=pbw / GB,
                  unit="GB/s", of_copy=pbw / copy_bw, ratio=s / ps)


def bench_matmul(t, dev, n, rounds, min_time, real_cuda):
    flops = 2.0 * n**3
    ref = None
    for dtype in ("float32", "float16"):
        if t.over():
            return
        a = gpuarr.random.uniform(size=(n, n), dtype=dtype, device=dev)
        b = gpuarr.random.uniform(size=(n, n), dtype=dtype, device=dev)
        s = timed(lambda: a @ b, dev, rounds, min_time)
        rate = flops / s
        if dtype == "float32":
            ref = rate
        t.add("matmul", f"gpuarr {dtype} (cuBLAS)", f"{n}x{n}", s,
              f"{rate / 1e12:.3f} TFLOP/s", "reference" if dtype == "float32"
              else f"{rate / ref:.2f}x f32", value=rate / 1e12, unit="TFLOP/s")
    if not real_cuda:
        t.note("matmul", "cupy / torch", "skipped: not a real CUDA GPU")
        return
    # the peers' float32 products on the same kind of data (uniform in [0, 1)); the
    # markdown lines them up with gpuarr's float32 row
    peers = []
    try:
        import cupy as cp
    except ImportError:
        t.note("matmul", "cupy float32", "not installed")
    else:
        with cp.cuda.Device(dev.index):
            ca = cp.random.random((n, n), dtype=cp.float32)
            cb = cp.random.random((n, n), dtype=cp.float32)
        peers.append(("cupy", lambda: ca @ cb, cp.cuda.Device(dev.index).synchronize))
    try:
        import torch
    except ImportError:
        t.note("matmul", "torch float32", "not installed")
    else:
        if not torch.cuda.is_available():
            t.note("matmul", "torch float32", "installed without CUDA")
        else:
            td = torch.device("cuda", dev.index)
            ta = torch.rand((n, n), device=td)
            tb = torch.rand((n, n), device=td)
            peers.append(("torch", lambda: ta @ tb, lambda: torch.cuda.synchronize(td)))
    for name, fn, sync in peers:
        if t.over():
            return
        s = timed_foreign(fn, sync, rounds, min_time)
        t.add("matmul", f"  {name}: gpuarr float32 (cuBLAS)", f"{n}x{n}", s,
              f"{flops / s / 1e12:.3f} TFLOP/s", f"gpuarr is {ref / (flops / s):.2f}x",
              lib=name, value=flops / s / 1e12, unit="TFLOP/s", ratio=(flops / ref) / s)


def _peer_launch(real_cuda, dev):
    """(name, fn(loop), sync) for CuPy's and PyTorch's 1-element add, when present."""
    out = []
    if not real_cuda:
        return out
    try:
        import cupy as cp
        with cp.cuda.Device(dev.index):
            a, b, c = cp.ones(1, cp.float32), cp.ones(1, cp.float32), cp.empty(1, cp.float32)

        def cp_adds(loop):
            for _ in range(loop):
                cp.add(a, b, out=c)
        out.append(("cupy", cp_adds, cp.cuda.Device(dev.index).synchronize))
    except ImportError:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            td = torch.device("cuda", dev.index)
            ta, tb, tc = (torch.ones(1, device=td), torch.ones(1, device=td),
                          torch.empty(1, device=td))

            def tc_adds(loop):
                for _ in range(loop):
                    torch.add(ta, tb, out=tc)
            out.append(("torch", tc_adds, lambda: torch.cuda.synchronize(td)))
    except ImportError:
        pass
    return out


def bench_launch(t, dev, loop, rounds, real_cuda=False):
    a = gpuarr.ones((1,), device=dev)
    b = gpuarr.ones((1,), device=dev)
    out = gpuarr.empty((1,), device=dev)

    def many_adds():
        for _ in range(loop):
            gpuarr.add(a, b, out=out)

    def many_ops():
        for _ in range(loop):
            a + 1.0

    cpu_ref = gpuarr.ones((1,))
    cpu_out = gpuarr.empty((1,))

    def many_cpu_adds():
        for _ in range(loop):
            gpuarr.add(cpu_ref, cpu_ref, out=cpu_out)

    s_cpu = timed(many_cpu_adds, gpuarr.cpu(), rounds, 0) / loop
    s_add = None
    for what, fn in [("add(a, b, out=c), 1 element", many_adds),
                     ("a + 1.0 (new array), 1 element", many_ops)]:
        s = timed(fn, dev, rounds, 0) / loop
        s_add = s if s_add is None else s_add
        t.add("launch", what, f"loop of {loop}", s, f"{1 / s / 1e3:.0f} k ops/s",
              f"{s / s_cpu:.1f}x the CPU's", value=1 / s / 1e3, unit="k ops/s")
    for name, fn, sync in _peer_launch(real_cuda, dev):
        ps = timed_foreign(lambda: fn(loop), sync, rounds, 0) / loop
        t.add("launch", f"  {name}: add(a, b, out=c), 1 element", f"loop of {loop}", ps,
              f"{1 / ps / 1e3:.0f} k ops/s", f"gpuarr takes {s_add / ps:.2f}x {name}'s time",
              lib=name, value=1 / ps / 1e3, unit="k ops/s", ratio=s_add / ps)
    if real_cuda:
        _bench_dlpack(t, dev, a, loop // 10, rounds)


def _bench_dlpack(t, dev, a, loop, rounds):
    """The cost of handing a 1-element array to PyTorch and CuPy through DLPack (issue
    29, item 6: each consumed export waits for the device)."""
    for name in ("torch", "cupy"):
        try:
            lib = __import__(name)
        except ImportError:
            continue

        def exports():
            for _ in range(loop):
                lib.from_dlpack(a)
        try:
            s = timed(exports, dev, rounds, 0) / loop
        except Exception as e:  # an exporter/consumer mismatch is a note
            t.note("launch", f"{name}.from_dlpack(x)", f"{type(e).__name__}: {e}")
            continue
        t.add("launch", f"{name}.from_dlpack(x), 1 element", f"loop of {loop}", s,
              f"{1 / s / 1e3:.0f} k ops/s", "DLPack export, consumed", value=1 / s / 1e3,
              unit="k ops/s")


def bench_transfer(t, dev, n, rounds, min_time):
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    x = gpuarr.asarray(host, device=dev)
    size = _fmt_bytes(host.nbytes)
    copy_bw = t.copy_bw  # from bench_bandwidth, when it ran
    for what, fn in [("h2d gpuarr.asarray(host, device=gpu)",
                      lambda: gpuarr.asarray(host, device=dev)),
                     ("d2h x.numpy()", lambda: x.numpy())]:
        if t.over():
            return
        s = timed(fn, dev, rounds, min_time)
        bw = host.nbytes / s
        t.add("transfer", what, size, s, f"{bw / GB:.2f} GB/s",
              f"{bw / copy_bw:.2f} of copy" if copy_bw else "", value=bw / GB, unit="GB/s",
              of_copy=bw / copy_bw if copy_bw else None)


def bench_exercise1(t, sizes, rounds, min_time):
    devs = [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]
    for n in sizes:
        cpu_time = None
        for d in devs:
            if t.over():
                return
            a = gpuarr.random.uniform(size=(n, n), device=d)
            b = gpuarr.random.uniform(size=(n, n), device=d)
            s = timed(lambda: a @ b, d, rounds, min_time)
            if cpu_time is None:
                cpu_time = s
                vs = "reference"
            else:
                vs = f"{cpu_time / s:.2f}x the CPU's speed"
            t.add("exercise 1", f"matmul on {d!r}", f"{n}x{n}", s,
                  f"{2.0 * n**3 / s / 1e9:.1f} GFLOP/s", vs, value=2.0 * n**3 / s / 1e9,
                  unit="GFLOP/s")


MLP = (128, 784, 256, 10, 0.01)  # batch, in, hidden, classes, learning rate


def _mlp_data(seed=0):
    B, D, H, C, _ = MLP
    rng = np.random.default_rng(seed)
    return (rng.random((B, D), dtype=np.float32), rng.integers(0, C, B),
            [(rng.standard_normal(s) * 0.05).astype(np.float32)
             for s in [(H, D), (H,), (C, H), (C,)]])


def mlp_step(dev, params):
    """gpuarr's step as a course writes it (nn + autograd + SGD), on dev, from the
    parameters `params` (NumPy, as _mlp_data makes them); (step, net). Also the step
    whose launches tests/cuda/test_cuda_budgets.py counts."""
    from gpuarr import nn, optim
    B, D, H, C, lr = MLP
    net = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, C)).to(dev)
    with gpuarr.no_grad():
        for p, v in zip(net.parameters(), params):
            p[...] = gpuarr.asarray(v, device=dev)
    opt = optim.SGD(net.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()

    def step(X, y):
        loss = loss_fn(net(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step, net


def _gpuarr_mlp_step(dev):
    """mlp_step on dev with _mlp_data's parameters; (step, X, y)."""
    X_n, y_n, params = _mlp_data()
    step, _ = mlp_step(dev, params)
    return step, gpuarr.asarray(X_n, device=dev), gpuarr.asarray(y_n, device=dev)


def _torch_mlp_steps(index):
    """PyTorch's step eager and captured whole in a CUDA graph (the recipe of
    torch.cuda.graphs' documentation: warm-up on a side stream, static inputs), as
    (name, fn, sync); raises ImportError or RuntimeError when PyTorch cannot."""
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("installed without CUDA")
    B, D, H, C, lr = MLP
    X_n, y_n, params = _mlp_data()
    td = torch.device("cuda", index)
    out = []
    for graphed in (False, True):
        net = torch.nn.Sequential(torch.nn.Linear(D, H), torch.nn.ReLU(),
                                  torch.nn.Linear(H, C)).to(td)
        with torch.no_grad():
            for p, v in zip(net.parameters(), params):
                p.copy_(torch.from_numpy(v))
        opt = torch.optim.SGD(net.parameters(), lr=lr)
        loss_fn = torch.nn.CrossEntropyLoss()
        X = torch.from_numpy(X_n).to(td)
        y = torch.from_numpy(y_n).to(td)

        def step(net=net, opt=opt, loss_fn=loss_fn, X=X, y=y):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(X), y)
            loss.backward()
            opt.step()
            return loss
        if not graphed:
            out.append(("torch eager", step, lambda: torch.cuda.synchronize(td)))
            continue
        side = torch.cuda.Stream(td)
        side.wait_stream(torch.cuda.current_stream(td))
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream(td).wait_stream(side)
        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            loss = loss_fn(net(X), y)
            loss.backward()
            opt.step()
        out.append(("torch CUDA graph", g.replay, lambda: torch.cuda.synchronize(td)))
    return out


def _jax_mlp_step(index):
    """JAX's jit of value_and_grad and the update on GPU `index`, as (fn, sync); raises
    ImportError or RuntimeError when JAX has no GPU."""
    import jax
    import jax.numpy as jnp
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if len(gpus) <= index:
        raise RuntimeError("JAX sees no GPU " + str(index))
    B, D, H, C, lr = MLP
    X_n, y_n, params = _mlp_data()
    put = lambda a: jax.device_put(a, gpus[index])  # noqa: E731
    state = [[put(p) for p in params]]
    X, y = put(X_n), put(y_n)

    def loss_of(p, X, y):
        W1, b1, W2, b2 = p
        z = jnp.maximum(X @ W1.T + b1, 0) @ W2.T + b2
        return -jnp.mean(jax.nn.log_softmax(z)[jnp.arange(B), y])

    @jax.jit
    def jstep(p, X, y):
        loss, g = jax.value_and_grad(loss_of)(p, X, y)
        return [a - lr * b for a, b in zip(p, g)], loss

    last = [None]

    def run():
        state[0], last[0] = jstep(state[0], X, y)

    return run, lambda: last[0] is not None and last[0].block_until_ready()


def bench_mlp_step(t, dev, rounds, min_time, real_cuda):
    """The training step of issue 45 on dev: gpuarr uncaptured and captured, and the
    peers on a real GPU. The launches per step come from the CUDA plugin's counters
    (real or emulated CUDA; none on simulated GPUs)."""
    from gpuarr.testing import count_kernels
    step, X, y = _gpuarr_mlp_step(dev)
    captured = gpuarr.capture(step)
    captured(X, y)
    # its own input buffers, as PyTorch's graph replays on its static inputs
    X_c, y_c = captured.inputs
    ref = None
    for what, fn in [("MLP step: nn + autograd + SGD", lambda: step(X, y)),
                     ("MLP step: gpuarr.capture", lambda: captured(X_c, y_c))]:
        if t.over():
            return
        s = timed(fn, dev, rounds, min_time)
        fn()
        gpuarr.synchronize(dev)
        with count_kernels(dev) as k:  # counted as queued: no wait needed inside
            fn()
        gpuarr.synchronize(dev)
        launches = (f"{k.launches} launches ({k.graph_launches} CUDA graph of "
                    f"{k.graph_kernels} kernels), {k.syncs} host waits a step"
                    if k.supported else "launches not counted here")
        ref = s if ref is None else ref
        t.add("training step", what, "784-256-10 b128", s, f"{1 / s:.0f} steps/s",
              launches, value=1 / s, unit="steps/s")
    if not real_cuda:
        t.note("training step", "torch eager / CUDA graph, JAX jit",
               "skipped: not a real CUDA GPU")
        return
    peers = []
    try:
        peers += _torch_mlp_steps(dev.index)
    except (ImportError, RuntimeError) as e:
        t.note("training step", "torch", f"skipped: {type(e).__name__}: {e}")
    try:
        peers.append(("jax jit",) + _jax_mlp_step(dev.index))
    except (ImportError, RuntimeError) as e:
        t.note("training step", "jax jit", f"skipped: {type(e).__name__}: {e}")
    for name, fn, sync in peers:
        if t.over():
            return
        s = timed_foreign(fn, sync, rounds, min_time)
        lib = name.split()[0]
        t.add("training step", f"  {name}: MLP step", "784-256-10 b128", s,
              f"{1 / s:.0f} steps/s", f"gpuarr (uncaptured) takes {ref / s:.2f}x its time",
              lib=lib, value=1 / s, unit="steps/s", ratio=ref / s)


def _versions():
    """Versions of the peers, without importing what is absent."""
    import importlib.metadata as md
    out = {}
    for dist, key in (("cupy-cuda13x", "cupy"), ("cupy-cuda12x", "cupy"), ("cupy", "cupy"),
                      ("torch", "torch"), ("jax", "jax")):
        if key in out:
            continue
        try:
            out[key] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", type=int, default=0, help="the GPU to measure (default 0)")
    p.add_argument("--rounds", type=int, default=5, help="best of this many (default 5)")
    p.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    p.add_argument("--allow-simulated", action="store_true",
                   help="also run on simulated or emulated GPUs (labelled; CPU numbers)")
    p.add_argument("--json", metavar="PATH", help="also write the table as JSON")
    p.add_argument("--markdown", metavar="PATH",
                   help="also write the table as markdown, the libraries side by side")
    p.add_argument("--budget", type=float, metavar="SECONDS",
                   help="start no new row after this many seconds")
    args = p.parse_args(argv)

    ngpu = gpuarr.num_gpus()
    mode, reason = _core._gpu_mode()
    real = mode == "cuda"
    if not real and not args.allow_simulated:
        print(f"No real CUDA GPU here (GPU mode: {mode}: {reason}).")
        print("Nothing to measure; run with --allow-simulated to exercise the script "
              "on simulated GPUs.")
        return 0
    if ngpu == 0:
        print(f"No GPU at all (GPU mode: {mode}: {reason}); set GPUARR_SIMULATE_GPUS=1 "
              "to run the table on a simulated one.")
        return 0
    if args.device >= ngpu:
        print(f"--device {args.device}: this process has {ngpu} GPU(s)", file=sys.stderr)
        return 2
    dev = gpuarr.gpu(args.device)
    info = _core._device_info(dev)
    label = "" if real else f"  [{mode.upper()} GPU: these are CPU numbers, not GPU numbers]"
    print(f"gpuarr {gpuarr.__version__} on {dev!r}: {info.get('name', '?')} ({mode}){label}")
    if not real:
        print(f"NOTE: {reason}")

    if args.quick:
        n_bw, n_mm, loop, n_tr = 1 << 14, 64, 200, 1 << 18
        ex_sizes, min_time, rounds = (16, 64), 0.005, min(args.rounds, 2)
    elif real:
        n_bw, n_mm, loop, n_tr = 1 << 26, 4096, 10000, 1 << 26
        ex_sizes, min_time, rounds = (64, 256, 1024, 4096), 0.1, args.rounds
    else:
        n_bw, n_mm, loop, n_tr = 1 << 22, 512, 2000, 1 << 22
        ex_sizes, min_time, rounds = (64, 256, 512), 0.05, args.rounds

    t = Table(label, args.budget)
    cc = info.get("compute_capability")
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "device_name": info.get("name", "?"), "mode": mode,
            "compute_capability": ".".join(map(str, cc)) if cc else None,
            "total_memory_gib": round(info.get("total_memory", 0) / 2**30, 1),
            "gpuarr": gpuarr.__version__, "numpy": np.__version__,
            "python": platform.python_version(), **(_versions() if real else {}),
            "rounds": rounds, "min_time_s": min_time,
            "sizes": f"bandwidth rows {n_bw} float32, matmul {n_mm}, launch loop {loop}, "
                     f"transfer {n_tr} float32, exercise 1 {list(ex_sizes)}"}

    def save():
        meta["copy_GBps"] = round(t.copy_bw / GB, 1) if t.copy_bw else None
        if args.json:
            with open(args.json, "w") as f:
                f.write(t.to_json(meta))
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(t.to_markdown(meta))

    # A section that fails shows as a row (and the exit status is 1): the rest of the
    # table is still worth having. The files are rewritten after each section.
    for group, fn, fargs in [
        ("copy/elementwise/reduction/scan/sort/indexing/random", bench_bandwidth,
         (t, dev, n_bw, rounds, min_time, real)),
        ("matmul", bench_matmul, (t, dev, n_mm, rounds, min_time, real)),
        ("launch", bench_launch, (t, dev, loop, rounds, real)),
        # before the transfers and the CPU's side of exercise 1: the prepared GPU run
        # gives the table a budget, and this is issue 45's row for the first GPU
        ("training step", bench_mlp_step, (t, dev, rounds, min_time, real)),
        ("transfer", bench_transfer, (t, dev, n_tr, rounds, min_time)),
        ("exercise 1", bench_exercise1, (t, ex_sizes, rounds, min_time)),
    ]:
        if t.over():
            break
        try:
            fn(*fargs)
        except Exception as e:  # report and go on
            t.failed.append(group)
            t.note(group, "FAILED", f"{type(e).__name__}: {e}")
        save()
    save()
    failed = t.failed
    print()
    t.print()
    if not real:
        print(f"\n(all rows above ran on {mode} GPUs: they check the script, not a GPU)")
    if failed:
        print(f"\nfailed sections: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
