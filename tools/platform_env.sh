# tools/platform_env.sh: sourced by the checks of other platforms (windows_wine.sh,
# linux_aarch64_qemu.sh, macos_build.sh). Everything they download or build once lands
# in one cache folder, so a second check in the same CI run (or a later run on the same
# machine) reuses it: $GPUARR_PLATFORM_CACHE, by default ~/.cache/gpuarr-platforms.
# Nothing here installs into the system but Debian packages (wine64, qemu-user-static).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${GPUARR_PLATFORM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuarr-platforms}
mkdir -p "$CACHE"
PY=${PYTHON:-$(command -v python3)}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

# zig (clang and the C libraries of every target) from PyPI's ziglang wheel.
ZIG_VERSION=0.17.1
ensure_zig() {
  local dir="$CACHE/zig-$ZIG_VERSION"
  if [ ! -x "$dir/ziglang/zig" ]; then
    "$PY" -m pip install -q --target "$dir.tmp" "ziglang==$ZIG_VERSION"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  ZIG="$dir/ziglang/zig"
  # the C runtimes zig builds for a target the first time (a minute) are kept
  export ZIG_GLOBAL_CACHE_DIR="$CACHE/zig-cache" ZIG_LOCAL_CACHE_DIR="$CACHE/zig-cache"
}

# Debian packages, installed only when missing (CI runs as root).
ensure_apt() { # ensure_apt FILE PACKAGE...: install PACKAGEs unless FILE exists
  local file=$1; shift
  [ -e "$file" ] && return 0
  echo "installing $* (Debian)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "$@" >/dev/null; }
}

# Debian packages of another release or architecture, downloaded (never installed)
# through apt with lists of their own, so the system's apt sources stay as they are.
# apt_download DIR "deb-line" PACKAGE...: the .deb files land in DIR.
apt_download() {
  local dir=$1 line=$2; shift 2
  local lists="$dir/.apt"
  mkdir -p "$lists/lists/partial" "$lists/cache/archives/partial"
  echo "$line" >"$lists/sources.list"
  local arch=amd64
  [[ $line == *arch=arm64* ]] && arch=arm64
  local opts=(-o "Dir::Etc::SourceList=$lists/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$lists/lists" -o "Dir::Cache=$lists/cache"
    -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" -o Dir::State::status=/dev/null
    -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" update -q >/dev/null
  (cd "$dir" && apt-get "${opts[@]}" download "$@" >/dev/null)
}

# unzip_wheels DIR WHEEL...: install wheels by unpacking them (a target Python that
# cannot run here, or one without pip)
unzip_wheels() {
  local dir=$1; shift
  mkdir -p "$dir"
  for w in "$@"; do "$PY" -m zipfile -e "$w" "$dir"; done
}

# gpuarr's Python package with a cross-built _core in SITE/gpuarr, and its entry point
# for pytest (the plugin behind --gpuarr-simulate-gpus), as pip would install them.
install_gpuarr() { # install_gpuarr SITE BUILD_DIR
  local site=$1 build=$2
  rm -rf "$site/gpuarr" "$site"/gpuarr-*.dist-info
  # the package's sources (subpackages too), not what a native build left beside them
  (cd "$ROOT/python" && find gpuarr -type f \( -name '*.py' -o -name '*.pyi' -o -name py.typed \) \
    ! -name _build_config.py ! -path '*/__pycache__/*' | while read -r f; do
      mkdir -p "$site/$(dirname "$f")" && cp "$f" "$site/$f"
    done)
  cp "$build"/_core* "$build/_build_config.py" "$site/gpuarr/"
  local version
  version=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$ROOT/python/gpuarr/__init__.py")
  mkdir -p "$site/gpuarr-$version.dist-info"
  printf 'Metadata-Version: 2.1\nName: gpuarr\nVersion: %s\n' "$version" \
    >"$site/gpuarr-$version.dist-info/METADATA"
  printf '[pytest11]\ngpuarr = gpuarr.pytest_plugin\n' \
    >"$site/gpuarr-$version.dist-info/entry_points.txt"
}

# show_pytest_log LOG RC: a test run's output without its progress lines: the end when
# it passed, all of it (the failures' tracebacks) when it failed, and then fail too
show_pytest_log() {
  local lines=60
  [ "$2" -ne 0 ] && lines=100000
  grep -v '^[.sFEx]* *\[ *[0-9]*%\]$' "$1" | tail -n "$lines"
  [ "$2" -eq 0 ] || { echo "pytest failed ($2); its whole output: $1"; return "$2"; }
}

# seconds since the script started, for the stage timings CI prints
t0=$SECONDS
say() { echo "[$((SECONDS - t0)) s] $*"; }
