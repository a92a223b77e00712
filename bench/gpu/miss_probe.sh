#!/bin/bash
# bench/gpu/miss_probe.sh: what a serving process compiles after its gate, on
# a torch.compile(mode="max-autotune") attention layer (autotune_attn.py).
#
# Through the project's own programs: initwarm prepare -> one cold warmup
# process through the view -> a copy of the staging view as it is then (what
# a warmup that runs its command once would seal) -> the product's
# convergence passes on the same view (initwarm converge) -> initwarm seal of
# both states under two fingerprints.
# For each: initwarm wait (Copy) + a fresh model process; the same process
# again on that now-warm copy (the delivery limit: a process on its own warm
# local cache); initwarm wait (Shared: the layered view) on a read-only bind
# mount of the volume + a fresh model process. Each model process lists
# every file and directory it created in the view; after each, `initwarm
# misses --json` reports what the product counts as runtime misses;
# erofs_trace/ logs every write that failed (a read-only view's silent
# fallbacks).
#
# Needs: initwarm at $IW (static; bench/gpu/carry.sh), python3 with
# torch+triton, a GPU. Results: $OUT/miss-probe.json, $OUT/miss-probe.log.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/kc-out}
mkdir -p "$OUT"
IW=${IW:-$ROOT/build-gpu/carry/bin/initwarm}
export RES=${RES:-/tmp/kc-miss}
rm -rf "$RES"
source "$ROOT/bench/gpu/lib.sh"
VOL=${VOL:-/tmp/kc-vol-miss}
D=${D:-/tmp/kc-data-miss}
RO=${RO:-/tmp/kc-vol-miss-ro}
umount "$RO" 2>/dev/null
rm -rf "$VOL" "$D" "$V" "$RO"
mkdir -p "$VOL" "$D" "$RO"
SHAPES=${SHAPES:-128,256,512}
exec > >(tee "$OUT/miss-probe.log") 2>&1
W=(python3 "$ROOT/bench/gpu/autotune_attn.py" --shapes "$SHAPES")
export TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1

"$IW" probe > "$D/probe.json"
NODE=$(python3 -c "import json;print(json.dumps(json.load(open('$D/probe.json'))['node']))")
VERS=$(python3 -c "import torch,triton;print(torch.__version__.split('+')[0], triton.__version__)")
read -r TORCH_V TRITON_V <<< "$VERS"
echo "{\"image\":\"bench/miss:run\",\"versions\":{\"pytorch\":\"$TORCH_V\",\"triton\":\"$TRITON_V\"},\"env\":{\"TRITON_CACHE_AUTOTUNING\":\"1\"}}" > "$D/rt.json"
FP=$("$IW" probe --runtime-facts "$D/rt.json" | python3 -c "import json,sys;print(json.load(sys.stdin)['fingerprint']['id'])")
log "fingerprint $FP; node $NODE"

# One cold warmup process, then a copy of its staging view (what a warmup
# that runs its command once seals), then the product's passes on the same
# view until one adds nothing.
rm -rf "$V"
"$IW" prepare --root "$VOL" --fingerprint "$FP" --job-uid job-miss --view "$V" || exit 1
log "warmup through the view ($(readlink "$V"))"
run_one warmup 900 "${W[@]}"
cp -a "$(readlink -f "$V")" "$D/after-one-process"
log "the product's convergence passes on the same staging view"
"$IW" converge --view "$V" --max-passes 4 --record "$RES/convergence.json" -- \
  "${W[@]}" --out "$RES/warmup2.json" > "$RES/converge.log" 2>&1 || { tail -5 "$RES/converge.log"; exit 1; }
grep "initwarm converge" "$RES/converge.log"
# The once-run cache is sealed under a fingerprint of its own (another image name).
sed 's/miss:run/miss:once/' "$D/rt.json" > "$D/rt-once.json"
FP1=$("$IW" probe --runtime-facts "$D/rt-once.json" | python3 -c "import json,sys;print(json.load(sys.stdin)['fingerprint']['id'])")
seal_fp() {  # seal_fp FP OWNER RUNTIME_FACTS [seal flags...]
  local fp=$1 owner=$2 rt=$3; shift 3
  "$IW" seal --root "$VOL" --fingerprint "$fp" --job-uid "$owner" --node-facts "$NODE" \
    --runtime-facts "$rt" --termination-log "$RES/seal-$owner.term" "$@" > /dev/null \
    || { cat "$RES/seal-$owner.term"; exit 1; }
}
seal_fp "$FP" job-miss "$D/rt.json" --convergence-record "$RES/convergence.json"
rm -rf "$V"
"$IW" prepare --root "$VOL" --fingerprint "$FP1" --job-uid job-once --view "$V" > /dev/null || exit 1
cp -a "$D/after-one-process/." "$(readlink -f "$V")/"
seal_fp "$FP1" job-once "$D/rt-once.json"

export PYTHONPATH=$ROOT/bench/gpu/erofs_trace${PYTHONPATH:+:$PYTHONPATH}
mount --bind "$VOL" "$RO" && mount -o remount,bind,ro "$RO" || log "read-only bind mount failed"
# misses NAME: the product's own count of what the last process compiled
# into the view after its gate.
misses() { "$IW" misses --view "$V" --json > "$RES/misses-$1.json" 2> "$RES/misses-$1.err"; }
for case in once:$FP1 settled:$FP; do
  name=${case%%:*}; fp=${case#*:}
  rm -rf "$V"
  "$IW" wait --root "$VOL" --fingerprint "$fp" --view "$V" --local-dir "$KC_VIEW_ROOT/local" \
    --mode Copy --verify Checksums --timeout 60s --termination-log "$RES/wait-copy-$name.term" > /dev/null
  log "$name: copy pod"
  KC_FS_TRACE=$RES/fs-copy-$name.tsv run_one "copy-$name" 900 "${W[@]}"
  misses "copy-$name"
  log "$name: the same pod again on its own warm copy (the delivery limit)"
  KC_FS_TRACE=$RES/fs-again-$name.tsv run_one "again-$name" 900 "${W[@]}"
  misses "again-$name"
  rm -rf "$V"
  "$IW" wait --root "$RO" --fingerprint "$fp" --view "$V" --local-dir "$KC_VIEW_ROOT/local" \
    --mode Shared --verify Checksums --timeout 60s --termination-log "$RES/wait-shared-$name.term" > /dev/null
  log "$name: shared pod (read-only volume)"
  KC_FS_TRACE=$RES/fs-shared-$name.tsv run_one "shared-$name" 900 "${W[@]}"
  misses "shared-$name"
done
if [ "${NV_PROBE:-0}" = 1 ]; then
  # Is the read-only view's extra time the CUDA driver's ComputeCache (it
  # updates its index in place, and a read-only directory disables it)?
  log "published nv/: $(find "$VOL/v1/$FP/nv" -type f 2>/dev/null | wc -l) files"
  rm -rf "$V" "$D/nv-rw"
  "$IW" wait --root "$RO" --fingerprint "$FP" --view "$V" --local-dir "$KC_VIEW_ROOT/local" \
    --mode Shared --verify Checksums --timeout 60s --termination-log "$RES/wait-shared-nv.term" > /dev/null
  cp -a "$VOL/v1/$FP/nv" "$D/nv-rw" 2>/dev/null || mkdir -p "$D/nv-rw"
  log "settled: shared pod, ComputeCache on a writable copy"
  CUDA_CACHE_PATH=$D/nv-rw run_one shared-nv-rw 900 "${W[@]}"
  log "settled: shared pod again (read-only ComputeCache)"
  run_one shared-again 900 "${W[@]}"
  rm -rf "$V"
  "$IW" wait --root "$VOL" --fingerprint "$FP" --view "$V" --local-dir "$KC_VIEW_ROOT/local" \
    --mode Copy --verify Checksums --timeout 60s --termination-log "$RES/wait-copy-nv.term" > /dev/null
  log "settled: copy pod with the ComputeCache disabled"
  CUDA_CACHE_DISABLE=1 run_one copy-nv-off 900 "${W[@]}"
fi
umount "$RO"
for f in "$RES"/fs-*.tsv; do [ -f "$f" ] && { log "failed writes, $(basename "$f"): $(wc -l < "$f")"; cut -f1,2,3 "$f" | sed 's/[0-9A-Z]\{20,\}/<hash>/g' | sort | uniq -c | sort -rn | head -8; }; done

python3 - "$RES" "$OUT/miss-probe.json" <<'PY'
import json, os, sys
res, out = sys.argv[1], sys.argv[2]
runs = {}
for n in ("warmup", "warmup2", "copy-once", "again-once", "shared-once", "copy-settled", "again-settled", "shared-settled",
          "shared-nv-rw", "shared-again", "copy-nv-off"):
    p = f"{res}/{n}.json"
    runs[n] = json.load(open(p)) if os.path.exists(p) else {"missing": True}
    m = f"{res}/misses-{n}.json"
    if os.path.exists(m) and os.path.getsize(m) > 0:
        runs[n]["runtime_misses"] = json.load(open(m))["misses"]
summary = {"runs": runs}
json.dump(summary, open(out, "w"), indent=1)
print(f"{'run':14} {'first pass ms':>13} {'per shape ms':>15} {'created':>7} {'misses':>6} {'fx hit':>6} {'fx miss':>7} {'precompile':>10}  error")
for n, r in runs.items():
    if r.get("missing"):
        print(f"{n:14} missing"); continue
    ind = r.get("inductor", {})
    shapes = "/".join(str(round(x["first_ms"])) for x in r.get("shapes", []))
    nm = len(r["runtime_misses"]) if "runtime_misses" in r else "-"
    print(f"{n:14} {r['first_pass_ms']:13.0f} {shapes:>15} {r['created_count']:7d} {nm:>6} {r['fxgraph_cache_hit']:6d} "
          f"{r['fxgraph_cache_miss']:7d} {ind.get('select_algorithm_precompile', 0):10d}  {(r.get('error') or '')[:80]}")
for n in ("copy-once", "shared-once", "copy-settled", "shared-settled"):
    for m in runs.get(n, {}).get("runtime_misses", []):
        print(f"runtime miss in {n}: {m['framework']} {m['detail']} ({m['files']} files)")
for n in ("warmup2", "copy-once", "shared-once", "copy-settled"):
    r = runs.get(n, {})
    made = sorted({c.split("/")[-1] for c in r.get("created", []) if not c.endswith("/")})
    print(f"created by {n}: {r.get('created_count')} entries; file names: {made[:12]}")
PY
