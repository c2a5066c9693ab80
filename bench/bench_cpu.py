"""gpuarr against NumPy on the CPU, side by side in one process.

    python bench/bench_cpu.py [--rounds 7] [--quick] [--markdown]

Each row times the same operation on the same data with gpuarr and with NumPy,
interleaved (gpuarr, numpy, gpuarr, numpy, ...) for several rounds, and prints the
medians and their ratio (gpuarr time / NumPy time: lower is better, < 1 means gpuarr is
faster). A large memory copy measured in the same run gives the machine's bandwidth,
the ceiling for the memory-bound rows; their "of copy bw" column says how close each
gets. The copy runs on one core and on all cores at once (NumPy copies on one
thread); the ceiling is the faster of the two, since gpuarr may use every core. The
load average before and after is printed: the machine may be shared, and a busy
core changes every multi-threaded number. Benchmarks are not tests: nothing here
asserts.
"""
import argparse
import contextlib
import os
import platform
import statistics
import threading
import time

import numpy as np

import gpuarr as ga


# --cpu-time switches the clock to this process's CPU time: on a shared machine (a
# load average far above the core count) wall time measures the other tenants.
_clock = time.perf_counter


def _time_per_call(fn, min_time=0.05):
    """Seconds per call of fn, calling it enough times to fill min_time."""
    n = 1
    while True:
        t0 = _clock()
        for _ in range(n):
            fn()
        dt = _clock() - t0
        if dt >= min_time:
            return dt / n
        n *= 2 if dt <= 0 else max(2, int(min_time / dt * 1.2))


def compare(fa, fn, rounds):
    """Median seconds per call for gpuarr's fa and NumPy's fn, interleaved."""
    ta, tn = [], []
    fa()
    fn()  # warm up both (allocator caches, BLAS threads)
    for _ in range(rounds):
        ta.append(_time_per_call(fa))
        tn.append(_time_per_call(fn))
    return statistics.median(ta), statistics.median(tn)


def copy_bandwidth(rounds, nthreads=1):
    """Bytes per second of a large memory copy (read + write), with NumPy, split
    between `nthreads` Python threads (np.copyto releases the GIL)."""
    src = np.ones(1 << 25, np.float32)  # 128 MiB
    dst = np.empty_like(src)
    parts = np.array_split(np.arange(src.size), nthreads)
    bounds = [(p[0], p[-1] + 1) for p in parts]

    def one(lo, hi):
        np.copyto(dst[lo:hi], src[lo:hi])

    def copy():
        if nthreads == 1:
            np.copyto(dst, src)
            return
        ts = [threading.Thread(target=one, args=b) for b in bounds]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    t = min(_time_per_call(copy, 0.2) for _ in range(rounds))
    return 2 * src.nbytes / t


def compare_profiled(f, rounds):
    """Median seconds per call of f inside a ``ga.profile()`` block and outside one,
    interleaved."""
    ta, tn = [], []
    f()
    for _ in range(rounds):
        with ga.profile():
            ta.append(_time_per_call(f))
        tn.append(_time_per_call(f))
    return statistics.median(ta), statistics.median(tn)


def machine():
    model = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs"


def rows(quick):
    n = 10**6 if quick else 10**7
    rng = np.random.default_rng(0)
    tiny_n = rng.random(3, dtype=np.float32)
    tiny_g = ga.asarray(tiny_n.copy())
    tiny_n2 = tiny_n.copy()
    tiny_g2 = ga.asarray(tiny_n2)
    tiny_w = ga.asarray(tiny_n2.copy(), requires_grad=True)
    big_n = rng.random(n, dtype=np.float32)
    big_n2 = rng.random(n, dtype=np.float32)
    big_g, big_g2 = ga.asarray(big_n.copy()), ga.asarray(big_n2.copy())
    mat_n = rng.random((n // 1000, 1000), dtype=np.float32)
    mat_g = ga.asarray(mat_n.copy())
    strided_n = rng.random(2 * n, dtype=np.float32)[::2]
    strided_g = ga.asarray(rng.random(2 * n, dtype=np.float32))[::2]
    f4 = 4
    out = [
        # (name, kind, gpuarr fn, numpy fn, bytes moved per call for bandwidth rows)
        ("tiny a + b", "overhead", lambda: tiny_g + tiny_g2, lambda: tiny_n + tiny_n2, None),
        # in place: the write path's overlap and read-only checks are on this row
        ("tiny a += b", "overhead", lambda: tiny_g.__iadd__(tiny_g2),
         lambda: tiny_n.__iadd__(tiny_n2), None),
        ("tiny a + 1.0", "overhead", lambda: tiny_g + 1.0, lambda: tiny_n + 1.0, None),
        ("tiny a.sum()", "overhead", lambda: tiny_g.sum(), lambda: tiny_n.sum(), None),
        ("ones(3)", "overhead", lambda: ga.ones(3), lambda: np.ones(3, np.float32), None),
        # autograd (issue 23): an operand that requires grad, grad mode off (the row
        # runs under no_grad()): the path of the tiny rows above, one flag test more
        ("tiny a * w, w.requires_grad, no_grad()", "no_grad", lambda: tiny_g * tiny_w,
         lambda: tiny_n * tiny_n2, None),
        # recorded: the second column is the same operation unrecorded (gpuarr, not
        # NumPy); the difference is the cost of recording, target <= 1 us
        ("tiny a * w recorded (vs a * b)", "record", lambda: tiny_g * tiny_w,
         lambda: tiny_g * tiny_g2, None),
        ("tiny w.sum() recorded (vs a.sum())", "record", lambda: tiny_w.sum(),
         lambda: tiny_g2.sum(), None),
        # profiler (issue 25): the same operation inside and outside `with
        # ga.profile()`, interleaved (compare_profiled); the difference is the cost of
        # recording it, target <= 1 us. Off, the cost is one relaxed load per
        # dispatch (bench/tiny_ops.py against the build before, docs/DESIGN.md)
        ("tiny a + b profiled (vs not)", "profiled", lambda: tiny_g + tiny_g2, None,
         None),
        (f"a + b ({n:.0e} f32)", "memory", lambda: big_g + big_g2, lambda: big_n + big_n2,
         3 * n * f4),
        ("(z + 2).exp() * y", "memory", lambda: (big_g + 2).exp() * big_g2,
         lambda: np.exp(big_n + 2) * big_n2, 3 * n * f4),
        ("sum", "memory", lambda: big_g.sum(), lambda: big_n.sum(), n * f4),
        ("max(axis=1)", "memory", lambda: mat_g.max(axis=1), lambda: mat_n.max(axis=1),
         n * f4),
        # down the rows (a bias gradient's sum): gpuarr sums float32 in double, NumPy
        # in float32, so the same loop has half the lanes (ga_cpu_reduce.c, rows_task)
        ("sum(axis=0)", "rows", lambda: mat_g.sum(axis=0), lambda: mat_n.sum(axis=0),
         n * f4),
        ("max(axis=0)", "rows", lambda: mat_g.max(axis=0), lambda: mat_n.max(axis=0),
         n * f4),
        # a stride-2 view reads every cache line of its 2n-element base
        ("exp of a strided view", "memory", lambda: strided_g.exp(),
         lambda: np.exp(strided_n), 3 * n * f4),
    ]
    # the SIMD math (ga_vmath.h): exp of float32 at twice NumPy's speed or better (issue
    # 28), the others at NumPy's speed or better
    u_n = rng.uniform(0.1, 5, n).astype(np.float32)
    u_g = ga.asarray(u_n.copy())
    ud_n = u_n.astype(np.float64)
    ud_g = ga.asarray(ud_n.copy())
    out.append((f"exp ({n:.0e} f32)", "exp32", lambda: ga.exp(u_g), lambda: np.exp(u_n),
                2 * n * f4))
    for fname in ("log", "sin", "tanh", "exp"):
        if fname != "exp":
            out.append((f"{fname} ({n:.0e} f32)", "math", lambda f=fname: getattr(ga, f)(u_g),
                        lambda f=fname: getattr(np, f)(u_n), 2 * n * f4))
        out.append((f"{fname} ({n:.0e} f64)", "math", lambda f=fname: getattr(ga, f)(ud_g),
                    lambda f=fname: getattr(np, f)(ud_n), 2 * n * 8))
    for size in (64, 256, 1024):
        a_n = rng.random((size, size), dtype=np.float32)
        a_g = ga.asarray(a_n.copy())
        out.append((f"matmul {size} f32", "matmul", lambda a=a_g: a @ a, lambda a=a_n: a @ a,
                    None))
    d_n = rng.random((1024, 1024))
    d_g = ga.asarray(d_n.copy())
    out.append(("matmul 1024 f64", "matmul", lambda: d_g @ d_g, lambda: d_n @ d_n, None))

    # the CPU backend's stable merge sort (ga_cpu_sort.c) against NumPy's stable sort
    # (radix sort for 16-bit and narrower keys, timsort otherwise): one row, and many
    # short rows (the per-row setup shows)
    sn = n // 10
    s_n = rng.standard_normal(sn).astype(np.float32)
    s_g = ga.asarray(s_n.copy())
    r_n = rng.standard_normal((sn // 16, 16)).astype(np.float32)
    r_g = ga.asarray(r_n.copy())
    out.append((f"sort ({sn:.0e} f32)", "sort", lambda: ga.sort(s_g),
                lambda: np.sort(s_n, stable=True), None))
    out.append((f"argsort rows of 16 ({sn:.0e} f32)", "sort", lambda: ga.argsort(r_g),
                lambda: np.argsort(r_n, axis=-1, stable=True), None))

    # gpuarr.linalg through the LAPACK of the loaded OpenBLAS (ga_cpu_linalg.c), against
    # NumPy's, the same routines (gesv, syevd, gesdd, geqrf): batches of 256 x 256
    ln = 64 if quick else 256
    l_n = rng.standard_normal((4, ln, ln)) + ln * np.eye(ln)
    l_g = ga.asarray(l_n.copy())
    b_n = rng.standard_normal((4, ln, 1))
    b_g = ga.asarray(b_n.copy())
    h_n = l_n + np.swapaxes(l_n, -1, -2)
    h_g = ga.asarray(h_n.copy())
    out.append((f"solve 4x{ln}x{ln} f64", "linalg", lambda: ga.linalg.solve(l_g, b_g),
                lambda: np.linalg.solve(l_n, b_n), None))
    out.append((f"eigh 4x{ln}x{ln} f64", "linalg", lambda: ga.linalg.eigh(h_g),
                lambda: np.linalg.eigh(h_n), None))
    out.append((f"svd 4x{ln}x{ln} f64", "linalg", lambda: ga.linalg.svd(l_g),
                lambda: np.linalg.svd(l_n), None))
    out.append((f"qr 4x{ln}x{ln} f64", "linalg", lambda: ga.linalg.qr(l_g),
                lambda: np.linalg.qr(l_n), None))

    # gpuarr.fft (ga_cpu_fft.c, written here: mixed radix + Bluestein; kept plans and
    # the thread pool, ga_cpu_fft_plans.c)
    # against numpy.fft (pocketfft): a power of two, a batch, and a large prime
    fn_ = 1 << (14 if quick else 20)
    c_n = (rng.standard_normal(fn_) + 1j * rng.standard_normal(fn_)).astype(np.complex128)
    c_g = ga.asarray(c_n.copy())
    fb_n = rng.standard_normal((1000, 1024)).astype(np.float32)
    fb_g = ga.asarray(fb_n.copy())
    p_n = rng.standard_normal(65537)
    p_g = ga.asarray(p_n.copy())
    out.append((f"fft 2^{fn_.bit_length() - 1} c128", "fft", lambda: ga.fft.fft(c_g),
                lambda: np.fft.fft(c_n), None))
    out.append(("rfft 1000x1024 f32", "fft", lambda: ga.fft.rfft(fb_g),
                lambda: np.fft.rfft(fb_n), None))
    out.append(("fft 65537 f64 (Bluestein)", "fft", lambda: ga.fft.fft(p_g),
                lambda: np.fft.fft(p_n), None))
    # issue 45 item 5: one long real line (10^6 = 2^6 5^6: a half transform of 500000)
    r_n = rng.standard_normal(10**5 if quick else 10**6)
    r_g = ga.asarray(r_n.copy())
    out.append((f"rfft {r_n.size:.0e} f64", "fft", lambda: ga.fft.rfft(r_g),
                lambda: np.fft.rfft(r_n), None))

    # NaN-aware reductions (issue 46): without NaN, the plain reduction and one bool;
    # with NaN in some slice, NumPy's recipe fused (python/gpuarr/_nanfunctions.py)
    nn_ = 10**5 if quick else 10**6
    clean_n = rng.standard_normal(nn_)
    clean_g = ga.asarray(clean_n.copy())
    holes_n = clean_n.reshape(-1, 1000).copy()
    holes_n[rng.random(holes_n.shape) < 0.01] = np.nan
    holes_g = ga.asarray(holes_n.copy())
    out.append((f"nanmax {nn_:.0e} f64, no NaN", "nan", lambda: ga.nanmax(clean_g),
                lambda: np.nanmax(clean_n), None))
    out.append((f"nanmax {nn_:.0e} f64, 1% NaN", "nan", lambda: ga.nanmax(holes_g),
                lambda: np.nanmax(holes_n), None))
    out.append((f"nanmin(axis=1) {nn_:.0e} f64, 1% NaN", "nan",
                lambda: ga.nanmin(holes_g, axis=1), lambda: np.nanmin(holes_n, axis=1),
                None))
    out.append((f"nanargmax {nn_:.0e} f64, no NaN", "nan", lambda: ga.nanargmax(clean_g),
                lambda: np.nanargmax(clean_n), None))
    out.append((f"nanargmax {nn_:.0e} f64, 1% NaN", "nan", lambda: ga.nanargmax(holes_g),
                lambda: np.nanargmax(holes_n), None))

    m_n = rng.random((100, 100), dtype=np.float32)
    m_g = ga.asarray(m_n.copy())
    steps = 100 if quick else 1000

    def ex3_ga():
        log = ga.zeros(steps)
        for i in range(steps):
            log[i] = ga.linalg.norm(m_g @ m_g)
        return log.numpy()

    def ex3_np():
        log = np.zeros(steps, np.float32)
        for i in range(steps):
            log[i] = np.linalg.norm(m_n @ m_n)
        return log

    out.append((f"exercise 3 loop ({steps} steps)", "loop", ex3_ga, ex3_np, None))
    out.append(mlp_training_step(rng))
    return out


def mlp_training_step(rng):
    """One training step of a 784-256-10 MLP on a batch of 128, float32: forward,
    cross-entropy, backward, SGD. gpuarr: nn + autograd + optim, as a course writes it;
    NumPy: the same step with its gradients written by hand (the floor a tape must get
    near: the same GEMMs, and no graph)."""
    from gpuarr import nn, optim

    B, D, H, C, lr = 128, 784, 256, 10, 0.01
    X_n = rng.random((B, D), dtype=np.float32)
    y_n = rng.integers(0, C, B)
    ga.random.seed(0)
    net = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, C))
    opt = optim.SGD(net.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    X_g, y_g = ga.asarray(X_n.copy()), ga.asarray(y_n.copy())
    W1, b1, W2, b2 = (p.numpy().copy() for p in net.parameters())
    rows = np.arange(B)

    def step_ga():
        loss = loss_fn(net(X_g), y_g)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def step_np():
        nonlocal W1, b1, W2, b2  # updated in place, as the optimizer does
        h = X_n @ W1.T + b1
        a = np.maximum(h, 0)
        z = a @ W2.T + b2
        s = z - z.max(axis=1, keepdims=True)
        e = np.exp(s)
        se = e.sum(axis=1, keepdims=True)
        loss = -(s[rows, y_n] - np.log(se[:, 0])).mean()
        dz = e / se
        dz[rows, y_n] -= 1
        dz /= B
        dW2, db2 = dz.T @ a, dz.sum(axis=0)
        dh = dz @ W2
        dh *= h > 0
        dW1, db1 = dh.T @ X_n, dh.sum(axis=0)
        W1 -= lr * dW1
        b1 -= lr * db1
        W2 -= lr * dW2
        b2 -= lr * db2
        return loss

    return ("MLP 784-256-10 train step b128", "train", step_ga, step_np, None)


def mlp_step_peers(rounds):
    """The MLP step of mlp_training_step four ways, interleaved in one process:
    gpuarr uncaptured, gpuarr.capture, NumPy by hand, and JAX's jit of grad + update
    when JAX is importable (pip install jax, or the package's `bench` extra). Median
    seconds per step, by name (None for a peer that is not installed)."""
    rng = np.random.default_rng(0)
    _, _, step_ga, step_np, _ = mlp_training_step(rng)
    captured = ga.capture(_MlpCapturable(rng))
    captured(captured.fn.X, captured.fn.y)
    # the step's own input buffers, as every peer reads its X and y where they are
    # (a copy of each batch into them is the data loader's, as for JAX's device_put)
    X_c, y_c = captured.inputs
    steps = {"gpuarr": step_ga, "gpuarr.capture": lambda: captured(X_c, y_c),
             "numpy": step_np, "jax jit": _jax_mlp_step(rng)}
    times = {k: [] for k, f in steps.items() if f is not None}
    for k in times:
        steps[k]()  # warm up (JAX compiles here)
    for _ in range(rounds):
        for k in times:
            times[k].append(_time_per_call(steps[k]))
    return {k: (statistics.median(times[k]) if k in times else None) for k in steps}


class _MlpCapturable:
    """The gpuarr MLP step as a function of (X, y), for gpuarr.capture."""

    def __init__(self, rng):
        from gpuarr import nn, optim
        B, D, H, C = 128, 784, 256, 10
        ga.random.seed(0)
        self.net = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, C))
        self.opt = optim.SGD(self.net.parameters(), lr=0.01)
        self.loss_fn = nn.CrossEntropyLoss()
        self.X = ga.asarray(rng.random((B, D), dtype=np.float32))
        self.y = ga.asarray(rng.integers(0, C, B))

    def __call__(self, X, y):
        loss = self.loss_fn(self.net(X), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def _jax_mlp_step(rng):
    """JAX's compiled step (jit of value_and_grad and the SGD update), or None."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    B, D, H, C, lr = 128, 784, 256, 10, 0.01
    params = [jnp.asarray(rng.standard_normal(s).astype(np.float32) * 0.05)
              for s in [(H, D), (H,), (C, H), (C,)]]
    X = jnp.asarray(rng.random((B, D), dtype=np.float32))
    y = jnp.asarray(rng.integers(0, C, B))

    def loss_of(p, X, y):
        W1, b1, W2, b2 = p
        z = jnp.maximum(X @ W1.T + b1, 0) @ W2.T + b2
        return -jnp.mean(jax.nn.log_softmax(z)[jnp.arange(B), y])

    @jax.jit
    def step(p, X, y):
        loss, g = jax.value_and_grad(loss_of)(p, X, y)
        return [a - lr * b for a, b in zip(p, g)], loss

    state = [params]

    def run():
        state[0], loss = step(state[0], X, y)
        return loss.block_until_ready()

    return run


# linalg (LAPACK, the routines NumPy calls) within 1.2 of NumPy; the FFT at or below
# pocketfft's time (issue 28 item 5; every row met on 2026-11-28)
TARGETS = {"overhead": 1.0, "memory": 0.7, "matmul": 1.05, "loop": 1.0, "sort": 1.5,
           "linalg": 1.2, "fft": 1.0, "train": 1.2, "math": 1.0, "exp32": 0.5,
           "nan": 1.0, "rows": 1.0}


# --- fused chains (issue 28): gpuarr.fuse beside the unfused chain, NumPy and numexpr --

FUSED_EXPRS = [
    # (name, gpuarr function, NumPy function, numexpr expression, arrays, bytes/element
    #  in elements of the dtype: the inputs read once and the output written once)
    ("(z + 2).exp() * y", lambda z, y: (z + 2).exp() * y, lambda z, y: np.exp(z + 2) * y,
     "exp(z + two) * y", "zy", 3),
    ("a * b + c", lambda a, b, c: a * b + c, lambda a, b, c: a * b + c, "a * b + c", "abc", 4),
    ("sqrt(x*x + y*y)", lambda x, y: ga.sqrt(x * x + y * y),
     lambda x, y: np.sqrt(x * x + y * y), "sqrt(x * x + y * y)", "xy", 3),
    ("where(x > 0, x, 0.01 * x)", lambda x: ga.where(x > 0, x, 0.01 * x),
     lambda x: np.where(x > 0, x, 0.01 * x), "where(x > zero, x, k * x)", "x", 2),
    ("((x - m) ** 2).sum()", lambda x, m: ((x - m) ** 2).sum(),
     lambda x, m: ((x - m) ** 2).sum(), "sum((x - m) ** 2)", "xm", 1),
]
FUSED_TARGET_BW = 0.7        # of the copy bandwidth the same run measures
FUSED_TARGET_NUMEXPR = 0.8   # of numexpr's time


def fused_table(quick, rounds, bw, only=None, markdown=False):
    """One row per expression and dtype: gpuarr.fuse, the same chain unfused, NumPy and
    numexpr (when installed: pip install numexpr, or the package's `bench` extra),
    interleaved in one process."""
    try:
        import numexpr as ne
    except ImportError:
        ne = None
    n = 10**6 if quick else 10**7
    rng = np.random.default_rng(1)
    head = ["row", "fused", "unfused", "numpy", "numexpr", "fused/ne", "of copy bw"]
    print(f"\nfused chains, {n:.0e} elements (targets: fused/numexpr <= "
          f"{FUSED_TARGET_NUMEXPR}, >= {FUSED_TARGET_BW:.0%} of copy bandwidth)")
    if markdown:
        print("\n| " + " | ".join(head) + " |\n|" + " --- |" + " ---: |" * (len(head) - 1))
    else:
        print(f"{head[0]:34} " + " ".join(f"{h:>10}" for h in head[1:]))
    for dt in (np.float32, np.float64):
        data = {k: rng.standard_normal(n).astype(dt) for k in "abcxyz"}
        gdata = {k: ga.asarray(v.copy()) for k, v in data.items()}
        consts = {"m": np.array(0.3, dt), "two": np.array(2, dt), "zero": np.array(0, dt),
                  "k": np.array(0.01, dt)}
        for name, gfn, nfn, expr, names, elems in FUSED_EXPRS:
            row = f"{name} {np.dtype(dt).name}"
            if only and only not in row:
                continue
            gargs = [gdata[c] if c != "m" else 0.3 for c in names]
            nargs = [data[c] if c != "m" else dt(0.3) for c in names]
            fused = ga.fuse(gfn)
            tf, tn = compare(lambda: fused(*gargs), lambda: nfn(*nargs), rounds)
            tu, _ = compare(lambda: gfn(*gargs), lambda: None, max(1, rounds // 2))
            te = None
            if ne is not None:
                local = {**{c: data[c] for c in names if c != "m"}, **consts}
                _, te = compare(lambda: None, lambda: ne.evaluate(expr, local_dict=local),
                                rounds)
            frac = elems * n * np.dtype(dt).itemsize / tf / bw
            cells = [_fmt(tf), _fmt(tu), _fmt(tn), _fmt(te) if te else "n/a",
                     f"{tf / te:.2f}" if te else "n/a", f"{frac:.0%}"]
            miss = (te is not None and tf / te > FUSED_TARGET_NUMEXPR) or \
                frac < FUSED_TARGET_BW
            if markdown:
                print(f"| {row} | " + " | ".join(cells) + (" **miss** |" if miss else " |"))
            else:
                print(f"{row:34} " + " ".join(f"{c:>10}" for c in cells)
                      + ("  (misses target)" if miss else ""))
            if not fused.explain(*gargs).startswith("fused"):
                print(f"  note: {fused.explain(*gargs)}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="smaller sizes, fewer steps")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("--only", metavar="TEXT", help="only the rows whose name contains TEXT")
    p.add_argument("--cpu-time", action="store_true",
                   help="time with the process's CPU time (all its threads) instead of "
                        "the wall clock: steadier on a loaded machine, and fair with one "
                        "thread each (OPENBLAS_NUM_THREADS=1 GPUARR_NUM_THREADS=1)")
    p.add_argument("--no-fused", action="store_true",
                   help="leave out the table of fused chains against numexpr")
    args = p.parse_args()
    global _clock
    if args.cpu_time:
        _clock = time.process_time
    load0 = os.getloadavg()
    bw1 = copy_bandwidth(3)
    bwn = copy_bandwidth(3, os.cpu_count() or 1)
    bw = max(bw1, bwn)
    blas = ga.blas_info()
    print(f"gpuarr {ga.__version__}, numpy {np.__version__}; {machine()}")
    print(f"copy bandwidth (read + write): {bw1 / 1e9:.1f} GB/s on one core, "
          f"{bwn / 1e9:.1f} GB/s on all; gpuarr BLAS: "
          f"{os.path.basename(blas['path']) if blas else 'portable kernel'}")
    print(f"load average before: {load0[0]:.2f}")
    if args.markdown:
        print("\n| row | gpuarr | numpy | ratio | target | of copy bw |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
    else:
        print(f"{'row':34} {'gpuarr':>10} {'numpy':>10} {'ratio':>7} {'target':>7} "
              f"{'of copy bw':>10}")
    for name, kind, fa, fn, nbytes in rows(args.quick):
        if args.only and args.only not in name:
            continue
        try:
            if kind == "profiled":
                ta, tn = compare_profiled(fa, args.rounds)
            else:
                with ga.no_grad() if kind == "no_grad" else contextlib.nullcontext():
                    ta, tn = compare(fa, fn, args.rounds)
        except Exception as e:  # a missing operation should not hide the other rows
            print(f"{name:34} failed: {type(e).__name__}: {e}")
            continue
        ratio = ta / tn
        frac = f"{nbytes / ta / bw:.0%}" if nbytes else ""
        if kind in ("record", "profiled"):  # an absolute target: microseconds over the second column
            target, ratio, frac = RECORD_TARGET_US, (ta - tn) * 1e6, "us over"
        else:
            target = TARGETS[kind]
        flag = "" if ratio <= target else "  (misses target)"
        if args.markdown:
            flag = "" if ratio <= target else " **miss**"
            print(f"| {name} | {_fmt(ta)} | {_fmt(tn)} | {ratio:.2f}{flag} | {target:.2f} | "
                  f"{frac} |")
        else:
            print(f"{name:34} {ta * 1e6:9.2f}us {tn * 1e6:9.2f}us {ratio:7.2f} "
                  f"{target:7.2f} {frac:>10}{flag}")
    if not args.only or any(w in args.only for w in ("MLP", "train", "peers")):
        peers = mlp_step_peers(args.rounds)
        base = peers["numpy"]
        print("\nMLP 784-256-10 step b128 (SGD), per step; ratio to NumPy by hand")
        for k, t in peers.items():
            print(f"  {k:16} " + (f"{t * 1e6:9.1f} us {t / base:6.2f}" if t is not None
                                    else "not installed (pip install jax)"))
        if peers["jax jit"] is not None:
            print(f"  gpuarr.capture / jax jit: {peers['gpuarr.capture'] / peers['jax jit']:.2f}"
                  f" (target 1.00); gpuarr / numpy: {peers['gpuarr'] / base:.2f} (target 1.00)")
    if not args.no_fused:
        fused_table(args.quick, args.rounds, bw, args.only, args.markdown)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


# autograd (issue 23): with grad mode off, an operand that requires grad costs what the
# tiny rows cost; recording an operation costs at most 1 us over the same operation
# unrecorded ("record" rows print that difference, in us, in the ratio column)
TARGETS["no_grad"] = 1.0
RECORD_TARGET_US = 1.0


def _fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    return f"{seconds * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
