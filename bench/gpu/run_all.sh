#!/bin/bash
# bench/gpu/run_all.sh: the GPU cold-start measurements, in one run, through the
# project's own programs (docs/benchmarks.md has the results and how to
# reproduce them).
#
# For each workload (Triton family, torch.compile blocks, AOTInductor):
#   initwarm prepare -> warmup writing through the cache view -> initwarm
#   seal -> a cold process (empty cache) -> initwarm wait (shared) + a fresh
#   model process -> initwarm wait (copy) + a fresh model process -> four
#   processes at once, cold and warm.
# Then the validation ladder on real bad caches, `initwarm probe` against
# nvidia-smi, and the GPU-only gtests. Results: $OUT/results.json (one
# object: raw per-process JSON + summary), $OUT/log.txt.
#
# Needs: the static initwarm binary and the gtest binaries in
# build-gpu/carry/bin (bench/gpu/carry.sh builds them on any x86-64 Linux),
# python3 with torch+triton, nvcc, cmake, a GPU. KC_BENCH_FAKE=1 swaps the
# GPU workloads for a file-writing stub (to test this script without a GPU).
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/kc-out}
mkdir -p "$OUT"
CARRY=${CARRY:-$ROOT/build-gpu/carry}
IW=${IW:-$CARRY/bin/initwarm}
export RES=${RES:-/tmp/kc-results}
rm -rf "$RES"
source "$ROOT/bench/gpu/lib.sh"
VOL=${VOL:-/tmp/kc-vol}
D=${D:-/tmp/kc-data}
rm -rf "$VOL" "$D" "$V"
mkdir -p "$VOL" "$D"
FAKE=${KC_BENCH_FAKE:-0}
LEVEL=LoadTest
[ "$FAKE" = 1 ] && LEVEL=TargetArch  # no GPU: the load test cannot run
exec > >(tee "$OUT/log.txt") 2>&1
tm() { local n=$1; shift; python3 "$ROOT/bench/gpu/timecmd.py" "$RES/initwarm-$n.json" "$@"; }
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

log "initwarm: $IW ($(ls -la "$IW" | awk '{print $5}') bytes)"
ldd "$IW" 2>&1 | sed 's/^/  /'

# ---------------------------------------------------------------- probe --
log "probe vs nvidia-smi"
if [ "$FAKE" = 1 ]; then
  echo '{"gpuProduct":"NVIDIA-H200","computeCapability":"9.0","driver":"580.159.04","cudaDriver":"13.0","arch":"amd64"}' > "$D/facts.json"
  PROBE=("${IW_TESTING:-$ROOT/build/initwarm/testing/initwarm-testing}" probe --facts-file "$D/facts.json")  # the test build: the shipped initwarm has no --facts-file
  echo "NVIDIA H200, 9.0, 580.159.04" > "$RES/nvidia-smi.csv"
else
  PROBE=("$IW" probe)
  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader > "$RES/nvidia-smi.csv"
fi
tm probe "${PROBE[@]}"
python3 - "$RES" <<'PY'
import json, sys
res = sys.argv[1]
p = json.load(open(f"{res}/initwarm-probe.json"))["json"]["node"]
name, cc, drv = [x.strip() for x in open(f"{res}/nvidia-smi.csv").read().splitlines()[0].split(",")]
gfd = name.replace(" ", "-")
r = {"nvidia_smi": {"name": name, "compute_cap": cc, "driver_version": drv},
     "probe": p, "gfd_spelling_of_smi_name": gfd,
     "agree": p["gpuProduct"] == gfd and p["computeCapability"] == cc and p["driver"] == drv}
json.dump(r, open(f"{res}/probe-compare.json", "w"), indent=1)
print("  probe agrees with nvidia-smi:", r["agree"], p)
PY
NODE=$(jget "$RES/initwarm-probe.json" 'json.dumps(d["json"]["node"])')

VERS=$(python3 -c "import torch,triton;print(torch.__version__.split('+')[0], triton.__version__)" 2>/dev/null || echo "0 0")
read -r TORCH_V TRITON_V <<< "$VERS"
# fp_for NAME IMAGE [extra json for runtime]: writes $D/rt-NAME.json, prints the fingerprint id.
fp_for() {
  echo "{\"image\":\"$2\",\"versions\":{\"pytorch\":\"$TORCH_V\",\"triton\":\"$TRITON_V\"},\"env\":{\"TRITON_CACHE_AUTOTUNING\":\"1\"}}" > "$D/rt-$1.json"
  "${PROBE[@]}" --runtime-facts "$D/rt-$1.json" | python3 -c "import json,sys;print(json.load(sys.stdin)['fingerprint']['id'])"
}

# ------------------------------------------------------ kc-aoti-check --
export KC_AOTI_CHECK=/tmp/build-aoti/kc-aoti-check
if [ "$FAKE" != 1 ]; then
  log "build kc-aoti-check against this machine's libtorch"
  TP=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
  ( cmake -S initwarm/aoti -B /tmp/build-aoti -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$TP" -DCMAKE_CXX_FLAGS="-I$CARRY/include" \
    && cmake --build /tmp/build-aoti --target kc-aoti-check ) > "$RES/aoti-helper-build.log" 2>&1 \
    || { echo "  kc-aoti-check build failed"; tail -20 "$RES/aoti-helper-build.log";
         [ -x "$CARRY/bin/kc-aoti-check.phase1" ] && mkdir -p /tmp/build-aoti &&
         cp "$CARRY/bin/kc-aoti-check.phase1" "$KC_AOTI_CHECK" && echo "  using the phase-1 build"; }
fi

# waitview MODE NAME FP: `initwarm wait` builds the view (shared: symlink
# into the volume; copy: a private copy at the same path) after validating
# up to the load test. Falls back to verify + ln/cp where wait is missing.
HAVE_WAIT=0
"$IW" wait --help > /dev/null 2>&1 && HAVE_WAIT=1
waitview() {
  local mode=$1 name=$2 fp=$3
  rm -rf "$V"
  if [ $HAVE_WAIT = 1 ]; then
    local m=Shared; [ "$mode" = copy ] && m=Copy
    tm "wait-$mode-$name" "$IW" wait --root "$VOL" --fingerprint "$fp" --view "$V" \
      --local-dir "$KC_VIEW_ROOT/local" --mode $m --verify $LEVEL --timeout 120s \
      --termination-log "$RES/wait-$mode-$name.term"
  else
    if [ "$mode" = shared ]; then
      tm "wait-$mode-$name" bash -c "'$IW' verify --root '$VOL' --fingerprint '$fp' --level $LEVEL --node-facts '$NODE' --view '$V' --json && ln -sfn '$VOL/v1/$fp' '$V'"
    else
      tm "wait-$mode-$name" bash -c "'$IW' verify --root '$VOL' --fingerprint '$fp' --level $LEVEL --node-facts '$NODE' --view '$V' --json && cp -a '$VOL/v1/$fp' '$V'"
    fi
  fi
}

# prepare_seal NAME FP CMD...: prepare, run the warmup CMD through the view, seal.
prepare() {
  rm -rf "$V"  # a copy-mode view is a real directory; prepare replaces only links
  tm "prepare-$1" "$IW" prepare --root "$VOL" --fingerprint "$2" --job-uid "job-$1" --view "$V"
}
seal() {
  tm "seal-$1" "$IW" seal --root "$VOL" --fingerprint "$2" --job-uid "job-$1" \
    --node-facts "$NODE" --runtime-facts "$D/rt-$1.json" --termination-log "$RES/seal-$1.term"
}

wl_cmd() {  # the model-process command of a workload
  if [ "$FAKE" = 1 ]; then echo "python3 $ROOT/bench/gpu/fake_workload.py $1"; return; fi
  case $1 in
    triton) echo "python3 $ROOT/bench/gpu/triton_family.py";;
    inductor) echo "python3 $ROOT/bench/gpu/inductor_blocks.py";;
  esac
}

# -------------------------------------------------- triton, inductor --
declare -A FP
for w in triton inductor; do
  FP[$w]=$(fp_for $w "bench/gpu-$w:run")
  read -r -a CMD <<< "$(wl_cmd $w)"
  TO=300
  log "== $w (fingerprint ${FP[$w]})"
  prepare $w "${FP[$w]}"
  log "$w: warmup through the view ($(readlink "$V"))"
  run_one "$w-warmup" $TO "${CMD[@]}"
  seal $w "${FP[$w]}"
  log "$w: cold (empty cache at the view path)"
  view_link "$D/$w-cold"; run_one "$w-cold" $TO "${CMD[@]}"; rm -rf "$D/$w-cold"
  log "$w: wait (shared) + model process"
  waitview shared $w "${FP[$w]}"; run_one "$w-shared" $TO "${CMD[@]}"
  log "$w: wait (copy) + model process"
  waitview copy $w "${FP[$w]}"; run_one "$w-copy" $TO "${CMD[@]}"
  if [ $w = inductor ]; then
    # Same copy view, Inductor's compile worker pool off: is the pool's
    # start-up part of the warm first batch?
    TORCHINDUCTOR_COMPILE_THREADS=1 run_one "$w-copy-ct1" $TO "${CMD[@]}"
  fi
done

# ------------------------------------------------------------- aoti --
FP[aoti]=$(fp_for aoti "bench/gpu-aoti:run")
log "== aoti (fingerprint ${FP[aoti]})"
prepare aoti "${FP[aoti]}"
PKG_REL=inductor/aoti/model.pt2
if [ "$FAKE" = 1 ]; then
  mkdir -p "$V/inductor/aoti"; head -c 100000 /dev/urandom > "$V/$PKG_REL"
else
  tm aoti-build python3 "$ROOT/bench/gpu/aoti_build.py" --out "$V/$PKG_REL" --result "$RES/aoti-build.json"
  # The warmup also runs the package the way the model server will (C++
  # loader), so what the driver JIT-compiles on that path (one CUDA
  # ComputeCache entry, seen on the H200) is sealed with the cache instead
  # of being written into it by the first model process.
  [ -x "$KC_AOTI_CHECK" ] && tm aoti-warmup-run "$KC_AOTI_CHECK" --package "$V/$PKG_REL" --runs 3
fi
seal aoti "${FP[aoti]}"
waitview shared aoti "${FP[aoti]}"
if [ -x "$KC_AOTI_CHECK" ]; then
  for i in 1 2; do "$KC_AOTI_CHECK" --package "$V/$PKG_REL" --runs 50 > "$RES/aoti-run-$i.json"; cat "$RES/aoti-run-$i.json"; done
  "$KC_AOTI_CHECK" --package "$V/$PKG_REL" --runs 50 --prime > "$RES/aoti-prime.json"; cat "$RES/aoti-prime.json"
  CUDA_MODULE_LOADING=EAGER "$KC_AOTI_CHECK" --package "$V/$PKG_REL" --runs 50 > "$RES/aoti-eager.json"; cat "$RES/aoti-eager.json"
  # The check as `initwarm verify` would run it (child process, timed).
  tm aoti-check "$KC_AOTI_CHECK" --package "$V/$PKG_REL" --runs 3
fi

# ----------------------------------------------------------- ladder --
log "== validation ladder on real bad caches"
SRC=$VOL/v1/${FP[triton]}
# bad_cache NAME MUTATION: a new fingerprint whose staging gets a copy of the
# sealed Triton cache, then MUTATION (a shell snippet run in the view), then seal.
bad_cache() {
  local name=$1 mutate=$2
  local fp; fp=$(fp_for "$name" "bench/gpu-$name:bad")
  {
    prepare "$name" "$fp"
    cp -a "$SRC/triton" "$V/"
    (cd "$V" && eval "$mutate")
    seal "$name" "$fp"
  } >&2
  echo "$fp"
}
ladder() {  # ladder NAME FP [extra verify flags]: verify at LoadTest, record
  local name=$1 fp=$2; shift 2
  tm "ladder-$name" "$IW" verify --root "$VOL" --fingerprint "$fp" --level $LEVEL \
    --node-facts "$NODE" --view "$V" --json "$@"
  local q; q=$(ls -d "$VOL"/v1/.quarantine/"$fp"-* 2>/dev/null | head -1)
  python3 - "$RES/initwarm-ladder-$name.json" "$q" <<'PY'
import json, os, sys
p, q = sys.argv[1], sys.argv[2]
r = json.load(open(p))
r["quarantined_to"] = q
r["reason_file"] = open(os.path.join(q, "REASON")).read()[:2000] if q and os.path.exists(os.path.join(q, "REASON")) else None
json.dump(r, open(p, "w"), indent=1)
print("    quarantined:", bool(q), (r["reason_file"] or "").splitlines()[0] if r["reason_file"] else "")
PY
}
first_cubin() { find "$V/triton" -name '*.cubin' | sort | head -1; }

# 1. A cache sealed under another fingerprint, found where this pod's is.
POD=$(fp_for pod "bench/gpu-pod:run")
OTHER=$(bad_cache other ':')
mv "$VOL/v1/$OTHER" "$VOL/v1/$POD"
ladder other-fingerprint "$POD"
# 2. One flipped byte in a cubin's ELF header, sealed as is (sha256 agrees;
#    only the load test can tell).
FLIP=$(bad_cache flipped-header 'f=$(find triton -name "*.cubin" | sort | head -1); python3 -c "import sys;p=sys.argv[1];b=bytearray(open(p,\"rb\").read());b[46]^=0x40;open(p,\"wb\").write(b)" "$f"')
ladder flipped-header "$FLIP"
# 3. One flipped byte in the middle of a cubin AFTER sealing: the checksum level.
MID=$(bad_cache flipped-after-seal ':')
f=$(find "$VOL/v1/$MID/triton" -name '*.cubin' | sort | head -1)
python3 -c "import sys;p=sys.argv[1];b=bytearray(open(p,'rb').read());b[len(b)//2]^=0x01;open(p,'wb').write(b)" "$f"
ladder flipped-after-seal "$MID"
# 4. A cubin for another architecture (sm_100, compiled by Triton's own
#    compiler) in place of an sm_90 one, metadata untouched: the load test.
if [ "$FAKE" != 1 ]; then
  TRITON_CACHE_DIR=$D/foreign python3 "$ROOT/bench/gpu/foreign_arch.py" > "$D/foreign.json" 2> "$D/foreign.log"
  FOREIGN_CUBIN=$(jget "$D/foreign.json" 'd["cubin"]')
  FOREIGN_DIR=$(jget "$D/foreign.json" 'd["dir"]')
else
  mkdir -p "$D/foreign/XX"; head -c 4096 /dev/urandom > "$D/foreign/XX/k.cubin"
  echo '{"name":"k","target":{"backend":"cuda","arch":100,"warp_size":32}}' > "$D/foreign/XX/k.json"
  FOREIGN_CUBIN=$D/foreign/XX/k.cubin; FOREIGN_DIR=$D/foreign/XX
fi
ARCH=$(bad_cache foreign-cubin "cp '$FOREIGN_CUBIN' \"\$(find triton -name '*.cubin' | sort | head -1)\"")
ladder foreign-cubin "$ARCH"
# 5. A whole Triton entry compiled for sm_100 (its metadata says so): the
#    target-arch level.
# Compiled through the view, so its __grp__ paths are view paths like the
# rest of the cache (only target.arch is foreign).
if [ "$FAKE" != 1 ]; then
  ENTRY=$(bad_cache foreign-entry "TRITON_CACHE_DIR=$V/triton python3 '$ROOT/bench/gpu/foreign_arch.py' >&2")
else
  ENTRY=$(bad_cache foreign-entry "cp -a '$FOREIGN_DIR' triton/")
fi
ladder foreign-entry "$ENTRY"
# 6. An AOTInductor package sealed under another fingerprint (another
#    driver), found where this pod's cache is.
if [ -d "$VOL/v1/${FP[aoti]}" ]; then
  POD2=$(fp_for aotipod "bench/gpu-aoti:run-other-driver")
  cp -a "$VOL/v1/${FP[aoti]}" "$VOL/v1/$POD2"
  ladder aoti-other-fingerprint "$POD2"
fi
# 7. A truncated AOTInductor package: the AOTI load test.
if [ -x "$KC_AOTI_CHECK" ] && [ -f "$VOL/v1/${FP[aoti]}/$PKG_REL" ]; then
  head -c 1000000 "$VOL/v1/${FP[aoti]}/$PKG_REL" > "$D/truncated.pt2"
  tm ladder-aoti-truncated "$KC_AOTI_CHECK" --package "$D/truncated.pt2" --runs 2
fi
# The good caches still verify, at every level.
for w in triton inductor aoti; do
  tm "verify-good-$w" "$IW" verify --root "$VOL" --fingerprint "${FP[$w]}" --level $LEVEL \
    --node-facts "$NODE" --view "$V" --json
done

# ------------------------------------------------------------ gtests --
if [ "$FAKE" != 1 ] && [ "${KC_SKIP_GTESTS:-0}" != 1 ]; then
  log "GPU gtests"
  export KC_TEST_NATIVE_SM=90 KC_TEST_AOTI_PACKAGE=$VOL/v1/${FP[aoti]}/$PKG_REL
  [ -f "$D/truncated.pt2" ] && export KC_TEST_AOTI_CORRUPT_PACKAGE=$D/truncated.pt2
  for t in "$CARRY"/bin/*_test; do
    echo "### $(basename "$t")"
    "$t" 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[ *OK|FAILED|Skipped|Failure|Expected|Which is|CUDA_ERROR" | head -40
  done 2>&1 | tee "$OUT/gtest.txt"
fi

# ------------------------------------------------------ four at once --
# Last, and only while the run has time left (the device call has 600 s).
for w in triton inductor; do
  if [ "$SECONDS" -gt "${KC_FOUR_DEADLINE:-450}" ]; then
    log "skipping four-at-once for $w: ${SECONDS}s elapsed"; continue
  fi
  read -r -a CMD <<< "$(wl_cmd $w)"
  log "$w: four processes at once, cold (own empty caches) then warm (shared view)"
  run_four "$w-cold4" 150 cold "${CMD[@]}"
  waitview shared "$w-4" "${FP[$w]}"; run_four "$w-warm4" 150 view "${CMD[@]}"
done

du -sh "$VOL"/v1/* 2>/dev/null
python3 "$ROOT/bench/gpu/summarize.py" "$RES" > "$OUT/results.json"
python3 "$ROOT/bench/gpu/summarize.py" "$RES" --table
