#!/bin/bash
# bench/gpu/harvest_probe.sh: the fleet learns a shape once, on a GPU, with
# the max-autotune attention layer of autotune_attn.py (static shapes, CUDA
# graphs on).
#
# Through the project's own programs: initwarm prepare + two warmup
# processes over the warmed shapes + initwarm seal. Then per consume mode
# (Copy, then Shared over a read-only bind mount of the volume), four pods
# meet a sequence length the warmup never ran:
#   pod 1: initwarm wait + a fresh process over warmed + new shapes; then
#          `initwarm misses --inbox` (its miss watcher's copy into the
#          volume's inbox and the list of it, named in the report by its
#          sha256) and `initwarm harvest` with that list accepted (the
#          operator's harvest Job): the cache gets a new generation;
#   pods 2-4: initwarm wait on the merged generation + a fresh process;
#          `initwarm misses` counts what each compiled after its gate;
#   pod 4 again on its own view: the delivery limit.
# Needs: initwarm at $IW (static), python3 with torch+triton, a GPU.
# Results: $OUT/harvest-probe.json, $OUT/harvest-probe.log.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/kc-out}
mkdir -p "$OUT"
IW=${IW:-$ROOT/build-gpu/carry/bin/initwarm}
export RES=${RES:-/tmp/kc-harvest}
rm -rf "$RES"
source "$ROOT/bench/gpu/lib.sh"
VOL=${VOL:-/tmp/kc-vol-harvest}
D=${D:-/tmp/kc-data-harvest}
RO=${RO:-/tmp/kc-vol-harvest-ro}
umount "$RO" 2>/dev/null
rm -rf "$VOL" "$D" "$V" "$RO"
mkdir -p "$VOL" "$D" "$RO"
WARM=${WARM:-128,256}
exec > >(tee "$OUT/harvest-probe.log") 2>&1
W=(python3 "$ROOT/bench/gpu/autotune_attn.py")
export TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1

"$IW" probe > "$D/probe.json"
NODE=$(python3 -c "import json;print(json.dumps(json.load(open('$D/probe.json'))['node']))")
VERS=$(python3 -c "import torch,triton;print(torch.__version__.split('+')[0], triton.__version__)")
read -r TORCH_V TRITON_V <<< "$VERS"
echo "{\"image\":\"bench/harvest:run\",\"versions\":{\"pytorch\":\"$TORCH_V\",\"triton\":\"$TRITON_V\"},\"env\":{\"TRITON_CACHE_AUTOTUNING\":\"1\"}}" > "$D/rt.json"
FP=$("$IW" probe --runtime-facts "$D/rt.json" | python3 -c "import json,sys;print(json.load(sys.stdin)['fingerprint']['id'])")
log "fingerprint $FP; node $NODE; warmed shapes $WARM"

"$IW" prepare --root "$VOL" --fingerprint "$FP" --job-uid job-warm --view "$V" > /dev/null || exit 1
# The product's warmup: the command, then convergence passes until one adds nothing.
"$IW" converge --view "$V" --max-passes 4 --record "$RES/convergence.json" -- \
  "${W[@]}" --shapes "$WARM" --out "$RES/warmup.json" > "$RES/warmup.log" 2>&1 || { tail -5 "$RES/warmup.log"; exit 1; }
grep "initwarm converge" "$RES/warmup.log"
"$IW" seal --root "$VOL" --fingerprint "$FP" --job-uid job-warm --node-facts "$NODE" \
  --runtime-facts "$D/rt.json" --convergence-record "$RES/convergence.json" \
  --termination-log "$RES/seal.term" > /dev/null || { cat "$RES/seal.term"; exit 1; }
mount --bind "$VOL" "$RO" && mount -o remount,bind,ro "$RO" || log "read-only bind mount failed"

ready() { tr -d '\n' < "$VOL/v1/$FP/READY"; }
# gate MODE NAME: a fresh view of the current generation, as `initwarm wait` builds it.
gate() {
  local src=$VOL
  [ "$1" = Shared ] && src=$RO
  rm -rf "$V"
  "$IW" wait --root "$src" --fingerprint "$FP" --view "$V" --local-dir "$KC_VIEW_ROOT/local" \
    --mode "$1" --verify Checksums --timeout 60s --termination-log "$RES/wait-$2.term" > /dev/null ||
    { log "wait $2 failed: $(cat "$RES/wait-$2.term")"; return 1; }
}
misses() { "$IW" misses --view "$V" --json > "$RES/misses-$1.json" 2> "$RES/misses-$1.err"; }

for round in Copy:384 Shared:640; do
  mode=${round%%:*} new=${round#*:}
  shapes="$WARM,$new"
  m=$(tr 'A-Z' 'a-z' <<< "$mode")
  log "== $mode: four pods meet seq $new, which the warmup never ran (generation $(ready | cut -c1-12))"
  gate "$mode" "$m-1" || exit 1
  run_one "$m-1" 900 "${W[@]}" --shapes "$shapes"
  # Pod 1's miss watcher: its files into the inbox, listed with their sha256.
  "$IW" misses --view "$V" --json --inbox "$VOL/v1/.inbox" --pod-uid "pod-$m-1" > "$RES/misses-$m-1.json" \
    2> "$RES/inbox-$m-1.log"
  log "pod 1 copied $(grep -c 'harvest: copied' "$RES/inbox-$m-1.log") files into the inbox"
  accept=$(python3 -c "
import json, sys
r = json.load(open('$RES/misses-$m-1.json'))
h = r.get('harvest') or {'files': 0, 'bytes': 0, 'sha256': '0' * 64}
print(json.dumps([dict(uid='pod-$m-1', **h)]))")
  t0=$(date +%s.%N)
  "$IW" harvest --root "$VOL" --fingerprint "$FP" --job-uid "hv-$m" --base-digest "$(ready)" \
    --accept "$accept" --termination-log "$RES/harvest-$m.json" > /dev/null
  log "harvest rc=$? in $(python3 -c "print(round($(date +%s.%N)-$t0,2))")s: $(cut -c1-300 "$RES/harvest-$m.json")"
  for i in 2 3 4; do
    gate "$mode" "$m-$i" || exit 1
    run_one "$m-$i" 900 "${W[@]}" --shapes "$shapes"
    misses "$m-$i"
  done
  log "$mode: pod 4 again on its own view (the delivery limit)"
  run_one "$m-limit" 900 "${W[@]}" --shapes "$shapes"
done
umount "$RO"
"$IW" verify --root "$VOL" --fingerprint "$FP" --level Checksums --no-quarantine > "$RES/verify.txt" 2>&1
log "verify at Checksums: rc=$? $(tail -1 "$RES/verify.txt")"

python3 - "$RES" "$OUT/harvest-probe.json" <<'PY'
import json, os, sys
res, out = sys.argv[1], sys.argv[2]
def load(p):
    return json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) > 0 else None
runs, harvests = {}, {}
for m in ("copy", "shared"):
    harvests[m] = load(f"{res}/harvest-{m}.json")
    for n in ("1", "2", "3", "4", "limit"):
        r = load(f"{res}/{m}-{n}.json") or {"missing": True}
        mm = load(f"{res}/misses-{m}-{n}.json")
        if mm is not None:
            r["runtime_misses"] = len(mm["misses"])
            r["harvest_files"] = (mm.get("harvest") or {}).get("files", 0)
        runs[f"{m}-{n}"] = r
json.dump({"runs": runs, "harvests": harvests}, open(out, "w"), indent=1)
print(f"{'pod':10} {'first pass ms':>13} {'new shape ms':>12} {'misses':>6} {'created':>7}  error")
for n, r in runs.items():
    if r.get("missing"):
        print(f"{n:10} missing"); continue
    new = r["shapes"][-1]["first_ms"] if r.get("shapes") else float("nan")
    print(f"{n:10} {r['first_pass_ms']:13.0f} {new:12.0f} {str(r.get('runtime_misses', '-')):>6} "
          f"{r.get('created_count', 0):7d}  {(r.get('error') or '')[:60]}")
for m, h in harvests.items():
    if h:
        print(f"harvest {m}: {h.get('outcome')} +{h.get('addedFiles')} files ({h.get('addedBytes')} bytes), "
              f"{h.get('conflictCount')} conflicts, {h.get('rejectedCount')} rejected: {h.get('rejected', [])[:2]}")
PY
