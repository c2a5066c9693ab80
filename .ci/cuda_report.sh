#!/usr/bin/env bash
# The static report of the installed CUDA plugin's sm_90 machine code (issue 29 item 8):
# the ESTIMATED fraction of an H100's DRAM bandwidth per kernel family (Little's law from
# the loads each kernel's main loop keeps in flight, and issue rate), as a table in the
# CI log. tests/tooling/test_cuda_report.py holds the same numbers to the issue's
# thresholds.
# No GPU is used: these are estimates, not measurements. About 20 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
plugin=$("$PY" -c 'import gpuarr, os; print(os.path.join(os.path.dirname(gpuarr._core.__file__), "libgpuarr_cuda.so"))')
echo "=== estimated bandwidth by kernel family ($plugin)"
"$PY" tools/cuda_report.py "$plugin" --families
