"""Complex tan and tanh over a grid of hard arguments, against NumPy, on every device.

The scalar math (csrc/kernels/ga_elementwise_math.h) is one source for the CPU, CUDA
and the emulator. These arguments are the ones where a textbook formula breaks: a huge
imaginary part of tanh (or real part of tan), whose doubled angle overflows to inf
(tanh(1 + 1e308j) was NaN + NaN j), a real part past where sinh^2 overflows, tiny
parts, infinities and NaN (issue 44, item 2).
"""
import sys

import numpy as np
import pytest

import gpuarr

_F64 = [0.0, 1e-310, 1e-300, 1e-8, 0.5, 1.0, 2.5, 20.0, 22.0, 30.0, 300.0, 354.0,
        355.0, 360.0, 372.0, 400.0, 710.0, 800.0, 1e10, 1e20, 1e100, 1e300, 1e308,
        sys.float_info.max, np.inf, np.nan]
_F32 = [0.0, 1e-40, 1e-30, 1e-4, 0.5, 1.0, 2.5, 9.0, 10.0, 20.0, 44.0, 45.0, 50.0,
        88.0, 89.0, 100.0, 1e10, 1e20, 1e30, 1e38, float(np.finfo(np.float32).max),
        np.inf, np.nan]


def _grid(vals, dtype):
    signed = sorted({v for a in vals for v in (a, -a)}, key=lambda v: (v != v, v))
    return np.array([complex(a, b) for a in signed for b in signed], dtype=dtype)


def _mismatches(got, want, rel, tiny):
    """Indices where a part of `got` is not NumPy's: NaN where NumPy has NaN (its sign
    is not specified), the same infinity, a zero of the same sign where NumPy has a
    zero, else within `rel` of NumPy's value (or `tiny`, for results that underflow
    below the normal range, where each library rounds its own way)."""
    bad = []
    for k, (g, w) in enumerate(zip(got.tolist(), want.tolist())):
        for x, y in ((g.real, w.real), (g.imag, w.imag)):
            if np.isnan(x) or np.isnan(y) or np.isinf(x) or np.isinf(y):
                ok = (np.isnan(x) and np.isnan(y)) or x == y
            elif x == 0 and y == 0:
                ok = np.signbit(x) == np.signbit(y)
            else:
                ok = abs(x - y) <= rel * abs(y) + tiny
            if not ok:
                bad.append(k)
                break
    return bad


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["tan", "tanh"])
def test_complex_tan_and_tanh_over_hard_arguments_match_numpy(device, name, dtype):
    z = _grid(_F32 if dtype == "complex64" else _F64, dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
    got = getattr(gpuarr, name)(gpuarr.asarray(z, device=device)).numpy()
    assert got.dtype == want.dtype
    rel, tiny = (2e-5, 1e-37) if dtype == "complex64" else (1e-12, 1e-300)
    bad = _mismatches(got, want, rel, tiny)
    assert not bad, [(z[k], got[k], want[k]) for k in bad[:8]]


@pytest.mark.parametrize("name,z", [("tan", 1e308 + 0j), ("tanh", 1 + 1e308j),
                                    ("tan", -1e308 + 2j), ("tanh", 3e-300 - 1e308j)])
def test_complex_tan_tanh_of_a_huge_finite_part_is_finite_as_numpy(device, name, z):
    want = getattr(np, name)(np.complex128(z))
    got = getattr(gpuarr, name)(gpuarr.asarray(np.array([z]), device=device)).numpy()[0]
    assert np.isfinite(got), got
    assert abs(got - want) <= 1e-12 * abs(want), (got, want)
