#!/usr/bin/env bash
# Build the extension (and the CUDA plugins when asked) with plain CMake into
# build/dev[-SUFFIX] and copy the modules into python/gpuarr/, so that
#   PYTHONPATH=python python -m pytest
# runs against the working tree. Extra arguments go to CMake's configure step, e.g.
#   tools/dev-build.sh -DGPUARR_CUDA=ON -DGPUARR_CUDA_EMU=ON
# GPUARR_DEV_PYTHON names the interpreter to build for (default: python3 on the PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build/dev${GPUARR_DEV_SUFFIX:+-$GPUARR_DEV_SUFFIX}
# ccache, when it is installed, for C, C++ and nvcc: a second worktree's build of unchanged
# sources is then mostly cache hits (the base directory makes the cache's paths relative to
# the checkout, so worktrees share it). GPUARR_DEV_CCACHE=0 turns it off.
launcher=()
if [ "${GPUARR_DEV_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  for lang in C CXX CUDA; do launcher+=("-DCMAKE_${lang}_COMPILER_LAUNCHER=ccache"); done
fi
cmake -S . -B "$dir" -G Ninja "${launcher[@]}" -DGPUARR_DEV_COPY=ON -DGPUARR_CUDA="${GPUARR_CUDA:-OFF}" \
  -DGPUARR_WERROR="${GPUARR_WERROR:-ON}" \
  -DPython_EXECUTABLE="${GPUARR_DEV_PYTHON:-$(command -v python3)}" "$@" >/dev/null
cmake --build "$dir"
