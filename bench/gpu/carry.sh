#!/bin/bash
# Builds what bench/gpu/run_all.sh carries to the GPU machine: the static
# initwarm binary and the GPU-facing gtest binaries (stripped), plus the
# nlohmann/json headers kc-aoti-check is compiled with there.
#   bench/gpu/carry.sh [BUILD_DIR]   (default build-gpu; output BUILD_DIR/carry)
set -eu
B=${1:-build-gpu}
cmake -S . -B "$B" -G Ninja > /dev/null
cmake --build "$B" --target initwarm initwarm_probe_test initwarm_cuda_module_loader_test \
  initwarm_resolve_client_test initwarm_aoti_check_test
rm -rf "$B/carry"; mkdir -p "$B/carry/bin" "$B/carry/include"
cp -r /usr/include/nlohmann "$B/carry/include/"
for t in initwarm/initwarm initwarm/gpu/initwarm_probe_test \
         initwarm/gpu/initwarm_cuda_module_loader_test initwarm/net/initwarm_resolve_client_test \
         initwarm/aoti/initwarm_aoti_check_test; do
  strip -o "$B/carry/bin/$(basename "$t")" "$B/$t"
done
du -sh "$B/carry"
