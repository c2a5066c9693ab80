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
import re
import sys
import time

import numpy as np
import pytest

import gpuarr
from conftest import DEVICES, NUMPY_WINDOWS_REASON, annex_g_oracle

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
    if n.size > 1 and tuple(g.strides) != n.strides:
        # The layouts differ (NumPy's ufunc outputs keep their inputs' order, gpuarr's
        # are C order), so reshape may give a view on one side and a copy on the
        # other, both correct: writes through it would then differ. Take another view.
        return g.T, n.T, ".T"
    return g.reshape(-1), n.reshape(-1), "reshape(-1)"


def _index_array(rng, pool, dev, d, unique):
    """An integer index array for an axis of length d: random values (of a random
    integer dtype), or a 1-D integer member of the pool, which may share memory with
    the array it indexes. Mostly in range; with unique=True no element is written twice
    (which of two writes wins is unspecified on a GPU)."""
    def fits(v):
        if not ((v >= -d) & (v < d)).all():
            return False
        # in int64: d may not fit v's dtype (int8 values, an axis of 225: NumPy 2 raises
        # OverflowError for v % 225; CI seed 1795685529)
        w = v.astype(np.int64)
        return not unique or len(set((w % d).tolist())) == v.size if d else v.size == 0
    cands = [(g, n) for g, n in pool if n.dtype.kind in "iu" and n.ndim == 1 and fits(n)]
    if cands and rng.random() < 0.3:
        g, n = rng.choice(cands)
        return g, n.copy(), "a pool member"  # the oracle reads the indices first
    if unique:
        vals = [v - d if rng.random() < 0.3 else v
                for v in rng.sample(range(d), rng.randint(0, min(d, 4)))]
    else:
        vals = [rng.randrange(-d, d) for _ in range(rng.randint(0, 4))] if d else []
    if rng.random() < 0.05:
        vals.append(rng.choice([d, -d - 1]))  # out of range: both must raise
    dtype = rng.choice(["int64", "int64", "int32", "int8", "uint16"])
    if dtype == "uint16":
        vals = [v if v >= 0 else v + d if v >= -d else d for v in vals]
    idx = np.array(vals, dtype=dtype)
    return gpuarr.asarray(idx, device=dev), idx, f"{dtype}{vals}"


def _refused(fn):
    """gpuarr must refuse too (on a GPU a bad index is reported at the next wait)."""
    with pytest.raises(Exception):
        fn()
        gpuarr.synchronize()


def _array_index_step(rng, pool, dev, log, i, g, n, write):
    if n.ndim == 0:
        return
    ax = rng.randrange(n.ndim)
    gi, ni, what = _index_array(rng, pool, dev, n.shape[ax], unique=write)
    pre = (slice(None),) * ax
    gk, nk = pre + (gi,), pre + (ni,)
    d = n.shape[ax]
    # An index out of range is refused even when the result is empty: gpuarr follows
    # newer NumPy there (NumPy 2.2, the floor CI tests, only warns), so the oracle is
    # the rule, not the NumPy under test.
    iv = ni.astype(np.int64)
    bad = bool(((iv < -d) | (iv >= d)).any())
    if not write:
        log.append(f"#{i}[{ax} * ':', {what}]")
        if bad:
            _refused(lambda: g[gk])
            return
        try:
            want = n[nk]
        except Exception:
            _refused(lambda: g[gk])
            return
        got = g[gk]
        _close(got, want, log[-1])
        pool.append((got, want.copy()))
        return
    try:
        shape = n[nk].shape
    except Exception:
        shape = ()
    if rng.random() < 0.4:
        gv = nv = rng.randint(-4, 8)
    else:
        nd = rng.randint(0, len(shape))
        vals = np.array([rng.randint(-4, 8) for _ in range(int(np.prod(shape[nd:])))])
        nv = vals.reshape(shape[nd:]).astype(rng.choice(DTYPES))
        if n.dtype.kind == "u" and nv.dtype.kind in "fc":
            # a float outside the target's range converts by gpuarr's rule (NumPy's x86
            # scalar results, ga_elementwise_math.h) and NumPy's SIMD loops may differ: keep them inside (the
            # values are -4..8, so only negatives into unsigned types are outside)
            nv = np.where(nv.real < 0, -nv, nv).astype(nv.dtype)
        gv = gpuarr.asarray(nv, device=dev)
        nv = nv.copy()
    log.append(f"#{i}[{ax} * ':', {what}] = {type(gv).__name__} {np.shape(nv)}")
    if bad:
        # refused at once (the CPU; a value that does not fit; an empty scatter, which
        # never reaches the device), or queued on a GPU, where it fails: then
        # synchronize() raises it and g's storage is failed
        try:
            g[gk] = gv
            queued = True
        except Exception:
            queued = False
        if queued:
            assert dev != gpuarr.cpu(), log[-1]
            with pytest.raises(IndexError, match="is out of bounds"):
                gpuarr.synchronize()
        _drop_failed(rng, pool, g, queued, log)
        return
    with np.errstate(all="ignore"):
        try:
            n[nk] = nv
        except Exception:
            _refused(lambda: g.__setitem__(gk, gv))
            _resync(pool)
            return
    g[gk] = gv
    _resync_check(pool, log)


def _mask_step(rng, pool, dev, log, i, g, n):
    if n.ndim == 0:
        return
    if n.dtype.kind in "iuf" and rng.random() < 0.4:
        gm, nm, what = gpuarr.greater(g, 1), n > 1, "#i > 1"  # a mask computed on the device
    else:
        k = rng.randint(1, n.ndim)
        nm = np.array([rng.random() < 0.5 for _ in range(int(np.prod(n.shape[:k])))],
                      dtype=bool).reshape(n.shape[:k])
        gm, what = gpuarr.asarray(nm, device=dev), f"mask{nm.shape}"
    log.append(f"#{i}[{what}]")
    want = n[nm]
    got = g[gm]
    _close(got, want, log[-1])
    pool.append((got, want.copy()))


def _out_step(rng, pool, dev, log, i, g, n):
    j = rng.randrange(len(pool))
    g2, n2 = pool[j]
    name = rng.choice(BINARY)
    with np.errstate(all="ignore"):
        try:
            shape = np.asarray(getattr(np, name)(n, n2)).shape
        except Exception:
            return  # refused without out=: the binary step checks that
    cands = [k for k, (_, m) in enumerate(pool) if m.shape == shape]
    if cands and rng.random() < 0.7:
        k = rng.choice(cands)  # may be #i or #j, or share memory with them
        go, no = pool[k]
    else:
        dtype = rng.choice(DTYPES)
        no = np.zeros(shape, dtype=dtype)
        go = gpuarr.asarray(no, device=dev)
        no = no.copy()
        pool.append((go, no))
        k = len(pool) - 1
    log.append(f"{name}(#{i}, #{j}, out=#{k})")
    with np.errstate(all="ignore"):
        try:
            getattr(np, name)(n, n2, out=no)
        except Exception:
            _refused(lambda: getattr(gpuarr, name)(g, g2, out=go))
            _resync(pool)
            return
    got = getattr(gpuarr, name)(g, g2, out=go)
    assert got is go or got.shape == go.shape, log[-1]
    _resync_check(pool, log)


def _one_step(rng, pool, dev, log):
    op = rng.random()
    i = rng.randrange(len(pool))
    g, n = pool[i]
    if rng.random() < 0.06:
        _failed_work_step(rng, pool, dev, log, i, g, n)
    elif op < 0.08:
        _array_index_step(rng, pool, dev, log, i, g, n, write=False)
    elif op < 0.16:
        _array_index_step(rng, pool, dev, log, i, g, n, write=True)
    elif op < 0.22:
        _mask_step(rng, pool, dev, log, i, g, n)
    elif op < 0.30:
        _out_step(rng, pool, dev, log, i, g, n)
    elif op < 0.38:
        rng.choice([_along_axis_step, _sorter_step, _ufunc_dtype_step,
                    _complex_special_step])(rng, pool, dev, log, i, g, n)
    else:
        _old_step(rng, pool, dev, log, 0.30 + (op - 0.38) * 0.70 / 0.62, i, g, n)


# --- issue 31's corners: per-axis index arrays, sorter=, ufunc out=/dtype=, complex
# special values --------------------------------------------------------------------

def _along_axis_step(rng, pool, dev, log, i, g, n):
    """take_along_axis: each index is checked against its own axis (one that would be
    in range as a flat index into x must still raise)."""
    if n.ndim == 0:
        return
    axis = rng.randrange(n.ndim)
    d = n.shape[axis]
    shape = list(n.shape)
    shape[axis] = rng.randint(0, 3)
    vals = [rng.randrange(-d, d) if d else 0 for _ in range(int(np.prod(shape)))]
    if vals and rng.random() < 0.3:
        vals[rng.randrange(len(vals))] = rng.choice([d, d + 1, -d - 1])
    idx = np.array(vals, dtype=rng.choice(["int64", "int32", "int8"])).reshape(shape)
    log.append(f"take_along_axis(#{i}, {idx.dtype}{idx.tolist()}, axis={axis})")
    gi = gpuarr.asarray(idx, device=dev)
    try:
        want = np.take_along_axis(n, idx, axis=axis)
    except IndexError:
        _refused(lambda: gpuarr.take_along_axis(g, gi, axis=axis).numpy())
        return
    _close(gpuarr.take_along_axis(g, gi, axis=axis), want, log[-1])


def _sorter_step(rng, pool, dev, log, i, g, n):
    """searchsorted with sorter= (sometimes of the wrong length) and Python scalars
    beyond the array's integer range."""
    if n.ndim != 1 or n.dtype.kind not in "iuf":
        return
    order = np.argsort(n, kind="stable")
    if rng.random() < 0.2 and n.size:
        order = order[: rng.randrange(n.size)]  # too short: both refuse
    side = rng.choice(["left", "right"])
    v = rng.choice([rng.randint(-5, 9), 300, -300, 2**40])
    log.append(f"searchsorted(#{i}, {v}, side={side}, sorter={order.tolist()})")
    gs = gpuarr.asarray(order.astype(np.int64), device=dev)
    try:
        want = np.searchsorted(n, v, side=side, sorter=order)
    except (ValueError, OverflowError):
        _refused(lambda: gpuarr.searchsorted(g, v, side=side, sorter=gs))
        return
    got = gpuarr.searchsorted(g, v, side=side, sorter=gs)
    assert int(got) == int(want), log[-1]


def _ufunc_dtype_step(rng, pool, dev, log, i, g, n):
    """np.<ufunc>(a, b, out=, dtype=) through NumPy's protocol: the same loop, or the
    same refusal (casting='same_kind' on inputs and output)."""
    j = rng.randrange(len(pool))
    g2, n2 = pool[j]
    name = rng.choice(["add", "multiply", "subtract", "maximum"])
    dtype = rng.choice(["int8", "int64", "uint8", "float32", "float64", "complex64"])
    with np.errstate(all="ignore"):
        try:
            shape = np.asarray(getattr(np, name)(n, n2)).shape
        except Exception:
            return
    odt = rng.choice(DTYPES)
    no = np.zeros(shape, dtype=odt)
    go = gpuarr.asarray(no, device=dev)
    use_out = rng.random() < 0.7
    log.append(f"np.{name}(#{i}, #{j}, dtype={dtype}"
               + (f", out={odt}{shape})" if use_out else ")"))
    kw = {"dtype": dtype, **({"out": no} if use_out else {})}
    with np.errstate(all="ignore"):
        try:
            want = getattr(np, name)(n, n2, **kw)
        except (TypeError, ValueError, OverflowError):
            _refused(lambda: getattr(np, name)(g, g2, dtype=dtype,
                                               **({"out": go} if use_out else {})))
            return
        got = getattr(np, name)(g, g2, dtype=dtype, **({"out": go} if use_out else {}))
    if use_out:
        assert got is go, log[-1]
    _close(got, want, log[-1])


_SPECIAL = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan]
_CUNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin",
           "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "log1p", "expm1",
           "reciprocal", "sign", "square"]


def _same_special(got, want, what):
    """Equal values with the same signs of zero and infinity; any NaN matches NaN; finite
    nonzero values within the dtype's tolerance."""
    tol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
    # a finite part is compared relative to the value's magnitude: the small imaginary
    # part of a large result carries the rounding of the whole (pow on emulated CUDA)
    mag = np.abs(want.astype(np.complex128)).ravel().tolist()
    for part in ("real", "imag"):
        a, b = getattr(got, part), getattr(want, part)
        for x, y, m in zip(a.ravel().tolist(), b.ravel().tolist(), mag):
            if x != x and y != y:
                continue
            if y == 0 or np.isinf(y) or x == 0:
                assert x == y and np.signbit(x) == np.signbit(y), f"{what}: {got} != {want}"
            else:
                scale = abs(y) if np.isinf(m) or m != m else max(abs(y), m)
                assert abs(x - y) <= tol * scale, f"{what}: {got} != {want}"


def _complex_special_step(rng, pool, dev, log, i, g, n):
    """A complex function at infinities, NaN and signed zeros (C99 Annex G, as NumPy
    gives them), on this sequence's device."""
    dtype = rng.choice(["complex64", "complex128"])
    z = np.array([complex(rng.choice(_SPECIAL), rng.choice(_SPECIAL))
                  for _ in range(rng.randint(1, 6))], dtype=dtype)
    name = rng.choice(_CUNARY + ["pow"])
    log.append(f"{name}({z.tolist()})")
    gz = gpuarr.asarray(z, device=dev)
    with np.errstate(all="ignore"):
        if name == "pow":
            w = np.array([complex(rng.choice(_SPECIAL), rng.choice(_SPECIAL))
                          for _ in range(z.size)], dtype=dtype)
            log[-1] += f" ** {w.tolist()}"
            want, got = z ** w, gz ** gpuarr.asarray(w, device=dev)
        else:
            want, got = getattr(np, name)(z), getattr(gpuarr, name)(gz)
            if name == "expm1":
                # Annex G has no cexpm1: at a non-finite part or a zero, exp(z) - 1 from
                # Annex G's exp (the array API's values; tests/core/test_numpy_corners.py)
                want = np.where(~np.isfinite(z) | (z == 0), np.exp(z) - 1, want)
            want = annex_g_oracle(name, z, want)
    _same_special(got.numpy(), want, log[-1])


def _old_step(rng, pool, dev, log, op, i, g, n):
    op = (op - 0.30) / 0.70  # the earlier operations, in their earlier proportions
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
        got = getattr(gpuarr, name)(g, axis=axis)
        if name == "sum" and n.dtype.kind in "fc" and n.size:
            # NumPy sums float32 terms in float32 (one by one below 8 terms), gpuarr in
            # double (CPU) or compensated (GPU): where terms cancel, the oracle's own
            # rounding error, up to terms * eps * sum|x|, exceeds any relative
            # tolerance (seed 1795684177: the column [-2^32, 2, 2^32, -8, 7] gave gpuarr
            # the exact +1, NumPy -1). So the answers may differ by that much, no more.
            terms = n.size if axis is None else n.shape[axis]
            mag = np.sum(np.abs(n.astype(np.complex128 if n.dtype.kind == "c" else
                                         np.float64)), axis=axis)
            slack = 2 * terms * np.finfo(n.dtype).eps * mag
            gv = got.numpy()
            assert gv.shape == want.shape and gv.dtype == want.dtype, log[-1]
            err = np.abs(gv.astype(np.complex128) - np.asarray(want, np.complex128))
            same = (gv == want) | (np.isnan(gv) & np.isnan(want))  # infinities, NaN
            bad = ~((err <= slack + 1e-5 * np.abs(want) + 1e-5) | same)
            assert not np.any(bad), (log[-1], gv, want, slack)
            return
        _close(got, want, log[-1])
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
            r = n2.real.astype(np.float64)  # float32 would round the bounds
            if not np.all((r >= info.min) & (r < float(info.max) + 1.0)):
                return  # beyond the range: NumPy's SIMD loops differ from its scalar rule
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


# --- failed queued work followed by reads and further use (docs/DESIGN.md, "Failed
# queued work"): on a GPU a gather or scatter with an out-of-range index in a device
# index array fails after it was queued; its result, and everything computed from it,
# must raise the original IndexError when read (never read as data), unrelated arrays
# must read as before, and synchronize() must raise each failure not yet raised, once.
# The CPU raises at the operation.

BAD = re.compile(r"index (-?\d+) is out of bounds for axis (\d+ )?with size \d+")


def _raises_original(g, bad, what):
    """Reading g raises the IndexError of the failed operation that queued index
    `bad` (any of them, when a result depends on several), naming this file's line."""
    with pytest.raises(IndexError) as e:
        g.numpy()
    m = BAD.search(str(e.value))
    assert m and int(m.group(1)) in bad, (what, str(e.value), bad)
    assert "queued at" in str(e.value) and "test_fuzz_differential.py:" in str(e.value), (
        what, str(e.value))


def _drop_failed(rng, pool, target, queued, log):
    """After a refused write into `target`: when it was queued on a GPU, the members
    sharing its storage raise when read (the write's destination is failed) and leave
    the pool; every other member still agrees with NumPy."""
    sid = target._storage_id
    keep = []
    for idx, (g, n) in enumerate(pool):
        if queued and g._storage_id == sid:
            with pytest.raises(IndexError, match="is out of bounds"):
                g.numpy()
        else:
            _close(g, n, f"#{idx} after {log[-1]}")
            keep.append((g, n))
    pool[:] = keep or [_new(rng, g.device)[:2]]


def _further_use(rng, pool, y, dev, log):
    """One use of the failed result y: (a result that depends on it, whether the use
    itself raised the failure). An in-place write into a pool member gives that
    member, which then fails."""
    if y.ndim == 0:
        y = y.reshape(1)
    kind = rng.choice(["binary", "reduce", "view", "astype", "matmul", "where", "move",
                       "cumsum", "inplace", "mask", "chain"])
    log.append(f"failed use: {kind}")
    if kind == "binary":
        g2, _ = rng.choice(pool)
        try:
            return gpuarr.add(y, g2), False
        except (ValueError, TypeError):  # shapes or dtypes that do not combine
            return y * 2, False
    if kind == "reduce":
        if y.size == 0 or rng.random() < 0.5:  # max has no identity for empty y
            return gpuarr.sum(y), False
        return gpuarr.max(y.reshape(-1)), False
    if kind == "view":
        v = rng.choice([y.T, y[::-1], y.reshape(-1), gpuarr.expand_dims(y, axis=0)])
        return v, False
    if kind == "astype":
        return y.astype(rng.choice(["float64", "int32", "bool", "complex64"])), False
    if kind == "matmul":
        v = y.reshape(-1).astype("float64")
        return v @ gpuarr.ones(v.shape[0], dtype="float64", device=v.device), False
    if kind == "where":
        return gpuarr.where(y.astype("bool"), y, y), False
    if kind == "move":
        others = [d for d in DEVICES if d != dev and d != gpuarr.cpu()]
        return y.to(rng.choice(others)) if others else y.copy(), False
    if kind == "cumsum":
        return gpuarr.cumsum(y.reshape(-1)), False
    if kind == "mask" and y.size == 0:
        return y + 0, False  # an empty mask needs no count: nothing is read back
    if kind == "mask":
        # a mask computed from a failed result: the count read back raises
        with pytest.raises(IndexError, match="is out of bounds"):
            y.reshape(-1)[y.reshape(-1).astype("bool")]
        return y, True
    if kind == "chain":
        return gpuarr.exp(gpuarr.abs(y.astype("float32")) * 0) + 1, False
    # in place into a pool member of the same shape and dtype: it fails with y
    cands = [k for k, (g2, n2) in enumerate(pool)
             if n2.shape == tuple(y.shape) and str(g2.dtype) == str(y.dtype)
             and g2._writeable and g2.device == y.device]
    if not cands:
        return y + 0, False
    k = rng.choice(cands)
    g2 = pool[k][0]
    g2 += y
    return g2, False


def _failed_work_step(rng, pool, dev, log, i, g, n):
    """1-3 gathers/scatters with an out-of-range device index, further use of their
    results, reads of unrelated arrays, then synchronize()."""
    if n.ndim == 0 or n.size == 0:
        return
    ax = rng.randrange(n.ndim)
    d = n.shape[ax]
    pre = (slice(None),) * ax
    failed = []  # (result or destination, the bad indices it depends on)
    bads, raised = set(), set()
    for _ in range(rng.randint(1, 3)):
        b = rng.choice([d, d + 7, -d - 1, 10 ** 6])
        ok = [rng.randrange(-d, d) for _ in range(rng.randint(0, 2))]
        vals = ok + [b]
        rng.shuffle(vals)
        gi = gpuarr.asarray(np.array(vals, dtype=rng.choice(["int64", "int32"])),
                            device=dev)
        write = rng.random() < 0.3 and g._writeable
        log.append(f"failed {'scatter' if write else 'gather'} #{i}[{ax} * ':', {vals}]")
        if dev == gpuarr.cpu():
            # the CPU raises at the operation, and nothing is marked
            with pytest.raises(IndexError, match="is out of bounds"):
                if write:
                    g[pre + (gi,)] = 1
                else:
                    gpuarr.take(g, gi, axis=ax) if rng.random() < 0.5 else g[pre + (gi,)]
            _resync(pool)
            return
        # g's storage may have failed already in this step (an earlier scatter): a
        # result depends on every failure behind its inputs, so any may show
        bads.add(b)
        if write:
            g[pre + (gi,)] = 1  # queued: writes nothing, fails g's storage
            failed.append((g, set(bads)))
        else:
            y = gpuarr.take(g, gi, axis=ax) if rng.random() < 0.5 else g[pre + (gi,)]
            failed.append((y, set(bads)))
    # further use: new results depending on failed ones, some in place into the pool
    for _ in range(rng.randint(0, 3)):
        y, _ = rng.choice(failed)
        r, now = _further_use(rng, pool, y, dev, log)
        raised |= bads if now else set()
        # it may depend on more than y's failure (a failed pool member beside it): a
        # read raises the earliest, so any of the step's bad indices may show
        failed.append((r, set(bads)))
    # unrelated members read as before (unless they share a failed storage)
    dead = {f._storage_id for f, _ in failed}
    for idx, (gm, nm) in enumerate(pool):
        if gm._storage_id not in dead:
            _close(gm, nm, f"#{idx}, unrelated to failed work, after {log[-1]}")
    for f, b in rng.sample(failed, rng.randint(0, len(failed))):
        _raises_original(f, b, log[-1])
        _raises_original(f, b, log[-1])  # every read, not once
        raised |= b
    # synchronize() raises the failures no read raised, each once; then nothing
    try:
        gpuarr.synchronize()
        left = set()
    except IndexError as e:
        left = {int(m.group(1)) for m in BAD.finditer(str(e))}
    assert left <= bads, (log[-1], left, bads)
    if not raised:
        assert left == bads, ("synchronize() must report every failure", log[-1], left,
                              bads)
    gpuarr.synchronize()  # each was reported once: nothing is left
    # the pool loses every member that shares a failed storage (reading them raises)
    keep = []
    for gm, nm in pool:
        if gm._storage_id in dead:
            with pytest.raises(IndexError, match="is out of bounds"):
                gm.numpy()
        else:
            keep.append((gm, nm))
    pool[:] = keep or [_new(rng, dev)[:2]]


def _resync(pool):
    """After a refused write the two sides must still agree."""
    for g, n in pool:
        _close(g, n, "after a refused write")


def _resync_check(pool, log):
    for idx, (g, n) in enumerate(pool):
        _close(g, n, f"#{idx} after {log[-1]}")


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
# its complex steps draw NaN beside infinities, where NumPy on Windows is no oracle
@pytest.mark.skipif(sys.platform == "win32", reason=NUMPY_WINDOWS_REASON)
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
