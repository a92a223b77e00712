#!/usr/bin/env bash
# Builds the container images without Docker, as OCI image archives:
#   operator     images/Dockerfile.operator     kernelcache.local/operator:dev
#   initwarm     images/Dockerfile.initwarm     kernelcache.local/initwarm:dev
#   pause        images/Dockerfile.pause        kernelcache.local/pause:dev
#   warmup-test  images/Dockerfile.warmup-test  kernelcache.local/warmup-test:dev
# into ${KC_BUILD_DIR:-build}/images/<name>.tar, for
# `ctr -n k8s.io images import` (tests/cluster/node.sh imports them all).
#
# Each Dockerfile is the recipe: images/oci_image.py reads its final stage
# (COPY --from=build, USER, ENTRYPOINT) and takes /build/... from the CMake
# build directory and any other source from this machine's Debian packages;
# a dynamically linked binary gets exactly the shared objects ldd names.
# Binaries are copied with their debug sections stripped. The archives are
# deterministic: the same inputs give the same digest.
#
# Usage: scripts/build-images.sh [--no-build] [name...]   (default: all four)
#   --no-build   do not run the CMake build of initwarm/kernelcache-operator
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${KC_BUILD_DIR:-build}"
out="$build_dir/images"
do_build=1
names=()
for a in "$@"; do
  case "$a" in
    --no-build) do_build=0 ;;
    operator | initwarm | pause | warmup-test) names+=("$a") ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "build-images.sh: unknown argument '$a' (images: operator initwarm pause warmup-test)" >&2; exit 2 ;;
  esac
done
[[ ${#names[@]} -gt 0 ]] || names=(operator initwarm pause warmup-test)
mkdir -p "$out"

targets=()
for n in "${names[@]}"; do
  case "$n" in
    operator) targets+=(kernelcache-operator) ;;
    initwarm) targets+=(initwarm) ;;
  esac
done
if [[ $do_build == 1 && ${#targets[@]} -gt 0 ]]; then
  [[ -f "$build_dir/CMakeCache.txt" ]] || { echo "build-images.sh: $build_dir is not configured; run scripts/build.sh first" >&2; exit 1; }
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  nice -n 10 cmake --build "$build_dir" --target "${targets[@]}" -j 2
fi
if [[ " ${names[*]} " == *" pause "* ]]; then
  # The Dockerfile.pause build stage's command.
  mkdir -p "$build_dir/images"
  gcc -Os -static -s -o "$build_dir/images/pause" images/pause/pause.c
fi

printf '%-12s %-34s %10s  %s\n' image name bytes digest
for n in "${names[@]}"; do
  ref="kernelcache.local/$n:dev"
  line="$(python3 images/oci_image.py build --dockerfile "images/Dockerfile.$n" \
    --build-dir "$build_dir" --name "$ref" --out "$out/$n.tar" --strip)"
  read -r _ digest size _ <<<"$line"
  printf '%-12s %-34s %10s  %s\n' "$n" "$ref" "$size" "$digest"
done
