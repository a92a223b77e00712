#!/usr/bin/env bash
# Builds the container images without Docker, as OCI image archives:
#   operator     images/Dockerfile.operator     kernelcache.local/operator:dev
#   initwarm     images/Dockerfile.initwarm     kernelcache.local/initwarm:dev
#   pause        images/Dockerfile.pause        kernelcache.local/pause:dev
#   warmup-test  images/Dockerfile.warmup-test  kernelcache.local/warmup-test:dev
#   jit-workload images/Dockerfile.jit-workload kernelcache.local/jit-workload:dev
# each also tagged with the release, VERSION at the repository root
# (kernelcache.local/operator:<VERSION>: the chart's default tag, its appVersion).
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
# jit-workload's build stage is `pip install --target` of the pinned Triton
# wheel (TRITON_PIN below; pip's own configuration, e.g. PIP_FIND_LINKS and
# PIP_NO_INDEX for a local wheel directory, applies) plus images/jit-workload/.
#
# Usage: scripts/build-images.sh [--no-build] [name...]   (default: all five)
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
    operator | initwarm | pause | warmup-test | jit-workload) names+=("$a") ;;
    -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "build-images.sh: unknown argument '$a' (images: operator initwarm pause warmup-test jit-workload)" >&2; exit 2 ;;
  esac
done
[[ ${#names[@]} -gt 0 ]] || names=(operator initwarm pause warmup-test jit-workload)
mkdir -p "$out"

targets=()
for n in "${names[@]}"; do
  case "$n" in
    operator) targets+=(kernelcache-operator) ;;
    initwarm) targets+=(initwarm kc_converge) ;;
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

if [[ " ${names[*]} " == *" jit-workload "* ]]; then
  # The Dockerfile.jit-workload build stage's commands (pip once per pin).
  TRITON_PIN=triton==3.6.0
  jit="$build_dir/images/jit-workload"
  if [[ "$(cat "$jit/pin" 2>/dev/null)" != "$TRITON_PIN" ]]; then
    echo "build-images.sh: jit-workload: pip install $TRITON_PIN (about 600 MB unpacked)"
    rm -rf "$jit" && mkdir -p "$jit"
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
      --target "$jit/site-packages" "$TRITON_PIN"
    (cd "$jit/site-packages/triton" && rm -f _C/libproton.so backends/nvidia/bin/cuobjdump \
      backends/nvidia/bin/nvdisasm backends/nvidia/bin/ptxas-blackwell)
    echo "$TRITON_PIN" >"$jit/pin"
  fi
  rm -rf "$jit/app" && mkdir -p "$jit/app" && cp images/jit-workload/*.py "$jit/app/"
  echo "build-images.sh: jit-workload: packing the image (strips libtriton's debug info; a minute)"
fi

version=$(tr -d '[:space:]' <VERSION)
printf '%-12s %-34s %10s  %s\n' image name bytes digest
for n in "${names[@]}"; do
  ref="kernelcache.local/$n:dev"
  line="$(python3 images/oci_image.py build --dockerfile "images/Dockerfile.$n" \
    --build-dir "$build_dir" --name "$ref" --name "kernelcache.local/$n:$version" \
    --out "$out/$n.tar" --strip)"
  read -r _ digest size _ <<<"$line"
  printf '%-12s %-34s %10s  %s\n' "$n" "$ref" "$size" "$digest"
done
