#!/usr/bin/env bash
# CI stage: the platforms this Linux x86-64 machine can only emulate or cross-build
# (issue 26; README, "Platforms"): macOS (compiled and linked for arm64 and x86-64,
# warnings are errors), Linux aarch64 (a subset of the suite under qemu-user) and
# Windows (the tour, both notebooks' code cells and a subset of the suite under Wine).
# Downloads, zig, the Wine prefix and the unpacked Pythons are cached in
# ~/.cache/gpuarr-platforms (tools/platform_env.sh), shared by the three and kept for
# later runs on the same machine. Each check prints its own timings; this its total.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stage() { local t=$SECONDS; "$@"; echo "--- $2: $((SECONDS - t)) s"; }
stage bash tools/macos_build.sh
stage bash tools/linux_aarch64_qemu.sh --subset "${GPUARR_AARCH64_SUBSET:-16}"
stage bash tools/windows_wine.sh --subset "${GPUARR_WINDOWS_SUBSET:-6}"
echo "--- other platforms: $((SECONDS - start)) s in all"
