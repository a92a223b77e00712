# Results: bench/gpu/results/h200-aoti-recheck.txt and docs/benchmarks.md.
# The view is removed before prepare: libtorch's CMake CUDA probe, run with
# CUDA_CACHE_PATH in the view, makes the view path a directory
# (bench/gpu/results/h200-aoti-recheck-failed.txt).
# Follow-up to run_all.sh's AOTI part (docs/benchmarks.md, "The gate's .pt2 rung"):
# the warmup runs the package through the C++ loader before sealing, and a
# sealed AOTI cache must still verify (LoadTest, including the .pt2 rung)
# after model processes ran from it in Shared mode.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/kc-out}
CARRY=$ROOT/build-gpu/carry
IW=$CARRY/bin/initwarm
export RES=/tmp/kc-results
rm -rf "$RES"
source "$ROOT/bench/gpu/lib.sh"
VOL=/tmp/kc-vol D=/tmp/kc-data
rm -rf "$VOL" "$D" "$V"; mkdir -p "$VOL" "$D"
exec > >(tee "$OUT/aoti-recheck.txt") 2>&1
tm() { local n=$1; shift; python3 "$ROOT/bench/gpu/timecmd.py" "$RES/initwarm-$n.json" "$@"; }
export KC_AOTI_CHECK=/tmp/build-aoti/kc-aoti-check
TP=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
( cmake -S initwarm/aoti -B /tmp/build-aoti -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$TP" -DCMAKE_CXX_FLAGS="-I$CARRY/include" \
  && cmake --build /tmp/build-aoti --target kc-aoti-check ) > "$RES/helper-build.log" 2>&1 || tail "$RES/helper-build.log"
echo '{"image":"bench/gpu-aoti:recheck","versions":{"pytorch":"2.11.0","triton":"3.6.0"}}' > "$D/rt.json"
FP=$("$IW" probe --runtime-facts "$D/rt.json" | python3 -c "import json,sys;print(json.load(sys.stdin)['fingerprint']['id'])")
NODE=$("$IW" probe | python3 -c "import json,sys;print(json.dumps(json.load(sys.stdin)['node']))")
PKG=inductor/aoti/model.pt2
log "fingerprint $FP"
rm -rf "$V"  # the CUDA probe in libtorch's CMake config created view/nv (CUDA_CACHE_PATH)
tm prepare "$IW" prepare --root "$VOL" --fingerprint "$FP" --job-uid job-aoti --view "$V"
tm build python3 bench/gpu/aoti_build.py --out "$V/$PKG" --result "$RES/aoti-build.json"
tm warmup-run "$KC_AOTI_CHECK" --package "$V/$PKG" --runs 3
tm seal "$IW" seal --root "$VOL" --fingerprint "$FP" --job-uid job-aoti --node-facts "$NODE" \
  --runtime-facts "$D/rt.json" --termination-log "$RES/seal.term"
rm -rf "$V"
tm wait "$IW" wait --root "$VOL" --fingerprint "$FP" --view "$V" --mode Shared --verify LoadTest --timeout 60s
tm verify-before "$IW" verify --root "$VOL" --fingerprint "$FP" --level LoadTest --node-facts "$NODE" --view "$V" --json --no-quarantine
for i in 1 2; do "$KC_AOTI_CHECK" --package "$V/$PKG" --runs 50 > "$RES/aoti-run-$i.json"; cat "$RES/aoti-run-$i.json"; done
"$KC_AOTI_CHECK" --package "$V/$PKG" --runs 50 --prime > "$RES/aoti-prime.json"; cat "$RES/aoti-prime.json"
tm verify-after "$IW" verify --root "$VOL" --fingerprint "$FP" --level LoadTest --node-facts "$NODE" --view "$V" --json --no-quarantine
head -c 1000000 "$VOL/v1/$FP/$PKG" > "$D/trunc.pt2"
# A sealed cache whose package is corrupt but whose checksums agree: the
# .pt2 rung must catch it.
echo '{"image":"bench/gpu-aoti:recheck-bad","versions":{"pytorch":"2.11.0","triton":"3.6.0"}}' > "$D/rt-bad.json"
FPB=$("$IW" probe --runtime-facts "$D/rt-bad.json" | python3 -c "import json,sys;print(json.load(sys.stdin)['fingerprint']['id'])")
rm -rf "$V"
tm prepare-bad "$IW" prepare --root "$VOL" --fingerprint "$FPB" --job-uid job-bad --view "$V"
mkdir -p "$V/inductor/aoti" && cp "$D/trunc.pt2" "$V/$PKG"
tm seal-bad "$IW" seal --root "$VOL" --fingerprint "$FPB" --job-uid job-bad --node-facts "$NODE" \
  --runtime-facts "$D/rt-bad.json" --termination-log "$RES/seal-bad.term"
tm verify-bad "$IW" verify --root "$VOL" --fingerprint "$FPB" --level LoadTest --node-facts "$NODE" --view "$V" --json --no-quarantine
# The gate itself (a model pod's init container) must refuse it too, and
# quarantine it, now that wait runs the .pt2 rung at LoadTest.
rm -rf "$V"
tm wait-bad "$IW" wait --root "$VOL" --fingerprint "$FPB" --view "$V" --mode Shared --verify LoadTest --timeout 20s
ls "$VOL/v1/.quarantine" > "$RES/quarantine-after-wait-bad.txt" 2>&1; cat "$RES/quarantine-after-wait-bad.txt"
python3 bench/gpu/summarize.py "$RES" > "$OUT/aoti-recheck.json"
