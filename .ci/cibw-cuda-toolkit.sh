#!/usr/bin/env bash
# cibuildwheel's before-all on Linux (pyproject.toml, [tool.cibuildwheel.linux]): nvcc
# and the CUDA headers the plugin compiles against (cudart, cuBLAS, cuSOLVER, cuFFT:
# types and prototypes; the libraries are loaded at run time) from NVIDIA's RHEL 8
# repository, inside the manylinux_2_28 container, for x86_64 and aarch64 (sbsa).
# If the repository cannot be reached the wheel is built without the CUDA plugin
# (GPUARR_CUDA=AUTO), and the log says so. Runs on hosted runners only (this project's
# CI builds its Linux x86-64 wheel in .ci/run).
set -uo pipefail
case "$(uname -m)" in
  x86_64) repo=x86_64 ;;
  aarch64) repo=sbsa ;;
  *) echo "no CUDA toolkit for $(uname -m): building without the CUDA plugin"; exit 0 ;;
esac
ver=13-0
if dnf config-manager --add-repo \
    "https://developer.download.nvidia.com/compute/cuda/repos/rhel8/$repo/cuda-rhel8.repo" &&
  dnf install -y -q "cuda-nvcc-$ver" "cuda-cudart-devel-$ver" "libcublas-devel-$ver" \
    "libcusolver-devel-$ver" "libcufft-devel-$ver"; then
  ln -sfn "/usr/local/cuda-${ver/-/.}" /usr/local/cuda
  /usr/local/cuda/bin/nvcc --version | tail -n 1
else
  echo "WARNING: the CUDA toolkit could not be installed: wheels without the CUDA plugin"
fi
exit 0
