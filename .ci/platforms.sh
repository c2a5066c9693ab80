#!/usr/bin/env bash
# CI stage: the platforms this Linux x86-64 machine can only emulate or cross-build
# (issue 26; docs/platforms.md): macOS (compiled and linked for arm64 and x86-64,
# warnings are errors), Linux aarch64 (a subset of the suite under qemu-user) and
# Windows (the tour, both notebooks' code cells and a subset of the suite under Wine).
# Downloads, zig, the Wine prefix and the unpacked Pythons are cached in
# ~/.cache/gpuarr-platforms (tools/platform_env.sh), shared by the three and kept for
# later runs on the same machine. Each check prints its own timings; this its total.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stage() { local t=$SECONDS; "$@"; echo "--- $2: $((SECONDS - t)) s"; }
# Two lanes side by side, one per core: the aarch64 check (its tests in one process
# under qemu-user: the longest, about 5 minutes) in one, the macOS build and then the
# Windows check (its tests in one process under Wine) in the other. The macOS build ran
# first, alone, and Windows ended about 100 s before aarch64, leaving a core idle both
# times. What the lanes share is fetched first: zig, and the Debian packages, one apt
# at a time (two would race for dpkg's lock); each lane's output is shown whole when
# both end.
. tools/platform_env.sh
ensure_zig
ensure_apt /usr/bin/qemu-aarch64-static qemu-user-static
ensure_apt /usr/lib/wine/wine64 wine64
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
stage bash tools/linux_aarch64_qemu.sh --subset "${GPUARR_AARCH64_SUBSET:-16}" \
  >"$logs/aarch64" 2>&1 &
arm=$!
{ stage bash tools/macos_build.sh && stage bash tools/windows_wine.sh \
    --subset "${GPUARR_WINDOWS_SUBSET:-6}"; } >"$logs/windows" 2>&1 &
win=$!
rc_arm=0 rc_win=0
wait "$arm" || rc_arm=$?
wait "$win" || rc_win=$?
cat "$logs/aarch64" "$logs/windows"
echo "--- other platforms: $((SECONDS - start)) s in all"
if [ "$rc_arm" -ne 0 ] || [ "$rc_win" -ne 0 ]; then
  echo "other platforms failed: aarch64 exit $rc_arm, macOS and Windows exit $rc_win" >&2
  exit 1
fi
