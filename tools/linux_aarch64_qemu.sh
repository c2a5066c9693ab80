#!/usr/bin/env bash
# Linux on Arm (aarch64), executed on this x86-64 machine under qemu-user: cross-build
# gpuarr's extension for aarch64 with zig cc, install it beside NumPy's manylinux
# aarch64 wheel and pytest for Debian 12's aarch64 CPython 3.11, and run the test suite
# with 2 simulated GPUs (every Nth test of each file: --subset N, default 16; 1 runs it
# all, some 20 times slower than natively).
#
#   tools/linux_aarch64_qemu.sh [--subset N] [pytest args...]
#
# The aarch64 CPython and the C libraries it needs are Debian's arm64 packages,
# downloaded and unpacked into a folder (dpkg -x: nothing is installed, no binfmt_misc
# needed). qemu-aarch64-static -L FOLDER runs the interpreter with that folder as its
# root for absolute paths; a small wrapper script is its sys.executable, so the tests'
# subprocesses (sys.executable -c ...) run under qemu too.
set -euo pipefail
source "$(dirname "$0")/platform_env.sh"

subset=16
if [ "${1:-}" = "--subset" ]; then subset=$2; shift 2; fi

ARM="$CACHE/aarch64"
mkdir -p "$ARM/dl"
ensure_apt /usr/bin/qemu-aarch64-static qemu-user-static
ensure_zig
say "tools ready (qemu-user, zig $ZIG_VERSION)"

# --- Debian 12's aarch64 CPython 3.11, unpacked -------------------------------------------
SYSROOT="$ARM/root"
pkgs="python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11-dev
      libc6 libgcc-s1 libstdc++6 libexpat1 zlib1g libffi8 libbz2-1.0 liblzma5 libssl3 libuuid1"
if [ "$(cat "$SYSROOT/.pkgs" 2>/dev/null)" != "$pkgs" ]; then
  rm -rf "$ARM/dl"/*.deb
  # shellcheck disable=SC2086
  apt_download "$ARM/dl" \
    "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
    $pkgs
  rm -rf "$SYSROOT" && mkdir -p "$SYSROOT"
  for d in "$ARM"/dl/*.deb; do dpkg -x "$d" "$SYSROOT"; done
  echo "$pkgs" >"$SYSROOT/.pkgs"
fi
PYA="$ARM/python3.11-aarch64"
cat >"$PYA" <<EOF
#!/bin/sh
exec qemu-aarch64-static -L "$SYSROOT" -0 "\$0" "$SYSROOT/usr/bin/python3.11" "\$@"
EOF
chmod +x "$PYA"
say "aarch64 CPython: $("$PYA" -c 'import platform, sys; print(platform.machine(), sys.version.split()[0])')"

# --- wheels (manylinux aarch64, pure Python), into that Python's own dist-packages -------
# (so the tests' subprocesses find NumPy and gpuarr as in a real installation)
SITE="$SYSROOT/usr/lib/python3/dist-packages"
reqs="numpy pytest hypothesis array-api-compat dask[array]"
if [ "$(cat "$SITE/.reqs" 2>/dev/null)" != "$reqs" ]; then
  rm -rf "$ARM/wheels"
  # shellcheck disable=SC2086
  "$PY" -m pip download -q --only-binary=:all: --platform manylinux_2_28_aarch64 \
    --platform manylinux2014_aarch64 --python-version 3.11 --implementation cp \
    -d "$ARM/wheels" $reqs
  unzip_wheels "$SITE" "$ARM"/wheels/*.whl
  echo "$reqs" >"$SITE/.reqs"
fi
say "wheels ready: $(cd "$ARM/wheels" && ls ./numpy-*.whl | sed 's/-cp311.*//; s|./||')"

# --- build gpuarr for aarch64 --------------------------------------------------------------
# glibc 2.17 symbols: what a manylinux2014 wheel may use
"$PY" "$ROOT/tools/cross_build.py" --cc "$ZIG cc -target aarch64-linux-gnu.2.17" \
  --system linux --python-include "$SYSROOT/usr/include/python3.11" \
  --python-include "$SYSROOT/usr/include" --suffix .cpython-311-aarch64-linux-gnu.so \
  --out "$ARM/build" --werror
# gpuarr itself goes to a folder outside the aarch64 root, named in a .pth file there:
# its path is then the same for the emulated Python and for the host's tools that a
# test runs on its files (readelf -d on _core: qemu -L maps paths for the emulated
# program only)
rm -rf "$SITE/gpuarr" "$SITE"/gpuarr-*.dist-info # an older layout's
install_gpuarr "$ARM/site" "$ARM/build"
echo "$ARM/site" >"$SITE/gpuarr-build.pth"
say "gpuarr cross-built for aarch64"

# --- run under qemu ------------------------------------------------------------------------
cd "$ROOT"
unset PYTHONHOME
GPUARR_SIMULATE_GPUS=2 PYTHONPATH= "$PYA" -m gpuarr info | sed -n '/^build/,$p'
say "the test suite, 2 simulated GPUs, every ${subset}th test of each file"
# Left out: the notebooks (a Jupyter kernel), Dask's LocalCluster test (dask.distributed
# and its worker processes), the tests marked serial and the GIL's CPU-share test
# (a machine's rates and shares mean nothing under qemu, and its matmuls are slow).
rc=0
GPUARR_SIMULATE_GPUS=2 \
  PYTHONPATH="$ROOT/tools" timeout 1800 "$PYA" -m pytest tests -q \
  -p no:cacheprovider -p pytest_subset --subset="$subset" -m "not serial" -rfEs --durations=5 \
  --ignore=tests/textbook/test_notebooks.py \
  --deselect tests/core/test_dask.py::test_local_cluster_with_two_worker_processes \
  --deselect tests/devices/test_gil.py::test_a_python_thread_gets_its_share_of_the_cpu_beside_large_cpu_work \
  "$@" \
  >"$ARM/pytest.log" 2>&1 || rc=$?
show_pytest_log "$ARM/pytest.log" $rc
say "done: Linux aarch64 (qemu) checks passed"
