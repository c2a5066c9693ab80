"""One arithmetic on every device (docs/DESIGN.md, "One arithmetic"): the shared element
math of ga_elementwise_math.h rounds every product and every sum on its own, on the CPU (built
with -ffp-contract=off), on simulated GPUs (the CPU's kernels), on emulated CUDA (the
kernels compiled for the host with -ffp-contract=off) and on a GPU (nvcc -fmad=false),
so complex products and quotients have the same bits everywhere.

Why it matters: with a*b - c*d contracted into fma(a, b, -c*d), the product z * conj(z)
gets a tiny nonzero imaginary part (the rounding error of c*d), and a GPU disagrees
with the CPU in the last bit. The references below are built from NumPy's real ufuncs,
each of which rounds once: the unfused formula, exactly. (NumPy's own complex multiply
may use FMA instructions on some CPUs, so it is not the reference.)

tests/tooling/test_cuda_report.py checks the GPU side statically: no FFMA/DFMA in the
complex multiply and divide kernels of the real plugin's machine code.
"""
import numpy as np
import pytest

import gpuarr


def _devices():
    return [gpuarr.cpu()] + [gpuarr.gpu(i) for i in range(gpuarr.num_gpus())]


@pytest.fixture(params=_devices(), ids=repr)
def device(request):
    return request.param


def _operands(dtype, n=4096, seed=29):
    r = np.random.default_rng(seed)
    real = np.float32 if dtype == "complex64" else np.float64

    def one():
        # mixed magnitudes: products whose rounding errors an FMA would expose
        mag = np.exp(r.uniform(-20, 20, n))
        return (r.standard_normal(n) * mag).astype(real), (r.standard_normal(n) *
                                                         mag).astype(real)
    ar, ai = one()
    br, bi = one()
    return ar, ai, br, bi


def _complex(re, im, dtype):
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out


def _bits(a):
    return a.view(np.uint64 if a.dtype == np.complex128 else np.uint32)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_product_is_the_unfused_formula_on_every_device(device, dtype):
    ar, ai, br, bi = _operands(dtype)
    want = _complex(ar * br - ai * bi, ar * bi + ai * br, dtype)
    z = gpuarr.asarray(_complex(ar, ai, dtype), device=device)
    w = gpuarr.asarray(_complex(br, bi, dtype), device=device)
    got = (z * w).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_z_times_its_conjugate_is_real_on_every_device(device, dtype):
    ar, ai, _, _ = _operands(dtype, seed=30)
    z = gpuarr.asarray(_complex(ar, ai, dtype), device=device)
    p = (z * gpuarr.conj(z)).numpy()
    assert np.all(p.imag == 0), p.imag[p.imag != 0][:5]
    np.testing.assert_array_equal(p.real, ar * ar + ai * ai)


def _smith(ar, ai, br, bi):
    """ga_cdiv's Smith division, one rounding per operation (NumPy's real ufuncs):
    times the reciprocal of the scaled denominator, as NumPy's own complex divide."""
    with np.errstate(all="ignore"):
        big = np.abs(br) >= np.abs(bi)
        r1 = bi / br
        s1 = 1 / (br + bi * r1)
        r2 = br / bi
        s2 = 1 / (br * r2 + bi)
        re = np.where(big, (ar + ai * r1) * s1, (ar * r2 + ai) * s2)
        im = np.where(big, (ai - ar * r1) * s1, (ai * r2 - ar) * s2)
    return re, im


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_quotient_is_the_unfused_formula_on_every_device(device, dtype):
    ar, ai, br, bi = _operands(dtype, seed=31)
    re, im = _smith(ar, ai, br, bi)
    z = gpuarr.asarray(_complex(ar, ai, dtype), device=device)
    w = gpuarr.asarray(_complex(br, bi, dtype), device=device)
    with np.errstate(all="ignore"):
        got = (z / w).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(_complex(re, im, dtype)))


def test_every_device_gives_the_cpus_bits_for_a_complex_product_chain():
    # a few multiplies in a row: any fused step on any device changes the bits
    ar, ai, br, bi = _operands("complex128", n=1000, seed=32)
    z0, w0 = _complex(ar, ai, "complex128"), _complex(br, bi, "complex128") * 1e-3
    results = []
    for d in _devices():
        z, w = gpuarr.asarray(z0, device=d), gpuarr.asarray(w0, device=d)
        results.append((d, ((z * w) * (z - w) * gpuarr.conj(w)).numpy()))
    for d, r in results[1:]:
        np.testing.assert_array_equal(_bits(r), _bits(results[0][1]), err_msg=repr(d))
