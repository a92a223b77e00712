#!/bin/bash
# bench/gpu/converge_probe.sh: does the product's warmup converge, and do
# the pods gated on what it seals compile nothing? On real GPU workloads,
# through the product's own programs, as a warmup Job runs them:
#   initwarm prepare -> initwarm converge (the warmup command, then
#   convergence passes in fresh processes until one adds nothing; the record
#   says what each run added) -> initwarm seal --convergence-record
# then, per workload, two Copy pods (initwarm wait --mode Copy + a fresh
# model process), the same process again on its own warm copy (the delivery
# limit), and two Shared pods on a read-only bind mount of the volume; after
# each, `initwarm misses --json` counts what it compiled after its gate.
# Workloads: autotune_attn.py (torch.compile max-autotune attention layer,
# three static sequence lengths) and hf_llama.py (a Hugging Face Llama under
# default torch.compile). For the attention layer, the same warmup sealed
# after its first process (what a warmup without passes seals), with one
# Copy and one Shared pod on it, side by side.
# VARIANTS="NAME:VAR=VALUE,VAR=VALUE ..." adds attention warmups under other
# settings (passes to convergence and steady per-call time each).
#
# Needs: initwarm at $IW (default .gpu-carry/initwarm: `mkdir -p .gpu-carry &&
# strip -o .gpu-carry/initwarm build/initwarm/initwarm`), python3 with torch, triton,
# transformers; a GPU. Results: $OUT/converge-probe.json and .log.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/kc-out}
mkdir -p "$OUT"
IW=${IW:-$ROOT/.gpu-carry/initwarm}
export RES=${RES:-/tmp/kc-conv}
rm -rf "$RES"
source "$ROOT/bench/gpu/lib.sh"
VOL=${VOL:-/tmp/kc-vol-conv}
D=${D:-/tmp/kc-data-conv}
RO=${RO:-/tmp/kc-vol-conv-ro}
umount "$RO" 2>/dev/null
rm -rf "$VOL" "$D" "$V" "$RO"
mkdir -p "$VOL" "$D" "$RO"
MAXP=${MAXP:-4}
WORKLOADS=${WORKLOADS:-attn llama}
exec > >(tee "$OUT/converge-probe.log") 2>&1
export TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1
FAKE=${KC_BENCH_FAKE:-0}  # 1: fake_workload.py and fixed facts, to test the plumbing without a GPU
cmd_of() {
  [ "$FAKE" = 1 ] && { echo "python3 $ROOT/bench/gpu/fake_workload.py $1"; return; }
  case $1 in
    attn) echo "python3 $ROOT/bench/gpu/autotune_attn.py --shapes ${SHAPES:-128,256,512}" ;;
    llama) echo "python3 $ROOT/bench/gpu/hf_llama.py --shapes ${LLAMA_SHAPES:-128,256}" ;;
  esac
}

PROBE=("$IW" probe)
if [ "$FAKE" = 1 ]; then
  echo '{"gpuProduct":"NVIDIA-H200","computeCapability":"9.0","driver":"580.159.04","cudaDriver":"13.0","arch":"amd64"}' > "$D/facts.json"
  PROBE=("${IW_TESTING:-$ROOT/build/initwarm/testing/initwarm-testing}" probe --facts-file "$D/facts.json")  # the test build: the shipped initwarm has no --facts-file
fi
"${PROBE[@]}" > "$D/probe.json"
NODE=$(python3 -c "import json;print(json.dumps(json.load(open('$D/probe.json'))['node']))")
VERS=$(python3 -c "import torch,triton;print(torch.__version__.split('+')[0], triton.__version__)" 2>/dev/null || echo "2.11.0 3.6.0")
read -r TORCH_V TRITON_V <<< "$VERS"
log "node $NODE; torch $TORCH_V triton $TRITON_V"
# fp_of NAME: a runtime facts file and fingerprint id per sealed cache.
fp_of() {
  echo "{\"image\":\"bench/conv:$1\",\"versions\":{\"pytorch\":\"$TORCH_V\",\"triton\":\"$TRITON_V\"},\"env\":{\"TRITON_CACHE_AUTOTUNING\":\"1\"}}" > "$D/rt-$1.json"
  "${PROBE[@]}" --runtime-facts "$D/rt-$1.json" | python3 -c "import json,sys;print(json.load(sys.stdin)['fingerprint']['id'])"
}
seal_fp() {  # seal_fp NAME FP [seal flags...]
  local name=$1 fp=$2; shift 2
  "$IW" seal --root "$VOL" --fingerprint "$fp" --job-uid "job-$name" --node-facts "$NODE" \
    --runtime-facts "$D/rt-$name.json" --termination-log "$RES/seal-$name.term" "$@" > /dev/null \
    || { cat "$RES/seal-$name.term"; return 1; }
}
# warm_converged NAME CMD...: the product's warmup with its passes.
warm_converged() {
  local name=$1; shift
  local fp; fp=$(fp_of "$name")
  rm -rf "$V"
  "$IW" prepare --root "$VOL" --fingerprint "$fp" --job-uid "job-$name" --view "$V" > /dev/null || return 1
  log "$name: warmup with up to $MAXP convergence passes ($fp)"
  local t0=$(date +%s.%N)
  "$IW" converge --view "$V" --max-passes "$MAXP" --record "$RES/conv-$name.json" -- "$@" \
    --out "$RES/warm-$name.json" > "$RES/converge-$name.out" 2> "$RES/converge-$name.err"
  local rc=$?
  grep "initwarm converge" "$RES/converge-$name.err"
  log "$name: converge rc=$rc wall=$(python3 -c "print(round($(date +%s.%N)-$t0,1))")s"
  seal_fp "$name" "$fp" --convergence-record "$RES/conv-$name.json" || return 1
  echo "$fp"
}
misses() { "$IW" misses --view "$V" --json > "$RES/misses-$1.json" 2> "$RES/misses-$1.err"; }
# pods NAME FP COPIES SHAREDS CMD...: gated pods on a sealed cache.
pods() {
  local name=$1 fp=$2 copies=$3 shareds=$4; shift 4
  for i in $(seq "$copies"); do
    rm -rf "$V" "$KC_VIEW_ROOT/local"
    "$IW" wait --root "$VOL" --fingerprint "$fp" --view "$V" --local-dir "$KC_VIEW_ROOT/local" \
      --mode Copy --verify Checksums --timeout 60s --termination-log "$RES/wait.term" > /dev/null
    run_one "copy$i-$name" 900 "$@"; misses "copy$i-$name"
  done
  if [ "$copies" -gt 0 ] && [ "${AGAIN:-1}" = 1 ]; then
    run_one "again-$name" 900 "$@"; misses "again-$name"  # the delivery limit
  fi
  for i in $(seq "$shareds"); do
    rm -rf "$V" "$KC_VIEW_ROOT/local"
    "$IW" wait --root "$RO" --fingerprint "$fp" --view "$V" --local-dir "$KC_VIEW_ROOT/local" \
      --mode Shared --verify Checksums --timeout 60s --termination-log "$RES/wait.term" > /dev/null
    run_one "shared$i-$name" 900 "$@"; misses "shared$i-$name"
  done
}
mount --bind "$VOL" "$RO" && mount -o remount,bind,ro "$RO" || log "read-only bind mount failed"

for w in $WORKLOADS; do
  read -r -a CMD <<< "$(cmd_of "$w")"
  FP=$(warm_converged "$w" "${CMD[@]}" | tail -1) || { log "$w: warmup failed"; continue; }
  pods "$w" "$FP" 2 2 "${CMD[@]}"
  if [ "$w" = attn ] && [ "${ONCE:-1}" = 1 ]; then
    # The same warmup sealed after its first process, as before passes.
    FP1=$(fp_of attn-once)
    rm -rf "$V"
    "$IW" prepare --root "$VOL" --fingerprint "$FP1" --job-uid job-attn-once --view "$V" > /dev/null
    log "attn-once: one warmup process ($FP1)"
    run_one warm-attn-once 900 "${CMD[@]}"
    seal_fp attn-once "$FP1"
    AGAIN=0 pods attn-once "$FP1" 1 1 "${CMD[@]}"
  fi
done
for v in ${VARIANTS:-}; do
  # Within one device call: start a variant only while time is left for it.
  if [ "$SECONDS" -gt "${VARIANTS_UNTIL:-100000}" ]; then log "skipped variant $v: past ${VARIANTS_UNTIL}s"; continue; fi
  name=${v%%:*}; envs=${v#*:}
  read -r -a CMD <<< "$(cmd_of attn)"
  ( IFS=,; for kv in $envs; do export "${kv?}"; done
    FP=$(warm_converged "$name" "${CMD[@]}" | tail -1) && AGAIN=0 pods "$name" "$FP" 1 0 "${CMD[@]}" )
done
umount "$RO"

python3 "$ROOT/bench/gpu/converge_summary.py" "$RES" "$OUT/converge-probe.json"
