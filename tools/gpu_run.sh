#!/usr/bin/env bash
# The prepared GPU run (tools/gpu_run.py says what it does): finds a Python that has
# NumPy and pytest (on the GPU machines, the python3 that holds PyTorch) and runs
# tools/gpu_run.py with it. Always exits 0: the summary in the output folder ($OUT, or
# --out DIR) says what failed. GPU_RUN_PYTHON=path picks the interpreter instead.
#   tools/gpu_run.sh                      # on a machine with an NVIDIA GPU
#   tools/gpu_run.sh --rehearse           # the same steps here, on emulated CUDA
cd "$(dirname "$0")/.." || exit 0
py=""
for cand in ${GPU_RUN_PYTHON:-} python3 python; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import numpy, pytest' 2>/dev/null; then
    py=$(command -v "$cand"); break
  fi
done
if [ -z "$py" ]; then
  out=${OUT:-build/gpu-run/out}
  mkdir -p "$out"
  echo "# gpuarr GPU run: no Python with NumPy and pytest on the PATH ($PATH)" | tee "$out/summary.md"
  exit 0
fi
"$py" tools/gpu_run.py "$@"
exit 0
