#!/usr/bin/env bash
# The prepared GPU run's rehearsal (issue 27; bench/README.md, "On a machine with an
# NVIDIA GPU"): tools/gpu_run.sh --rehearse runs every step of the GPU run (detect,
# build, smoke, static report, tests, bench, sanitizer) on emulated CUDA, so the script
# cannot rot between GPU loans. --prebuilt: the wheel CI installed (with the real
# plugin, whose sm_90 code the static-report step reads) instead of a second build.
# tools/gpu_run.py --check fails unless every step ran and no test failed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-$(python3 -c 'import sys; print(sys.executable)')}
start=$SECONDS
out=$(mktemp -d)
console=$(mktemp)
GPU_RUN_PYTHON="$PY" tools/gpu_run.sh --rehearse --prebuilt --out "$out" >"$console" 2>&1
if ! "$PY" tools/gpu_run.py --check "$out"; then
  echo "--- the rehearsal's console (its end):"; tail -n 80 "$console"; exit 1
fi
rm -rf "$out" "$console"
echo "GPU run rehearsal: $((SECONDS - start)) s"
