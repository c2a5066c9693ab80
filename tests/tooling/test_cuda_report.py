"""The static report of the real CUDA plugin's sm_90 code (tools/cuda_report.py).

No GPU is needed: cuobjdump reads the machine code nvcc produced. The rules checked
here are the ones a GPU engineer would check before running anything: no kernel uses
local memory except libdevice's large-argument trigonometry (register spills are
build errors: -Xptxas=-warn-spills under GPUARR_WERROR), every kernel keeps at least
half of the
multiprocessor's warps resident at the block size it is launched with, and the
contiguous elementwise kernels whose operands are all 2, 4 or 8 bytes wide never load
or store a single byte (typed and 16-byte vector accesses).
"""
from __future__ import annotations

import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import cuda_report  # noqa: E402

DEVICE_MODES = ("GPUARR_SIMULATE_GPUS", "GPUARR_CUDA_EMULATE")

# Elementwise operations whose output is bool (one byte whatever the inputs).
BOOL_OUTPUT = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
               "logical_and", "logical_or", "logical_xor", "logical_not", "isfinite",
               "isinf", "isnan", "signbit", "where"}
WIDE = {"int16", "uint16", "float16", "int32", "uint32", "float32", "int64", "uint64",
        "float64", "complex64"}


def _plugin() -> str:
    import gpuarr

    path = os.path.join(os.path.dirname(gpuarr._core.__file__), "libgpuarr_cuda.so")
    if not os.path.exists(path):
        pytest.skip("the real CUDA plugin (libgpuarr_cuda.so) is not built: build with "
                    "-DGPUARR_CUDA=ON")
    return path


@pytest.fixture(scope="module")
def report():
    if any(os.environ.get(v) for v in DEVICE_MODES):
        pytest.skip("the static report reads the built binary only: it runs once, in the "
                    "no-GPU mode of the suite")
    plugin = _plugin()
    if cuda_report.find_tool("cuobjdump") is None or cuda_report.find_tool("nvdisasm") is None:
        pytest.skip("cuobjdump/nvdisasm not found: pip install nvidia-cuda-cuobjdump "
                    "nvidia-cuda-nvdisasm")
    kernels = cuda_report.analyse(plugin, "sm_90")
    if not kernels:
        pytest.skip("the plugin holds no sm_90 code (built for other architectures)")
    return kernels


def _all_wide(name: str) -> bool:
    """A contiguous elementwise kernel whose operands are all 2, 4 or 8 bytes."""
    m = re.search(r"k_elementwise<ga_f_(\w+)_(\w+?)>", name)
    if m and m.group(1) not in BOOL_OUTPUT and m.group(2) in WIDE:
        return True
    m = re.search(r"k_elementwise<ga_fc_(\w+?)_(\w+)>", name)
    if m and m.group(1) in WIDE and m.group(2) in WIDE:
        return True
    m = re.search(r"k_elementwise<ga_f_bytes<(\d+)> >", name)
    return bool(m and m.group(1) in ("2", "4", "8"))


# Kernels whose math calls libdevice's sin/cos/tan/exp family: for a huge argument
# (|x| > 105615 in float64) its Payne-Hanek reduction keeps a 28- or 40-byte table in
# local memory. That slow path is NVIDIA's own code, taken only for such arguments, and
# not a register spill (ptxas reports 0 spill bytes; the build turns a spill into an
# error). complex exp/pow/expm1/sinh/... reach sin and cos of the imaginary part;
# gpuarr.special's sinc, cosm1 and degree functions (sindg, cosdg, tandg, cotdg) call
# sin, cos or tan;
# k_random's normal draws (distribution 1, a kernel per dtype) call cos.
LIBDEVICE_TRIG = re.compile(
    r"k_elementwise<ga_f_(sin|cos|tan|sinh|cosh|tanh|exp|exp2|expm1|pow|sinc|sindg|cosdg|"
    r"tandg|cotdg|cosm1)_\w+>|"
    r"^void k_random<1, \d+>\(")


def _local(k) -> bool:
    return k.spills or getattr(k, "stack", 0) > 0


# k_fused interprets a program over a register file indexed at run time (k_fused.cu
# says why it is interpreted): the file lives in local memory, by design.
FUSED_INTERPRETER = re.compile(r"^k_fused\(")

# gpuarr.special's functions with loops (series, continued fractions, Newton steps) call
# helpers that are not inlined (kernels/ga_special_erf.h says why: compile time): a call
# keeps a small frame on the stack, and their tens of iterations hold up to ~120
# registers. They are compute-bound (tens of flops per byte), so fewer resident warps
# cost little; they have bounds of their own below instead of the rules for the
# memory-bound kernels. inv_boxcox has no loop, but double pow with a run-time
# exponent (1 / lmbda): 66 registers, compute-bound in the same way.
SPECIAL_HEAVY = re.compile(
    r"k_elementwise<ga_f_(betainc|betaincc|betaincinv|betaln|chdtr|chdtrc|chdtri|digamma|"
    r"erfcx|erfinv|fdtr|fdtrc|fdtri|gammainc|gammaincc|gammainccinv|gammaincinv|gammaln|"
    r"i0|i0e|i1|i1e|log_ndtr|ndtri|stdtr|stdtrit|kl_div|rel_entr|entr|ndtr|erf|erfc|"
    r"gamma|rgamma|loggamma|poch|binom|zeta|riemann_zeta|zetac|inv_boxcox|"
    r"j0|j1|y0|y1|yn|k0|k0e|k1|k1e|exp1|expi|expn|ellipk|ellipkm1|spence|hyp1f1|lpmv)"
    r"_float(32|64)>")


def test_local_memory_only_in_libdevice_trigonometry(report):
    users = [k for k in report if _local(k)]
    bad = [f"{k.name}: {k.stack} B stack, {k.spill_ops} LDL/STL" for k in users
           if not LIBDEVICE_TRIG.search(k.name) and not FUSED_INTERPRETER.search(k.name)
           and not SPECIAL_HEAVY.search(k.name)]
    assert not bad, "kernels using local memory:\n" + "\n".join(bad[:20])
    # the float32 sine is among them (so the pattern still matches what nvcc emits)
    assert any("ga_f_sin_float32" in k.name for k in users), [k.name for k in users][:5]


def test_special_functions_keep_a_small_frame_and_a_quarter_occupancy(report):
    special = [k for k in report if SPECIAL_HEAVY.search(k.name)]
    assert len(special) >= 40, "gpuarr.special's kernels were not found by name"
    # the frame's loads and stores (LDL/STL) are the calls' saves: ptxas's spill warning
    # (an error in this build) says there are no spills
    bad = [f"{k.name}: {k.stack} B stack, {k.local} B local, {k.occupancy:.0%} "
           f"({k.regs} registers)" for k in special
           if k.local > 0 or k.stack > 64 or k.occupancy < 0.25]
    assert not bad, "special-function kernels past their bounds:\n" + "\n".join(bad[:20])


# A rule the plugin does not meet (strict: it fails once met, so the mark goes): the
# trigonometry above still touches local memory on its slow path.
@pytest.mark.xfail(strict=True, reason="libdevice's trig slow path uses local memory "
                   "(29 elementwise kernels and k_random)")
def test_no_kernel_uses_local_memory(report):
    bad = [f"{k.name}: {k.local} B local, {k.spill_ops} LDL/STL" for k in report if _local(k)]
    assert not bad, "kernels using local memory:\n" + "\n".join(bad[:20])


def test_occupancy_at_launch_block_is_at_least_half(report):
    bad = [f"{k.name}: {k.occupancy:.0%} ({k.regs} registers, {k.shared} B shared, "
           f"{k.block} threads)" for k in report
           if k.occupancy < 0.5 and not SPECIAL_HEAVY.search(k.name)]
    assert not bad, "kernels under 50% occupancy on sm_90:\n" + "\n".join(bad[:20])


def test_wide_elementwise_kernels_have_no_byte_accesses(report):
    wide = [k for k in report if _all_wide(k.name)]
    assert len(wide) > 100, "the elementwise kernels were not found by name"
    bad = [f"{k.name}: {k.widths}" for k in wide
           if any(key.endswith(".8") for key in k.widths)]
    assert not bad, "byte-wide global accesses in wide elementwise kernels:\n" + \
        "\n".join(bad[:20])


def test_wide_elementwise_kernels_use_vector_accesses(report):
    add = [k for k in report if "k_elementwise<ga_f_add_float32>" in k.name]
    assert add and add[0].widths.get("LDG.128", 0) >= 2, add[0].widths if add else report[:1]


def test_summary_byte_wide_fraction_is_small(report):
    # byte accesses are left for one-byte elements (bool, int8, uint8) and the
    # off-path restride kernel: 13.2% of all accesses in the sm_90 code
    s = cuda_report.summary(report)
    assert s["byte_wide_fraction"] < 0.15, s


def test_reductions_scans_and_indexing_load_whole_elements(report):
    # element loads are typed (GA_K_ELEMENT): a float32 or int64 input is one 4- or
    # 8-byte load, never four or eight byte loads
    picked = [k for k in report if re.search(
        r"(k_reduce_block|k_reduce_cols|k_scan_cols|k_scan_tile_apply)<ga_rp_\w+<(10|4)\b|"
        r"(k_scan_cols|k_scan_tile_apply)<(10|4),|k_index<(4, 4|8, 8)>", k.name)]
    assert len(picked) > 20, [k.name for k in report if "k_reduce" in k.name][:5]
    bad = [f"{k.name}: {k.widths}" for k in picked
           if sum(n for key, n in k.widths.items() if key.startswith("LD")
                  and key.endswith(".8")) > 0]
    assert not bad, "byte loads in kernels over wide elements:\n" + "\n".join(bad[:20])


def test_float16_kernels_convert_with_the_hardware(report):
    # cuda_fp16.h's conversions (one F2F) instead of ga_half.h's integer code
    add = [k for k in report if "k_elementwise<ga_f_add_float16>" in k.name]
    assert add and add[0].f2f_half >= 1, add[0] if add else "not found"


# ---- issue 29: loads in flight, one arithmetic, the estimated bandwidth per family ----

# (c++filt writes a template's return type, not a plain function's: k_nonzero)
MAIN_LOOPS = re.compile(r"^(void )?(k_reduce_(block|warps|cols)|k_scan_(tiles|warps|cols)|"
                        r"k_radix_(pass|hist)|k_nonzero)\b")


def test_main_loops_keep_four_independent_loads_in_flight(report):
    # the reductions', scans', radix sort's and nonzero's main loops: 4 or more global
    # loads issued before the first of them is used (the finish kernels of split
    # reductions are a tiny second pass and not held to it)
    picked = [k for k in report if MAIN_LOOPS.search(k.name)]
    assert len(picked) > 150, [k.name for k in report if "k_reduce" in k.name][:5]
    bad = [f"{k.name}: {k.in_flight} in flight ({k.loop_loads} loads in the loop)"
           for k in picked if k.in_flight < 4]
    assert not bad, "main loops with fewer than 4 loads in flight:\n" + "\n".join(bad[:20])


def test_every_scan_kernel_keeps_four_loads_in_flight_without_spilling(report):
    # every element dtype into every accumulator, both ops, all three kernels: the
    # conversions that used to pull loads apart (bytes packed in one register,
    # float -> int64 with a branch, whole complex128 elements) included
    picked = [k for k in report if SCANS.search(k.name)]
    assert len(picked) > 300, [k.name for k in picked][:5]
    bad = [f"{k.name}: {k.in_flight} in flight" for k in picked if k.in_flight < 4]
    assert not bad, "scan loops with fewer than 4 loads in flight:\n" + "\n".join(bad[:20])
    assert not [k.name for k in picked if k.spills], "a scan kernel uses local memory"


SCANS = re.compile(r"^(void )?k_scan_")


def test_one_dimensional_gathers_keep_four_loads_in_flight(report):
    picked = [k for k in report if re.search(r"^void k_index<(4, 4|8, 8)>", k.name)]
    assert picked and all(k.in_flight >= 4 for k in picked), \
        [(k.name, k.in_flight) for k in picked]


def test_complex_multiply_and_divide_are_not_fused(report):
    # -fmad=false: a*b - c*d rounds each product, as on the CPU and the emulator
    # (tests/core/test_one_arithmetic.py); an FFMA/DFMA here would change the last bits
    picked = [k for k in report if re.search(
        r"k_elementwise<ga_f_(multiply|divide)_complex(64|128)>", k.name)]
    assert len(picked) == 4, [k.name for k in picked]
    bad = [f"{k.name}: {k.ffma} FMA" for k in picked if k.ffma]
    assert not bad, bad
    # the check can see an FMA: libdevice's sine has its own
    assert any(k.ffma for k in report if "ga_f_sin_float32" in k.name)


# issue 29's thresholds for the ESTIMATED fraction of an H100's DRAM bandwidth
THRESHOLDS = {
    "full and inner-axis reductions": 0.8,
    "scans": 0.8,
    "radix sort (its passes)": 0.5,
    "boolean mask / nonzero": 0.6,
    "random": 0.7,
}


@pytest.mark.parametrize("family", list(THRESHOLDS))
def test_estimated_bandwidth_of_each_family_meets_the_issues_threshold(report, family):
    rows = {r["family"]: r for r in cuda_report.families(report)}
    r = rows[family]
    assert r["kernels"] > 0, r
    assert r["fraction"] >= THRESHOLDS[family], r


def test_little_law_arithmetic():
    # 4 loads of 16 bytes in flight at 50% occupancy: 64 KB per SM, over the 16.2 KB
    # that hide 640 ns at 3.35 TB/s on 132 SMs; one 4-byte load at 62%: 5 KB, ~31%
    k = cuda_report.Kernel(name="k", mangled="k", occupancy=0.5, in_flight=4,
                           in_flight_bytes=64, loop_instructions=40, loop_bytes=64)
    assert cuda_report.estimate(k)["memory"] == 1.0
    k1 = cuda_report.Kernel(name="k", mangled="k", occupancy=0.625, in_flight=1,
                            in_flight_bytes=4)
    assert 0.30 < cuda_report.estimate(k1)["memory"] < 0.33


def _sass(lines):
    """cuobjdump -sass lines for instructions at 0x0, 0x10, ..."""
    return [f"        /*{16 * i:04x}*/                   {t} ;" for i, t in enumerate(lines)]


def test_main_loop_reads_cuobjdump_branch_addresses():
    # cuobjdump prints branch targets as addresses (no labels); an outer grid-stride
    # loop does not hide the inner loop's loads in flight
    body = _sass([
        "LDG.E R2, desc[UR4][R8.64]",           # 0x00 outer: a head load
        "LDG.E.128 R4, desc[UR4][R10.64]",      # 0x10 inner loop: 4 loads, then uses
        "LDG.E.128 R12, desc[UR4][R10.64+0x10]",
        "LDG.E.128 R16, desc[UR4][R10.64+0x20]",
        "LDG.E.128 R20, desc[UR4][R10.64+0x30]",
        "FADD R0, R4, R12",
        "FADD R0, R0, R16",
        "FADD R0, R0, R20",
        "@P0 BRA 0x10",                         # 0x80: back to the inner loop
        "FADD R0, R0, R2",
        "@P1 BRA 0x0",                          # 0xa0: back to the outer loop
        "EXIT",
    ])
    loads, in_flight, nbytes, instructions, moved = cuda_report.main_loop(body)
    assert (loads, in_flight, nbytes, instructions) == (4, 4, 64, 8)
    # a look-back's poll (a strong load) is a wait, not a load in flight
    poll = _sass(["LDG.E.64.STRONG.GPU R2, desc[UR4][R8.64]", "@!P0 BRA 0x0", "EXIT"])
    assert cuda_report.main_loop(poll)[0] == 0


def test_fma_count_skips_moves_and_division_but_not_contraction():
    move = _sass(["HFMA2.MMA R8, -RZ, RZ, 0, 0"])
    assert cuda_report.fused_multiply_adds(move) == 0
    # x / y: MUFU.RCP and its Newton steps; then a contracted a + b * q of the quotient
    div = _sass([
        "MUFU.RCP R9, R2",
        "FCHK P0, R3, R2",
        "FFMA R16, R9, -R2, 1",
        "FFMA R16, R9, R16, R9",
        "FFMA R0, R16, R3, RZ",
        "FFMA R9, R0, -R2, R3",
        "FFMA R16, R16, R9, R0",
    ])
    assert cuda_report.fused_multiply_adds(div) == 0
    assert cuda_report.fused_multiply_adds(div + _sass(["FFMA R5, R6, R16, R7"])[0:1]) == 1
    # a*b - c*d contracted: one FMUL and one FFMA
    assert cuda_report.fused_multiply_adds(_sass(["FMUL R0, R4, R6",
                                                  "FFMA R0, R5, -R7, R0"])) == 1


def test_the_report_cache_keeps_a_result_per_plugin_and_reads_it_back(tmp_path, monkeypatch):
    # GPUARR_CUDA_REPORT_CACHE (CI reads one plugin three times): a second analysis of
    # the same bytes comes from the folder; other bytes or another arch are analysed
    calls = []

    def fake(plugin, arch):
        calls.append((plugin, arch))
        data = open(plugin, "rb").read()
        return [cuda_report.Kernel(name=f"k{len(data)}", mangled="_Z1kv", regs=len(data),
                                   widths={"LDG.32": 3})]

    monkeypatch.setattr(cuda_report, "_analyse", fake)
    monkeypatch.setenv("GPUARR_CUDA_REPORT_CACHE", str(tmp_path / "cache"))
    plugin = tmp_path / "libfake.so"
    plugin.write_bytes(b"abc")
    first = cuda_report.analyse(str(plugin), "sm_90")
    assert cuda_report.analyse(str(plugin), "sm_90") == first and len(calls) == 1
    assert first[0].widths == {"LDG.32": 3} and first[0].regs == 3
    assert cuda_report.analyse(str(plugin), "sm_80") == first and len(calls) == 2
    plugin.write_bytes(b"abcd")  # rebuilt: not the kept result
    assert cuda_report.analyse(str(plugin), "sm_90")[0].regs == 4 and len(calls) == 3
    monkeypatch.delenv("GPUARR_CUDA_REPORT_CACHE")  # unset: nothing kept, nothing read
    cuda_report.analyse(str(plugin), "sm_90")
    assert len(calls) == 4
