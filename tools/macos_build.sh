#!/usr/bin/env bash
# macOS, built on this Linux machine: compile and link gpuarr's extension (_core: the
# core and the binding; CPU and simulated GPUs) for aarch64-macos and x86_64-macos with
# zig cc, failing on any warning. Nothing here can run a Mach-O binary: this checks
# that the C builds and links for macOS (its libc headers, Apple's clang dialect,
# -undefined dynamic_lookup as Python extensions link there), not that it works.
#
# CPython's headers are this machine's (Linux's pyconfig.h: a few HAVE_* differ from
# a Mac's, which is fine for a compile-and-link check, not for a wheel). docs/platforms.md,
# "Platforms" says how a Mac builds the real thing (pip install . with Apple clang).
set -euo pipefail
source "$(dirname "$0")/platform_env.sh"
ensure_zig
inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
for arch in aarch64 x86_64; do
  out="$CACHE/macos/$arch"
  "$PY" "$ROOT/tools/cross_build.py" --cc "$ZIG cc -target $arch-macos" --system macos \
    --python-include "$inc" --suffix .so --out "$out" --werror
  # the file's own header says what it is (no `file` command needed)
  "$PY" - "$out/_core.so" "$arch" <<'EOF'
import struct, sys
magic, cputype = struct.unpack("<II", open(sys.argv[1], "rb").read(8))
want = {"aarch64": 0x0100000C, "x86_64": 0x01000007}[sys.argv[2]]  # CPU_TYPE_ARM64 / X86_64
assert magic == 0xFEEDFACF, f"not a 64-bit Mach-O file: {magic:#x}"
assert cputype == want, f"Mach-O for CPU type {cputype:#x}, not {sys.argv[2]}"
print(f"{sys.argv[1]}: Mach-O 64-bit bundle for {sys.argv[2]}")
EOF
  say "macOS $arch: compiled and linked without a warning"
done
