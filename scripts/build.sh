#!/usr/bin/env bash
# Configures and builds KernelCache into ${KC_BUILD_DIR:-build}: all targets,
# or only the CMake targets named as arguments (scripts/demo.sh builds
# kernelcache-operator and initwarm). Under CI (CI=true) a warning fails the
# build (-DKC_WERROR=ON, set on every run, so a directory configured before
# gets it too).
# Usage: scripts/build.sh [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${KC_BUILD_DIR:-build}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# ccache makes a rebuild from a fresh clone take seconds; BASEDIR lets clones
# in different folders share its entries.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
if [ "${CI:-}" = true ]; then
  cmake "$build_dir" -DKC_WERROR=ON >/dev/null
fi
targets=()
[ "$#" -gt 0 ] && targets=(--target "$@")
echo "build: compiling ${*:-all targets} (a first build of all takes ~15 minutes on 2 cores)"
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
