#!/usr/bin/env bash
# Assemble a CUDA 12.4 toolkit in the folder $1 (standard layout: bin/nvcc, include/,
# lib64/, nvvm/) without installing anything system-wide, so that CI can build the
# CUDA plugin with a second toolkit beside the machine's CUDA 13.
#
# What PyPI has and has not (checked for every nvidia-cuda-nvcc-cu12 release, 12.0.76 to
# 12.9.86): the cu12 nvcc wheels carry ptxas, libnvvm, libdevice and the crt headers, but
# not the compiler driver and its tools (nvcc, cicc, cudafe++, fatbinary, nvlink, bin2c);
# only the CUDA 13 wheel (nvidia-cuda-nvcc) has those. nvidia-cuda-runtime-cu12 ships
# libcudart_static.a only from 12.9 on. So the pieces come from:
#   - nvcc, cudafe++, fatbinary, nvlink, bin2c, ptxas, cicc: Debian 13's non-free
#     nvidia-cuda-toolkit 12.4.131 (Debian 12's is 11.8), fetched with apt-get download
#     from private package lists and unpacked with dpkg-deb (nothing is installed);
#   - headers (runtime, crt, CCCL, cuBLAS, cuSOLVER, cuFFT), libnvvm and libdevice: the
#     PyPI cu12 wheels of the same release (12.4; cuSOLVER 11.6 and cuFFT 11.2 are its
#     libraries' own version numbers);
#   - libcudart_static.a: nvidia-cuda-runtime-cu12 12.9.79 (the first wheel that has it;
#     CUDA 12's minor version compatibility lets code compiled by 12.4 link with it).
set -euo pipefail
root=${1:?usage: cuda12-toolkit.sh DIR}
PY=${PY:-python3}
deb_version=12.4.131~12.4.1-2
mkdir -p "$root"
root=$(cd "$root" && pwd)
work=$root/.fetch
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/parts" \
  "$work/deb" "$work/x"

# 1. The compiler driver and its tools from Debian (private lists: the machine's own
#    sources stay as they are).
#    The Debian mirror is the one this machine's apt already uses.
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 !~ /^\[/ {print $2; exit}' /etc/apt/sources.list)
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie non-free" \
  >"$work/apt/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o "Dir::Etc::SourceParts=$work/apt/parts"
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache" -o "APT::Sandbox::User=root")
apt-get -qq "${apt_opts[@]}" update
(cd "$work/deb" && apt-get -qq "${apt_opts[@]}" download "nvidia-cuda-toolkit=$deb_version")
dpkg-deb -x "$work"/deb/nvidia-cuda-toolkit_*.deb "$work/x"

# 2. Headers, libnvvm, libdevice and the static runtime from PyPI.
"$PY" -m pip install -q --no-deps --target "$work/w124" nvidia-cuda-nvcc-cu12==12.4.131 \
  nvidia-cuda-runtime-cu12==12.4.127 nvidia-cuda-cccl-cu12==12.4.127.post1 \
  nvidia-cublas-cu12==12.4.5.8 nvidia-cusolver-cu12==11.6.1.9 nvidia-cufft-cu12==11.2.1.3
"$PY" -m pip install -q --no-deps --target "$work/w129" nvidia-cuda-runtime-cu12==12.9.79

# 3. The toolkit layout nvcc expects ($(TOP) = bin/..).
mkdir -p "$root/bin" "$root/include" "$root/lib64" "$root/nvvm/bin" "$root/nvvm/lib64" \
  "$root/nvvm/libdevice"
deb=$work/x/usr
cp "$deb/lib/nvidia-cuda-toolkit/bin/nvcc" "$root/bin/" # /usr/bin/nvcc is a wrapper script
cp "$deb"/bin/{cudafe++,fatbinary,nvlink,bin2c,ptxas} "$root/bin/"
cp -r "$deb/lib/nvidia-cuda-toolkit/bin/crt" "$root/bin/"
cp "$deb/lib/nvidia-cuda-toolkit/bin/cicc" "$root/nvvm/bin/"
w=$work/w124/nvidia
for d in cuda_runtime cuda_cccl cuda_nvcc cublas cusolver cufft; do
  cp -r "$w/$d/include/." "$root/include/"
done
find "$root/include" \( -name __init__.py -o -name __pycache__ \) -prune -exec rm -rf {} +
cp "$w/cuda_nvcc/nvvm/lib64/libnvvm.so" "$root/nvvm/lib64/"
cp "$w/cuda_nvcc/nvvm/libdevice/libdevice.10.bc" "$root/nvvm/libdevice/"
cp "$work/w129/nvidia/cuda_runtime/lib/libcudart_static.a" "$root/lib64/"
# FindCUDAToolkit wants the shared runtime too (the plugin does not link it)
cp "$w/cuda_runtime/lib/libcudart.so.12" "$root/lib64/"
ln -sf libcudart.so.12 "$root/lib64/libcudart.so"
cat >"$root/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
rm -rf "$work"
"$root/bin/nvcc" --version | tail -2
