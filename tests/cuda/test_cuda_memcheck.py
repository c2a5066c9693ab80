"""Memcheck of the emulated CUDA plugin under AddressSanitizer: device memory is
poisoned for host code between device tasks, and device work may touch only the bytes
that were asked for (ga_cuda_emu_state.cpp, "Memcheck"). Each case is a deliberate
memory error in gpuarr_cuda_selftest_memcheck (ga_cuda_selftest.cu), run in a fresh
interpreter because ASan ends the process at the first report."""
import os
import subprocess
import sys
import textwrap

import pytest

import gpuarr
from conftest import needs_emulated_plugin

PKG_DIR = os.path.dirname(os.path.abspath(gpuarr._core.__file__))
EMU = os.path.join(PKG_DIR, "libgpuarr_cuda_emu.so")

try:
    from gpuarr import _build_config
    ASAN = "address" in _build_config.SANITIZE
except ImportError:
    ASAN = False

# each test starts its own interpreters (tests/conftest.py: CI runs the file in one stage)
pytestmark = [pytest.mark.own_processes, needs_emulated_plugin]
needs_asan = pytest.mark.skipif(
    not ASAN, reason="memcheck needs the AddressSanitizer build (-DGPUARR_SANITIZE=address)")


def run_case(what):
    """Run memcheck case `what` on emulated gpu(0): (returncode, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUARR_")}
    env["PYTHONPATH"] = os.path.dirname(PKG_DIR) + os.pathsep + env.get("PYTHONPATH", "")
    env["GPUARR_CUDA_EMULATE"] = "1"
    # the report must reach our stderr, not CI's log_path (whose reports fail the run);
    # LD_PRELOAD of the ASan runtime is inherited
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    env.pop("LSAN_OPTIONS", None)  # CI's exitcode=0 would apply to ASan's report too
    code = textwrap.dedent(f"""
        import ctypes, os
        import gpuarr
        assert gpuarr.num_gpus() == 1, gpuarr._core._gpu_mode()
        lib = ctypes.CDLL({EMU!r})
        print(lib.gpuarr_cuda_selftest_memcheck(0, {what}), flush=True)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=env, timeout=300)
    return r.returncode, r.stdout, r.stderr


def test_in_bounds_device_reads_and_host_reads_of_pinned_memory_are_clean():
    rc, out, err = run_case(3)
    assert (rc, out.strip()) == (0, str(0x5A)), err


@needs_asan
def test_host_dereference_of_a_device_pointer_is_reported():
    rc, out, err = run_case(0)
    assert rc != 0 and out == "", out + err
    assert "ERROR: AddressSanitizer: use-after-poison" in err, err
    assert "gpuarr_cuda_selftest_memcheck" in err, err


@needs_asan
def test_kernel_reading_one_byte_past_a_cudamalloc_block_is_reported():
    rc, out, err = run_case(1)
    assert rc != 0 and out == "", out + err
    assert "ERROR: AddressSanitizer: heap-buffer-overflow" in err, err
    assert "k_read_byte" in err and "0 bytes" in err and "100-byte region" in err, err


@needs_asan
def test_kernel_reading_past_a_cached_request_is_reported():
    # the caching allocator's bin is 512 bytes; 100 were asked for
    rc, out, err = run_case(2)
    assert rc != 0 and out == "", out + err
    assert "ERROR: AddressSanitizer: use-after-poison" in err, err
    assert "k_read_byte" in err, err


@needs_asan
def test_kernel_reading_past_a_request_in_a_reused_cached_block_is_reported():
    # 500 bytes allocated and freed, then 100 asked for: the same 512-byte block
    rc, out, err = run_case(6)
    assert rc != 0 and out == "", out + err
    assert "ERROR: AddressSanitizer: use-after-poison" in err, err
    assert "k_read_byte" in err, err


@needs_asan
def test_kernel_reading_past_a_request_in_a_piece_of_a_split_block_is_reported():
    # 64 MiB allocated and freed, then 3 MiB + 100 bytes asked for: a 4 MiB piece
    rc, out, err = run_case(4)
    assert rc != 0 and out == "", out + err
    assert "ERROR: AddressSanitizer: use-after-poison" in err, err
    assert "k_read_byte" in err, err


def test_a_reused_blocks_extent_changes_after_its_previous_owners_queued_work():
    # the 64 MiB block's last kernel, queued late, reads a byte that the 4 MiB piece
    # cut from it no longer may: the piece's extent is narrowed after that kernel ran
    rc, out, err = run_case(5)
    assert (rc, out.strip()) == (0, str(0x5A)), err
