#!/usr/bin/env bash
# A server warmup on the real node (tests/cluster/node.sh; root only), the
# chart installed by Helm: the warmup is the model's own Deployment template,
# driven by requests.
#  1. a KernelCache whose spec.warmup.server names a Deployment that does not
#     exist yet: InvalidSpec names spec.warmup.server.workloadRef;
#  2. the Deployment srv appears (images/jit-workload/server.py: an HTTP
#     server that compiles at startup and per request shape, one kernel and
#     one rank_<r>_0 directory per tensor-parallel rank, 2 ranks on 2 GPUs):
#     ONE warmup Job runs its template (the server as a native sidecar, its
#     probes removed, 2 GPUs), `initwarm drive` waits for its readiness
#     probe's path, sends the requests, seals; the sealed cache holds both
#     ranks' directories; the Deployment's gated pod starts and compiles
#     nothing at startup or for the same requests;
#  3. parity: a canary Deployment of the same selector with another
#     VLLM_ variable is admitted with the parity annotation, its gate logs
#     and reports the difference, and it compiles at startup (its cache keys
#     differ);
#  4. the Deployment rolls to that variable: the fingerprint moves with it, a
#     new warmup Job runs, and the new pod starts with nothing to compile.
# Usage: server_warmup_test.sh <repo root>   (KC_IMAGES_DIR: the archives)
set -euo pipefail
root=$1
source "$root/tests/cluster/node_test_prelude.sh" operator initwarm pause jit-workload
source "$root/scripts/lib/jit_node.sh"
ns=srv
dir=$(mktemp -d /tmp/kc-srv-node.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
k() { "$kubectl" "$@"; }
fail() {
  echo "FAIL: $*"
  k -n "$ns" get pods,jobs -o wide 2>&1 | sed 's/^/  /' || true
  k -n "$ns" get kernelcache srv -o jsonpath='{.status}' 2>&1 | head -c 3000 | sed 's/^/  /' || true
  echo
  k -n "$ns" get events --sort-by=.lastTimestamp 2>&1 | tail -20 | sed 's/^/  /' || true
  for p in $(k -n "$ns" get pods -o name 2>/dev/null); do
    echo "  --- $p"
    k -n "$ns" logs "$p" --all-containers --tail=15 2>&1 | sed 's/^/  /' || true
  done
  k -n kernelcache-system logs -l app.kubernetes.io/name=kernelcache --tail=20 2>&1 | sed 's/^/  /' || true
  exit 1
}
trap 'cluster down --purge >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
echo "== real node up"
cluster up --with-node --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"
echo "== helm install charts/kernelcache"
out=$(jit_helm_install --set logFormat=text 2>&1) || fail "helm install: $out"
k create namespace "$ns" >/dev/null
vol="$dir/volumes/srv"
jit_hostpath_pv srv-cache kc-srv "$vol"

# srv_deployment <name> <VLLM_SHAPE_MODE>: the server, 2 ranks on 2 GPUs. A
# liveness probe that would kill a slow first compile (the warmup drops it).
srv_deployment() {
  k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: 1
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}
  selector: {matchLabels: {app: srv, run: $1}}
  template:
    metadata: {labels: {app: srv, run: $1}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: server
        image: $KC_JIT_IMAGE
        imagePullPolicy: Never
        command: [/usr/bin/python3, /opt/jit/app/server.py]
        args: [--port, "8000", --ranks, "2"]
        env: [{name: VLLM_SHAPE_MODE, value: "$2"}]
        ports: [{name: http, containerPort: 8000}]
        readinessProbe: {httpGet: {path: /health, port: http}, periodSeconds: 1}
        livenessProbe: {httpGet: {path: /health, port: http}, periodSeconds: 1, failureThreshold: 1}
        resources: {limits: {nvidia.com/gpu: "2"}}
YAML
}

echo "== KernelCache srv: the warmup is Deployment srv's own template"
k -n "$ns" apply -f - >/dev/null <<'EOF2'
apiVersion: kernelcache.io/v1alpha1
kind: KernelCache
metadata: {name: srv}
spec:
  podSelector: {matchLabels: {app: srv}}
  nodeSelector: {kernelcache.io/real-node: "true"}
  runtime: {triton: "3.6.0"}
  warmup:
    server:
      workloadRef: {kind: Deployment, name: srv}
      parallel: {tensor: 2}
      requests:
      - path: /v1/completions
        body: {model: srv, max_tokens: 4}
        promptTokens: [8, 200]
    backoffLimit: 0
    activeDeadlineSeconds: 300
  retention: {staleAfter: 20s}
  storage: {storageClassName: kc-srv, size: 1Gi}
EOF2
invalid() {
  k -n "$ns" get kernelcache srv -o jsonpath='{.status.conditions[?(@.type=="InvalidSpec")].message}' |
    grep "spec.warmup.server.workloadRef: Deployment srv not found"
}
msg=$(until_output 60 invalid) || fail "no InvalidSpec naming the missing Deployment"
echo "ok: before the Deployment exists: $msg"

# The webhook must know the KernelCache before the Deployment's pod is
# admitted (right after install the operator's informer may still be
# relisting a watch the new CRD's storage refused): five dry runs in a row
# gated, as the JIT test waits for them.
jit_wait_gating "$ns" srv >/dev/null || fail "the webhook never gated a dry-run pod of app=srv"
echo "== Deployment srv: its pod waits in its gate while its own template warms the cache"
srv_deployment srv a
t0=$(date +%s)
ready_fp() {
  k -n "$ns" get kernelcache srv -o json | python3 -c '
import json, sys
want = sys.argv[1]
for f in json.load(sys.stdin).get("status", {}).get("fingerprints", []):
    if f.get("state") == "Ready" and f["id"] != want:
        print(f["id"])' "${1:-}"
}
fp=$(until_output 240 ready_fp) || fail "no fingerprint Ready"
ready_s=$(($(date +%s) - t0))
jobs=$(k -n "$ns" get jobs -l kernelcache.io/component=warmup -o jsonpath='{.items[*].metadata.name}')
[ "$(wc -w <<<"$jobs")" = 1 ] || fail "want one warmup Job, got: $jobs"
job=$jobs
wpod=$(k -n "$ns" get pods -l job-name="$job" -o json)
python3 - "$wpod" <<'PY' || fail "the warmup pod's shape"
import json, sys
pod = json.loads(sys.argv[1])["items"][0]["spec"]
inits = {c["name"]: c for c in pod["initContainers"]}
srv = inits["server"]
assert srv.get("restartPolicy") == "Always", "the server is not a native sidecar"
assert "livenessProbe" not in srv and "readinessProbe" not in srv, "probes kept"
assert srv["resources"]["limits"]["nvidia.com/gpu"] == "2", srv["resources"]
assert [c["name"] for c in pod["containers"]] == ["seal"]
assert pod["containers"][0]["args"][0] == "drive", pod["containers"][0]["args"]
assert pod.get("shareProcessNamespace") is True, "convergence passes need the shared namespace"
assert {"name": "KC_WARMUP_SERVER", "value": "1"} in srv["env"], srv["env"]
print("ok: warmup pod: prepare, server (native sidecar, no probes, 2 GPUs), seal = initwarm drive")
PY
drive_log=$(k -n "$ns" logs "job/$job" -c seal)
grep -q 'call 1 .*HTTP 200' <<<"$drive_log" || fail "the driver did not send both requests: $drive_log"
echo "$drive_log" | grep -E '^initwarm drive: call' | sed 's/^/   /'
# Convergence passes: the driver restarted the server (a fresh process)
# and replayed the plan; this server compiles nothing new in a second
# process, so one pass proves the cache.
grep -q 'initwarm drive: convergence pass 1: restarting the server' <<<"$drive_log" ||
  fail "the driver did not restart the server for a convergence pass: $drive_log"
grep -q 'initwarm converge: converged after 1 pass' <<<"$drive_log" ||
  fail "the driver's log does not say converged after 1 pass: $drive_log"
restarts=$(k -n "$ns" get pods -l job-name="$job" -o jsonpath='{.items[0].status.initContainerStatuses[?(@.name=="server")].restartCount}')
[ "${restarts:-0}" -ge 1 ] || fail "the server sidecar was not restarted (restartCount ${restarts:-none})"
conv=$(k -n "$ns" get kernelcache srv -o jsonpath="{.status.fingerprints[?(@.id==\"$fp\")].convergence.message}")
[ "$conv" = "converged after 1 pass" ] || fail "status convergence: '$conv'"
echo "ok: server form: the server restarted $restarts time(s) for the passes; status: $conv"
for r in 0 1; do
  for b in 128 1024 4096; do
    ls "$vol"/v1/"$fp"/vllm/torch_compile_cache/*/rank_${r}_0/block_$b.json >/dev/null 2>&1 ||
      fail "the sealed cache lacks rank $r's block $b: $(find "$vol/v1/$fp" -name '*.json' | head)"
  done
done
echo "ok: fingerprint $fp Ready ${ready_s}s after the Deployment; sealed: rank_0_0 and rank_1_0, blocks 128, 1024, 4096"
runtime=$(k -n "$ns" get kernelcache srv -o json | python3 -c '
import json, sys; print(json.dumps(json.load(sys.stdin)["status"]["fingerprints"][0].get("runtime", {})))' 2>/dev/null || true)

pod_ready() { k -n "$ns" get pods -l "run=$1" -o jsonpath='{range .items[?(@.status.containerStatuses[0].ready==true)]}{.metadata.name}{"\n"}{end}' | head -1; }
pod=$(until_output 120 pod_ready srv) || fail "the gated srv pod never became Ready"
startup=$(k -n "$ns" logs "$pod" -c server | grep -m1 '"startup"')
python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["compiled"] == 0, s' "$startup" ||
  fail "$pod compiled at startup: $startup"
ask() {  # ask <pod> <words>: one completion of that prompt length, from inside the pod
  k -n "$ns" exec "$1" -c server -- /usr/bin/python3 -c '
import json, sys, urllib.request
body = json.dumps({"model": "srv", "prompt": " ".join(["hello"] * int(sys.argv[1]))}).encode()
r = urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:8000/v1/completions", body))
print(r.read().decode())' "$2"
}
for words in 8 200; do
  got=$(ask "$pod" "$words") || fail "request of $words words in $pod"
  python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["compiled"] == 0 and s["hits"] == 2, s' "$got" ||
    fail "$pod compiled for a $words-word prompt: $got"
  echo "ok: gated pod $pod, $words-word prompt: $got"
done
echo "ok: gated pod $pod: startup $startup"
report=$(k -n "$ns" get pod "$pod" -o jsonpath='{.status.initContainerStatuses[?(@.name=="kernelcache-wait")].state.terminated.message}')
grep -q '"outcome":"Warm"' <<<"$report" || fail "the gate's report: $report"
grep -q '"parity"' <<<"$report" && fail "a parity finding for the pod of the warmed template: $report"

echo "== parity: a canary of the same selector with another VLLM_ variable"
srv_deployment srv-canary b
canary=$(until_output 120 pod_ready srv-canary) || fail "the canary never became Ready"
ann=$(k -n "$ns" get pod "$canary" -o jsonpath='{.metadata.annotations.kernelcache\.io/parity-mismatch}')
grep -q 'env: VLLM_SHAPE_MODE is "a" in the warmup, "b" in container server' <<<"$ann" ||
  fail "canary parity annotation: $ann"
gate_log=$(k -n "$ns" logs "$canary" -c kernelcache-wait)
grep -q 'initwarm wait: parity: this pod differs from what was warmed' <<<"$gate_log" ||
  fail "the canary's gate did not log the parity finding: $gate_log"
creport=$(k -n "$ns" get pod "$canary" -o jsonpath='{.status.initContainerStatuses[?(@.name=="kernelcache-wait")].state.terminated.message}')
grep -q '"parity":"env: VLLM_SHAPE_MODE' <<<"$creport" || fail "the canary's gate report: $creport"
cstartup=$(k -n "$ns" logs "$canary" -c server | grep -m1 '"startup"')
python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["compiled"] == 2, s' "$cstartup" ||
  fail "the canary should compile (its cache keys differ): $cstartup"
echo "ok: canary $canary: annotation: $ann"
echo "ok: canary gate log: $(grep -m1 'parity:' <<<"$gate_log")"
echo "ok: canary startup (other cache keys, compiles): $cstartup"
k -n "$ns" delete deployment srv-canary --wait=true >/dev/null

echo "== rollout: Deployment srv moves to VLLM_SHAPE_MODE=b; its fingerprint moves with it"
t1=$(date +%s)
srv_deployment srv b
fp2=$(until_output 240 ready_fp "$fp") || fail "no new fingerprint Ready after the rollout"
roll_s=$(($(date +%s) - t1))
[ "$fp2" != "$fp" ] || fail "the fingerprint did not move"
new_pod() {
  for p in $(k -n "$ns" get pods -l run=srv -o jsonpath='{.items[*].metadata.name}'); do
    [ "$p" != "$pod" ] || continue
    k -n "$ns" get pod "$p" -o jsonpath='{.status.containerStatuses[0].ready}' | grep -q true && echo "$p"
  done
}
pod2=$(until_output 120 new_pod) || fail "the rolled pod never became Ready"
startup2=$(k -n "$ns" logs "$pod2" -c server | grep -m1 '"startup"')
python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["compiled"] == 0, s' "$startup2" ||
  fail "$pod2 compiled at startup after the rollout: $startup2"
stale() {
  k -n "$ns" get kernelcache srv -o jsonpath="{.status.fingerprints[?(@.id==\"$fp\")].state}" | grep -x Stale
}
until_output 60 stale >/dev/null || fail "the old fingerprint $fp is not Stale after the rollout"
echo "ok: rollout: fingerprint $fp (now Stale, collected after staleAfter) -> $fp2 Ready ${roll_s}s after the change; $pod2 startup $startup2"
echo "== figures"
python3 - "$drive_log" "$startup" <<'PY'
import json, re, sys
calls = [(m.group(1), int(m.group(2))) for m in re.finditer(r'call \d+ "([^"]+)".* in (\d+) ms', sys.argv[1])]
for label, ms in calls:
    print(f"   warmup (cold)  {label:28s} {ms:6d} ms")
print("   gated pod      startup                      ", json.loads(sys.argv[2]))
PY
echo "PASS: server warmup on the real node"
