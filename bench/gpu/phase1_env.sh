#!/bin/bash
# First device call (de-risk): environment, `initwarm probe`-equivalent
# gtests against nvidia-smi, GPU unit tests of probe/cubin loader/AOTI
# client, build of kc-aoti-check against the machine's libtorch, and the
# three workloads cold vs warm through a plain-directory view (symlink and
# copy), before initwarm prepare/seal/wait exist.
# Run from the repository root on the GPU machine; writes under $OUT.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/kc-out}
CARRY=$ROOT/build-gpu/carry
export RES=/tmp/kc-results
source bench/gpu/lib.sh
exec > >(tee "$OUT/log.txt") 2>&1

log "environment"
{
  nvidia-smi; nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
  nvcc --version | tail -2; g++ --version | head -1; cmake --version | head -1; ldd --version | head -1
  python3 -c "import torch,triton,sys;print(sys.version);print('torch',torch.__version__,'cuda',torch.version.cuda,'triton',triton.__version__);print(torch.utils.cmake_prefix_path)"
  uname -a; nproc; free -g; head -3 /etc/os-release; df -h /tmp | tail -1
  ls "$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/include/torch/csrc/inductor/aoti_package/" 2>&1
} > "$OUT/env.txt" 2>&1
head -40 "$OUT/env.txt"

log "GPU unit tests (carried binaries built on the CPU machine)"
export KC_TEST_NATIVE_SM=90
for t in "$CARRY"/bin/*_test; do
  echo "### $(basename "$t")"
  "$t" 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[ *OK|FAILED|Skipped|Failure|error|Expected|Which is" | head -40
done > "$OUT/gtest.txt" 2>&1
cat "$OUT/gtest.txt"

log "build kc-aoti-check against this machine's libtorch"
TP=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
( cmake -S initwarm/aoti -B /tmp/build-aoti -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$TP" -DCMAKE_CXX_FLAGS="-I$CARRY/include" \
  && cmake --build /tmp/build-aoti --target kc-aoti-check ) > "$OUT/aoti_build.txt" 2>&1
echo "aoti build rc=$?"; tail -5 "$OUT/aoti_build.txt"
[ -x /tmp/build-aoti/kc-aoti-check ] && cp /tmp/build-aoti/kc-aoti-check "$OUT/"
export KC_AOTI_CHECK=/tmp/build-aoti/kc-aoti-check

D=/tmp/kc-data; rm -rf "$D"; mkdir -p "$D"
log "triton kernel correctness (scratch cache)"
TRITON_CACHE_DIR=$D/scratch timeout 120 python3 bench/gpu/triton_family.py --check --out "$RES/check.json" > "$RES/check.log" 2>&1; echo "check rc=$?"; tail -3 "$RES/check.log"
log "foreign-arch (sm_100) Triton entry"
TRITON_CACHE_DIR=$D/foreign timeout 120 python3 bench/gpu/foreign_arch.py 2>&1 | tail -3

for w in triton inductor; do
  case $w in
    triton) CMD=(python3 bench/gpu/triton_family.py); TO=240;;
    inductor) CMD=(python3 bench/gpu/inductor_blocks.py); TO=300;;
  esac
  log "== $w: warmup (cold, writes the cache through the view)"
  view_link "$D/$w-stage"; run_one "$w-warmup" $TO "${CMD[@]}"
  log "== $w: cold (empty cache)"
  view_link "$D/$w-cold"; run_one "$w-cold" $TO "${CMD[@]}"
  log "== $w: shared view"
  view_link "$D/$w-stage"; run_one "$w-shared" $TO "${CMD[@]}"
  log "== $w: copy view"
  view_copy "$D/$w-stage"; run_one "$w-copy" $TO "${CMD[@]}"; rm -rf "$V"
  log "== $w: four at once, cold / warm"
  run_four "$w-cold4" $TO cold "${CMD[@]}"
  view_link "$D/$w-stage"; run_four "$w-warm4" $TO view "${CMD[@]}"
done

log "== aoti: build the package through the view"
view_link "$D/aoti-stage"
timeout 300 python3 bench/gpu/aoti_build.py --out "$V/inductor/aoti/model.pt2" --result "$RES/aoti-build.json" > "$RES/aoti-build.log" 2>&1; echo "aoti build rc=$?"; tail -3 "$RES/aoti-build.log"
if [ -x "$KC_AOTI_CHECK" ]; then
  for i in 1 2; do "$KC_AOTI_CHECK" --package "$V/inductor/aoti/model.pt2" --runs 20 | tee "$RES/aoti-run-$i.json"; done
  cp "$V/inductor/aoti/model.pt2" "$D/corrupt.pt2"
  python3 -c "
import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); i=len(b)//2; b[i]^=0x01; open(p,'wb').write(b)" "$D/corrupt.pt2"
  "$KC_AOTI_CHECK" --package "$D/corrupt.pt2" | tee "$RES/aoti-corrupt.json"
  KC_TEST_AOTI_PACKAGE=$V/inductor/aoti/model.pt2 KC_TEST_AOTI_CORRUPT_PACKAGE=$D/corrupt.pt2 \
    "$CARRY"/bin/initwarm_aoti_check_test 2>&1 | tail -4 | tee -a "$OUT/gtest.txt"
fi
du -sh "$D"/*-stage 2>/dev/null
python3 bench/gpu/summarize.py "$RES" > "$OUT/results.json"
python3 bench/gpu/summarize.py "$RES" --table
