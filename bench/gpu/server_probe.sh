#!/bin/bash
# bench/gpu/server_probe.sh: a server warmup on a GPU, through the project's
# own programs. The server is bench/gpu/http_server.py (torch.compile of an
# attention layer, one graph per sequence length, behind HTTP).
#   1. warmup: initwarm prepare; the server started on the view (as the
#      warmup pod's sidecar); `initwarm drive` waits for /health, sends the
#      plan (three prompt lengths, as the operator expands
#      spec.warmup.server.requests), detaches the view, settles, seals;
#   2. cold: a fresh server with empty private caches, the same requests;
#   3. warm: `initwarm wait --mode Copy` builds the view from the sealed
#      cache, a fresh server, the same requests.
# Needs: initwarm at $IW (static), python3 with torch+triton, a GPU.
# Results: $OUT/server-probe.json, $OUT/server-probe.log.
set -u
ROOT=$(pwd)
OUT=${OUT:-/tmp/kc-out}
mkdir -p "$OUT"
IW=${IW:-$ROOT/build-gpu/carry/bin/initwarm}
export RES=${RES:-/tmp/kc-server}
rm -rf "$RES"
source "$ROOT/bench/gpu/lib.sh"
VOL=${VOL:-/tmp/kc-vol-server}
D=${D:-/tmp/kc-data-server}
rm -rf "$VOL" "$D" "$V"
mkdir -p "$VOL" "$D"
PORT=18000
exec > >(tee "$OUT/server-probe.log") 2>&1
export TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1

"$IW" probe > "$D/probe.json"
NODE=$(python3 -c "import json;print(json.dumps(json.load(open('$D/probe.json'))['node']))")
VERS=$(python3 -c "import torch,triton;print(torch.__version__.split('+')[0], triton.__version__)")
read -r TORCH_V TRITON_V <<< "$VERS"
echo "{\"image\":\"bench/server:run\",\"versions\":{\"pytorch\":\"$TORCH_V\",\"triton\":\"$TRITON_V\"},\"env\":{\"TRITON_CACHE_AUTOTUNING\":\"1\"}}" > "$D/rt.json"
FP=$("$IW" probe --runtime-facts "$D/rt.json" | python3 -c "import json,sys;print(json.load(sys.stdin)['fingerprint']['id'])")
log "fingerprint $FP; node $NODE"

# The plan the operator would hand the driver for
#   requests: [{path: /v1/completions, body: {model: m, max_tokens: 4}, promptTokens: [100, 300, 700]}]
PLAN=$(python3 -c "
import json
calls = []
for n in (100, 300, 700):
    body = {'model': 'm', 'max_tokens': 4, 'prompt': ' '.join(['hello'] * n)}
    calls.append({'method': 'POST', 'path': '/v1/completions', 'label': f'requests[0] prompt={n}',
                  'headers': {'Content-Type': 'application/json'}, 'body': json.dumps(body)})
print(json.dumps(calls))")
server() { python3 "$ROOT/bench/gpu/http_server.py" --port $PORT > "$RES/server-$1.log" 2>&1 & echo $!; }
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
# ask NAME: the three requests against a running server, replies in $RES/NAME.jsonl
ask() {
  for n in 100 300 700; do
    python3 - "$n" <<'PY' >> "$RES/$1.jsonl"
import json, sys, urllib.request
for _ in range(600):
    try:
        urllib.request.urlopen("http://127.0.0.1:18000/health", timeout=2)
        break
    except Exception:
        __import__("time").sleep(0.5)
body = json.dumps({"prompt": " ".join(["hello"] * int(sys.argv[1]))}).encode()
print(urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:18000/v1/completions", body), timeout=900).read().decode())
PY
  done
}

log "== warmup: the server on the view, driven by initwarm drive, sealed"
"$IW" prepare --root "$VOL" --fingerprint "$FP" --job-uid job-warm --view "$V" > /dev/null || exit 1
t0=$(date +%s.%N)
pid=$(server warmup)
KC_WARMUP_REQUESTS=$PLAN "$IW" drive --port $PORT --ready-path /health --timeout 1200 \
  --request-timeout 900 --view "$V" --termination-log "$RES/drive.term" -- \
  seal --root "$VOL" --fingerprint "$FP" --job-uid job-warm --node-facts "$NODE" \
  --runtime-facts "$D/rt.json" --termination-log "$RES/seal.term" > "$RES/drive.out" 2> "$RES/drive.err"
rc=$?
log "drive + seal rc=$rc in $(python3 -c "print(round($(date +%s.%N)-$t0,2))")s"
cat "$RES/drive.err"
stop "$pid"
[ $rc -eq 0 ] || { cat "$RES/drive.term" "$RES/server-warmup.log"; exit 1; }

log "== cold: a fresh server, empty private caches"
for var in TRITON_CACHE_DIR TORCHINDUCTOR_CACHE_DIR CUDA_CACHE_PATH; do :; done
pid=$(TRITON_CACHE_DIR=$RES/cold/triton TORCHINDUCTOR_CACHE_DIR=$RES/cold/inductor CUDA_CACHE_PATH=$RES/cold/nv server cold)
ask cold
stop "$pid"

log "== warm: initwarm wait (Copy) on the sealed cache, a fresh server"
rm -rf "$V"
"$IW" wait --root "$VOL" --fingerprint "$FP" --view "$V" --local-dir "$KC_VIEW_ROOT/local" \
  --mode Copy --verify Checksums --timeout 60s --termination-log "$RES/wait.term" > /dev/null ||
  { log "wait failed: $(cat "$RES/wait.term")"; exit 1; }
pid=$(server warm)
ask warm
stop "$pid"

python3 - "$RES" "$OUT/server-probe.json" <<'PY'
import json, re, sys
res, out = sys.argv[1], sys.argv[2]
rows = lambda n: [json.loads(l) for l in open(f"{res}/{n}.jsonl") if l.strip()]
drive = [(m.group(1), int(m.group(2))) for m in
         re.finditer(r'"([^"]+)" \(POST [^)]*\): HTTP 200 in (\d+) ms', open(f"{res}/drive.err").read())]
seal = json.load(open(f"{res}/seal.term"))
wait = json.load(open(f"{res}/wait.term"))
result = {"drive": drive, "seal": {k: seal.get(k) for k in ("outcome", "files", "bytes")},
          "gate": {k: wait.get(k) for k in ("outcome", "reason", "waitedMs")},
          "cold": rows("cold"), "warm": rows("warm")}
json.dump(result, open(out, "w"), indent=1)
print(f"{'request':22} {'warmup (driver)':>16} {'cold pod':>14} {'warm pod':>14}")
for (label, dms), c, w in zip(drive, result["cold"], result["warm"]):
    print(f"{label:22} {dms:13d} ms {c['ms']:8.0f} ms ({c['compiled']}) {w['ms']:8.0f} ms ({w['compiled']})")
print("seal:", result["seal"], "gate:", result["gate"])
PY
