"""A differential fuzzer: random operation sequences over random views, dtypes and
devices, each step done with gpuarr and with NumPy (the oracle) and compared.

Seeded and bounded in time:
- GPUARR_FUZZ_SEED: the seed (default 0, so a local run repeats; CI passes a new one
  each run). A failure prints the seed and the step that failed: rerun with it.
- GPUARR_FUZZ_SECONDS: the time budget (default 10 s, since the suite runs in several
  modes; CI's fuzz step gives it more).
"""
import os
import random
import time

import numpy as np
import pytest

import gpuarr
from conftest import DEVICES

SEED = int(os.environ.get("GPUARR_FUZZ_SEED", "0"))
SECONDS = float(os.environ.get("GPUARR_FUZZ_SECONDS", "10"))

DTYPES = ["bool", "int8", "int32", "int64", "uint8", "uint32", "float32", "float64",
          "complex64"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "equal", "less",
          "logical_and", "bitwise_xor"]
REDUCE = ["sum", "max", "min", "any", "all"]


class Step(Exception):
    pass


def _close(g, n, what):
    got = g.numpy() if isinstance(g, gpuarr.Array) else np.asarray(g)
    want = np.asarray(n)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert str(got.dtype) == str(want.dtype), f"{what}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind in "fc":
        tol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _new(rng, dev):
    nd = rng.choice([0, 1, 1, 2, 2, 3])
    shape = tuple(rng.choice([0, 1, 2, 3, 4, 5]) for _ in range(nd))
    dtype = rng.choice(DTYPES)
    vals = np.array([rng.randint(-4, 9) for _ in range(int(np.prod(shape)))])
    n = vals.reshape(shape).astype(dtype)
    return gpuarr.asarray(n, device=dev), n.copy(), f"asarray({dtype}{shape})"


def _key(rng, shape):
    key = []
    for d in shape:
        r = rng.random()
        if r < 0.2 and d > 0:
            key.append(rng.randrange(-d, d))
        else:
            start = rng.choice([None, 0, 1, -1, d])
            stop = rng.choice([None, 0, 2, -1, d])
            step = rng.choice([None, 1, 2, -1, -2, 3])
            key.append(slice(start, stop, step))
    return tuple(key)


def _view(rng, g, n):
    """A random view of both, the same way."""
    r = rng.random()
    if r < 0.45 and n.ndim > 0:
        k = _key(rng, n.shape)
        if not any(isinstance(x, slice) for x in k):
            k = k[:-1] + (slice(None),)  # all integers: NumPy gives a scalar, not a view
        return g[k], n[k], f"[{k}]"
    if r < 0.6:
        return g.T, n.T, ".T"
    if r < 0.7 and n.ndim > 0:
        ax = rng.randrange(n.ndim)
        return gpuarr.flip(g, axis=ax), np.flip(n, axis=ax), f"flip({ax})"
    if r < 0.8:
        ax = rng.randrange(n.ndim + 1)
        return gpuarr.expand_dims(g, axis=ax), np.expand_dims(n, ax), f"expand_dims({ax})"
    if r < 0.9:
        shape = (rng.choice([1, 2, 3]),) + n.shape
        return gpuarr.broadcast_to(g, shape), np.broadcast_to(n, shape), f"broadcast_to({shape})"
    return g.reshape(-1), n.reshape(-1), "reshape(-1)"


def _one_step(rng, pool, dev, log):
    op = rng.random()
    i = rng.randrange(len(pool))
    g, n = pool[i]
    if op < 0.3:
        gv, nv, what = _view(rng, g, n)
        log.append(f"view #{i}{what}")
        _close(gv, nv, log[-1])
        pool.append((gv, nv))
    elif op < 0.5:
        j = rng.randrange(len(pool))
        name = rng.choice(BINARY)
        g2, n2 = pool[j]
        log.append(f"{name}(#{i}, #{j})")
        with np.errstate(all="ignore"):
            try:
                want = np.asarray(getattr(np, name)(n, n2))
            except Exception:
                with pytest.raises(Exception):
                    getattr(gpuarr, name)(g, g2)
                return
        got = getattr(gpuarr, name)(g, g2)
        _close(got, want, log[-1])
        pool.append((got, want))
    elif op < 0.6:
        name = rng.choice(REDUCE)
        axis = None if n.ndim == 0 or rng.random() < 0.5 else rng.randrange(n.ndim)
        log.append(f"{name}(#{i}, axis={axis})")
        try:
            want = getattr(np, name)(n, axis=axis)
        except Exception:
            with pytest.raises(Exception):
                getattr(gpuarr, name)(g, axis=axis)
            return
        if n.dtype.kind in "iub" and name == "sum":
            return  # NumPy sums small ints in the platform int; gpuarr follows the API
        _close(getattr(gpuarr, name)(g, axis=axis), want, log[-1])
    elif op < 0.85:
        # setitem / copyto / in-place between two members of the pool (they may
        # share memory: views of one buffer)
        j = rng.randrange(len(pool))
        g2, n2 = pool[j]
        kind = rng.choice(["setitem", "copyto", "iadd"])
        k = _key(rng, n.shape) if n.ndim and rng.random() < 0.5 else ...
        if k is not ... and not any(isinstance(x, slice) for x in k):
            k = ...  # all integers: NumPy gives a scalar, not a view to write into
        log.append(f"{kind} #{i}[{k}] <- #{j}")
        if n.dtype.kind in "iu" and n2.dtype.kind in "fc":
            info = np.iinfo(n.dtype)
            if not np.all((n2.real >= info.min) & (n2.real <= info.max)):
                return  # a float out of the integer range converts as each device likes
        with np.errstate(all="ignore"):
            try:
                src = n2.copy()  # the oracle reads the source first
                if kind == "setitem":
                    n[k] = src
                elif kind == "copyto":
                    np.copyto(n, src, casting="unsafe")  # x.copyto casts as astype
                else:
                    target = n[k]
                    target += src
            except Exception:
                with pytest.raises(Exception):
                    if kind == "setitem":
                        g[k] = g2
                    elif kind == "copyto":
                        g2.copyto(g)
                    else:
                        t = g[k]
                        t += g2
                _resync(pool)
                return
        if kind == "setitem":
            g[k] = g2
        elif kind == "copyto":
            g2.copyto(g)
        else:
            t = g[k]
            t += g2
        _resync_check(pool, log)
    else:
        pool.append(_new(rng, dev)[:2])
        log.append("new")


def _resync(pool):
    """After a refused write the two sides must still agree."""
    for g, n in pool:
        _close(g, n, "after a refused write")


def _resync_check(pool, log):
    for idx, (g, n) in enumerate(pool):
        _close(g, n, f"#{idx} after {log[-1]}")


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_random_operation_sequences_match_numpy():
    rng = random.Random(SEED)
    deadline = time.monotonic() + SECONDS
    sequences = 0
    while time.monotonic() < deadline:
        sequences += 1
        dev = rng.choice(DEVICES)
        pool = []
        log = []
        for _ in range(2):
            g, n, what = _new(rng, dev)
            pool.append((g, n))
            log.append(what)
        try:
            for _ in range(12):
                try:
                    _one_step(rng, pool, dev, log)
                except Step:
                    pass
        except BaseException as e:
            raise AssertionError(
                f"differential fuzz failed: GPUARR_FUZZ_SEED={SEED} sequence {sequences} "
                f"on {dev!r}\nsteps: {log}") from e
    assert sequences > 0
