#!/usr/bin/env bash
# The operator restarted while pods wait in their gates, on the
# real node (root; tests/cluster/node.sh) with the chart installed by Helm:
#  1. a KernelCache whose warmup takes ~30 s (it sleeps, then compiles the
#     JIT workload's kernels), and at once a Deployment of 2 gated replicas:
#     both wait in their gate (initwarm wait) for the fingerprint;
#  2. while they wait, BOTH operator replicas are killed (pods deleted with
#     grace 0: SIGKILL), so no replica answers /v1/resolve or reconciles
#     until the Deployment brings new ones;
#  3. then: exactly one warmup Job exists (none duplicated by the new
#     leader), the fingerprint goes Ready, both pods leave their gate Warm
#     and their first call compiles nothing; prints how long each gate
#     waited past the moment the cache was Ready (bounded by the gate's
#     poll cap, 15 s, plus validation) and fails above 25 s.
# Usage: gate_restart_test.sh <repo root>
set -euo pipefail
root=$1
source "$root/tests/cluster/node_test_prelude.sh" operator initwarm pause jit-workload
source "$root/scripts/lib/jit_node.sh"
ns=gates
dir=$(mktemp -d /tmp/kc-gate-restart.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
k() { "$kubectl" "$@"; }
fail() {
  echo "FAIL: $*"
  k -n "$ns" get pods,jobs -o wide 2>&1 | sed 's/^/  /' || true
  k -n "$ns" get kcache jit -o jsonpath='{.status}' 2>&1 | sed 's/^/  /' || true
  echo
  k -n kernelcache-system get pods -o wide 2>&1 | sed 's/^/  /' || true
  k -n kernelcache-system logs -l app.kubernetes.io/name=kernelcache --tail=20 2>&1 | sed 's/^/  /' || true
  exit 1
}
trap 'cluster down --purge >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
t_all=$(date +%s)
cluster up --with-node --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"
out=$(jit_helm_install --set logFormat=text 2>&1) || fail "helm install: $out"
k create namespace "$ns" >/dev/null
jit_hostpath_pv jit-cache kc-jit "$dir/volume"

echo "== KernelCache with a 25 s warmup, and 2 gated replicas at once"
k -n "$ns" apply -f - >/dev/null <<'EOF'
apiVersion: kernelcache.io/v1alpha1
kind: KernelCache
metadata: {name: jit}
spec:
  podSelector: {matchLabels: {app: jit}}
  nodeSelector: {kernelcache.io/real-node: "true"}
  image: kernelcache.local/jit-workload:dev
  runtime: {triton: "3.6.0"}
  warmup:
    command: ["/usr/bin/python3", "-c", "import runpy, sys, time; time.sleep(25); sys.argv = ['workload.py', 'warmup']; runpy.run_path('/opt/jit/app/workload.py', run_name='__main__')"]
    backoffLimit: 0
    activeDeadlineSeconds: 300
  storage: {storageClassName: kc-jit, size: 1Gi}
  consume: {waitTimeoutSeconds: 300, onTimeout: Fail}
EOF
jit_wait_gating "$ns" jit >/dev/null || fail "webhook gating"
jit_deployment "$ns" jit-warm jit 2
waiting() {  # both pods' gate containers running
  [ "$(k -n "$ns" get pods -l app=jit -o jsonpath='{range .items[*]}{.status.initContainerStatuses[0].state.running.startedAt}{" "}{end}' | wc -w)" = 2 ]
}
for _ in $(seq 90); do waiting && break; sleep 1; done
waiting || fail "the 2 pods are not both waiting in their gate"
state=$(k -n "$ns" get kcache jit -o jsonpath='{.status.fingerprints[0].state}')
[ "$state" = Warming ] || fail "fingerprint state '$state' while pods wait, want Warming"
echo "ok: both pods wait in their gate; fingerprint Warming"

echo "== kill both operator replicas (grace 0) while the pods wait"
old=$(k -n kernelcache-system get pods -l app.kubernetes.io/name=kernelcache -o name | sort)
k -n kernelcache-system delete pods -l app.kubernetes.io/name=kernelcache --grace-period=0 --force >/dev/null 2>&1
t_kill=$(date +%s)
k -n kernelcache-system rollout status deployment/kc-operator --timeout=180s >/dev/null ||
  fail "the operator did not come back"
new=$(k -n kernelcache-system get pods -l app.kubernetes.io/name=kernelcache -o name | sort)
[ -z "$(comm -12 <(echo "$old") <(echo "$new"))" ] || fail "an old operator pod survived: $new"
echo "ok: 2 new operator replicas Ready $(($(date +%s) - t_kill)) s after the kill"

for _ in $(seq 180); do
  [ "$(k -n "$ns" get kcache jit -o jsonpath='{.status.fingerprints[0].state}')" = Ready ] && break
  sleep 1
done
[ "$(k -n "$ns" get kcache jit -o jsonpath='{.status.fingerprints[0].state}')" = Ready ] ||
  fail "the fingerprint did not go Ready after the restart"
warm=$(jit_first_calls "$ns" app=jit 2) || fail "warm pods"
jobs=$(k -n "$ns" get jobs -l kernelcache.io/component=warmup -o name | wc -l)
[ "$jobs" = 1 ] || fail "$jobs warmup Jobs, want 1 (the new leader duplicated it?)"
python3 - "$(k -n "$ns" get kcache jit -o json)" "$(k -n "$ns" get pods -l app=jit -o json)" "$warm" <<'EOF' || fail "gates"
import datetime, json, sys
kc, pods, warm = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
p = lambda t: datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ")
ready = p(kc["status"]["fingerprints"][0]["readyAt"])
bad = []
for pod in pods["items"]:
    name = pod["metadata"]["name"]
    t = pod["status"]["initContainerStatuses"][0]["state"]["terminated"]
    rep = json.loads(t.get("message") or "{}")
    late = (p(t["finishedAt"]) - ready).total_seconds()
    print(f"{name}: gate {rep.get('outcome')} after waiting {rep.get('waitedMs', -1) / 1000:.1f} s; "
          f"left its gate {late:.0f} s after the cache was Ready")
    if rep.get("outcome") != "Warm":
        bad.append(f"{name}: gate outcome {rep.get('outcome')}, want Warm")
    if late > 25:
        bad.append(f"{name}: left its gate {late:.0f} s after Ready (> 25 s: the poll cap is 15 s)")
for line in warm.strip().splitlines():
    name, r = line.split(" ", 1)
    if json.loads(r)["misses"] != 0:
        bad.append(f"{name}: {json.loads(r)['misses']} kernels compiled, want 0")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
EOF
echo "ok: 1 warmup Job, both pods started warm after the operator restart"
echo "gate_restart_test: ok ($(($(date +%s) - t_all)) s)"
