#!/usr/bin/env bash
# A cold start that goes away, in real pods, on the real node
# (tests/cluster/node.sh; root only) with the chart installed by Helm (the
# operator and its webhook in-cluster) and the CPU-only JIT workload
# kernelcache.local/jit-workload:dev (Triton 3.6 compiling a fixed kernel
# set for cuda:90; images/jit-workload/workload.py):
#  1. a Deployment of the workload WITHOUT a KernelCache: every pod's first
#     call compiles every kernel (misses == kernels);
#  2. a KernelCache selecting the same Deployment (app=jit): one warmup Job
#     compiles once and the fingerprint goes Ready; the webhook injects the
#     gate; every replica's first call is warm: misses == 0, and no new file
#     appears in the sealed cache;
#     A pod with a cache-affecting variable the warmup did not set is
#     admitted with a parity warning and annotation naming it;
#  3. prints first-call seconds cold vs warm per pod, the gate's own time
#     (its report's waitedMs and the init container's run time) and the
#     warmup Job's time; asserts warm < cold;
#  4. a gated pod with kernelcache.io/watch-misses compiles a kernel the
#     warmup did not (a new BLOCK): its miss watcher's log names the kernel,
#     the sealed cache is unchanged, and the watcher's report reaches the
#     operator: the fingerprint's status.runtimeMisses names the kernel, a
#     RuntimeMisses Warning Event is raised and the leader's
#     kernelcache_runtime_misses_total counts it; then the same in Shared
#     mode (a layered view over the read-only claim): the compile succeeds,
#     the status counts both pods, the sealed cache is still unchanged;
#  5. harvest (spec.harvest.mode Merge), in Copy and then in Shared mode: a
#     Deployment's first pod compiles a shape the cache lacks, its watcher
#     copies it into the inbox, the operator's harvest Job merges it into a
#     new generation (status harvest.generation, Event HarvestMerged), the
#     published cache verifies at Checksums, and a second replica, gated on
#     the new generation, compiles that shape with 0 runtime misses. The
#     watcher runs as its own uid (65533, seen from the node), its inbox
#     files are that uid's, and the app container neither sees the inbox
#     mount nor writes the cache claim.
# Usage: jit_cold_start_test.sh <repo root>   (KC_IMAGES_DIR: the archives)
set -euo pipefail
root=$1
source "$root/tests/cluster/node_test_prelude.sh" operator initwarm pause jit-workload
source "$root/scripts/lib/jit_node.sh"
replicas=${KC_JIT_REPLICAS:-2}
ns=jit
dir=$(mktemp -d /tmp/kc-jit-node.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
k() { "$kubectl" "$@"; }
fail() {
  echo "FAIL: $*"
  k -n "$ns" get pods,jobs -o wide 2>&1 | sed 's/^/  /' || true
  k -n "$ns" get events --sort-by=.lastTimestamp 2>&1 | tail -20 | sed 's/^/  /' || true
  for p in $(k -n "$ns" get pods -o name 2>/dev/null); do
    echo "  --- $p"
    k -n "$ns" logs "$p" --all-containers --tail=15 2>&1 | sed 's/^/  /' || true
  done
  k -n kernelcache-system logs -l app.kubernetes.io/name=kernelcache --tail=20 2>&1 | sed 's/^/  /' || true
  exit 1
}
trap 'cluster down --purge >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
t_all=$(date +%s)
echo "== real node up"
cluster up --with-node --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"
echo "== helm install charts/kernelcache"
out=$(jit_helm_install --set logFormat=text 2>&1) || fail "helm install: $out"
# Right after `helm install --wait` the webhooks must answer: a replica is
# Ready only while it serves a certificate caBundle trusts (before that
# rule, TLS failed for 10-20 s and failurePolicy Ignore admitted
# silently). The validating webhook warns about a StorageClass that does
# not exist: five dry-run creates in a row, at once, must each carry it.
for i in 1 2 3 4 5; do
  out=$(k -n kernelcache-system create --dry-run=server -f - 2>&1 <<'EOF'
apiVersion: kernelcache.io/v1alpha1
kind: KernelCache
metadata: {name: probe}
spec:
  podSelector: {matchLabels: {kernelcache.io/probe: "1"}}
  image: registry.example/model:probe
  warmup: {command: ["true"]}
  storage: {size: 1Gi, storageClassName: kc-probe-absent}
EOF
) || fail "dry-run create of a KernelCache: $out"
  grep -q "Warning: .*kc-probe-absent" <<<"$out" ||
    fail "dry run $i right after helm install: no Warning from the validating webhook (not called: TLS?): $out"
done
echo "ok: the validating webhook answered 5 dry runs right after helm install --wait"
k create namespace "$ns" >/dev/null

vol="$dir/volumes/jit"
jit_hostpath_pv jit-cache kc-jit "$vol"

echo "== cold: Deployment jit-cold ($replicas replicas), no KernelCache"
jit_deployment "$ns" jit-cold jit-cold "$replicas" "        env: [{name: TRITON_CACHE_DIR, value: /tmp/triton}]"
cold=$(jit_first_calls "$ns" run=jit-cold "$replicas") || fail "cold pods"
k -n "$ns" delete deployment jit-cold --wait=false >/dev/null

echo "== KernelCache jit: warmup Job compiles once"
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
    command: ["/usr/bin/python3", "/opt/jit/app/workload.py", "warmup"]
    backoffLimit: 0
    activeDeadlineSeconds: 300
  storage: {storageClassName: kc-jit, size: 1Gi}
EOF
state=""
for _ in $(seq 240); do
  state=$(k -n "$ns" get kernelcache jit -o jsonpath='{.status.fingerprints[0].state}' 2>/dev/null || true)
  [ "$state" = Ready ] && break
  [ "$state" = Failed ] && break
  sleep 1
done
[ "$state" = Ready ] || fail "fingerprint state '$state', want Ready: $(k -n "$ns" get kernelcache jit -o jsonpath='{.status}')"
job=$(k -n "$ns" get jobs -l kernelcache.io/name=jit,kernelcache.io/component=warmup -o jsonpath='{.items[0].metadata.name}')
job_s=$(jit_job_seconds "$ns" "$job")
warmup_line=$(k -n "$ns" logs "job/$job" -c warmup 2>/dev/null | grep -m1 '^{' || true)
sealed_before=$(find "$vol" -type f | sort)

# A replica is Ready (and behind the Service) only
# while it serves a certificate caBundle trusts, so `helm install --wait`
# already waited for that: the very first dry runs must come back gated
# (docs/webhook-serving.md, "Why a fresh install once admitted pods ungated").
tries=$(jit_wait_gating "$ns" jit) || fail "webhook gating"
[ "$tries" = 5 ] || fail "the webhook gated only after $tries dry runs (want the first 5): pods were admitted ungated after helm install --wait"
echo "ok: the first 5 dry-run pods after install were gated"
# Parity: a pod of the same image with a cache-affecting variable the warmup
# did not set is admitted gated, with a warning and an annotation naming it.
out=$(k -n "$ns" create --dry-run=server -o jsonpath='{.metadata.annotations.kernelcache\.io/parity-mismatch}' -f - 2>&1 <<YAML
apiVersion: v1
kind: Pod
metadata: {generateName: parity-probe-, labels: {app: jit}}
spec:
  containers:
  - {name: server, image: $KC_JIT_IMAGE, imagePullPolicy: Never, env: [{name: TRITON_DEBUG, value: "1"}]}
YAML
) || fail "dry run of a parity probe: $out"
grep -q 'Warning: kernelcache: the pod differs from what KernelCache jit warmed' <<<"$out" ||
  fail "no parity warning for a pod with TRITON_DEBUG=1: $out"
grep -q 'env: TRITON_DEBUG is "1" in container server, unset in the warmup' <<<"$out" ||
  fail "no parity annotation naming TRITON_DEBUG: $out"
echo "ok: parity: $(tail -1 <<<"$out")"
echo "== warm: Deployment jit-warm ($replicas replicas), selected by the KernelCache"
jit_deployment "$ns" jit-warm jit "$replicas"
warm=$(jit_first_calls "$ns" run=jit-warm "$replicas") || fail "warm pods"
sealed_after=$(find "$vol" -type f | sort)
gates=$(k -n "$ns" get pods -l run=jit-warm -o json)

python3 "$root/scripts/lib/jit_figures.py" "$cold" "$warm" "$gates" "$job_s" "$warmup_line" || fail "figures"
[ "$sealed_before" = "$sealed_after" ] ||
  fail "the sealed cache changed while warm pods ran: $(diff <(echo "$sealed_before") <(echo "$sealed_after") | head)"
echo "ok: sealed cache unchanged ($(wc -l <<<"$sealed_after") files) after $replicas warm pods"
echo "== a runtime miss: a gated pod compiles a kernel the warmup did not; its miss watcher names it"
jit_deployment "$ns" jit-miss jit 1 "" '{kernelcache.io/watch-misses: "5s"}'
jit_first_calls "$ns" run=jit-miss 1 >/dev/null || fail "the jit-miss pod"
pod=$(k -n "$ns" get pods -l run=jit-miss -o jsonpath='{.items[0].metadata.name}')
k -n "$ns" get pod "$pod" -o jsonpath='{.spec.initContainers[*].name}' | grep -qw kernelcache-misses ||
  fail "no miss watcher injected into $pod"
# add_kernel with BLOCK 2048: a shape the warmup (BLOCK 1024) never compiled.
k -n "$ns" exec "$pod" -c server -- /usr/bin/python3 -c '
import kernels, triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
sig = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}
triton.compile(ASTSource(kernels.add_kernel, sig, {"BLOCK": 2048}), target=GPUTarget("cuda", 90, 32))
' || fail "the runtime compile in $pod"
watcher_log() { k -n "$ns" logs "$pod" -c kernelcache-misses | grep -m1 "$1"; }
line=$(until_output 60 watcher_log "runtime miss: triton kernel add_kernel") || true
[ -n "$line" ] || fail "the miss watcher of $pod did not name the kernel: $(k -n "$ns" logs "$pod" -c kernelcache-misses 2>&1 | tail -5)"
echo "ok: $pod's miss watcher: $line"
sealed_after=$(find "$vol" -type f | sort)
[ "$sealed_before" = "$sealed_after" ] || fail "the runtime miss changed the sealed cache"
echo "ok: the sealed cache is unchanged by the runtime miss"
# The watcher reports it (POST /v1/misses with the pod's projected token,
# checked by a TokenReview; a follower replica answers 503 and the watcher
# tries again): the leader counts it, names it in the fingerprint's status
# and raises a Warning Event.
reported=$(until_output 120 watcher_log "initwarm misses: reported") || true
[ -n "$reported" ] || fail "the miss watcher of $pod reported nothing: $(k -n "$ns" logs "$pod" -c kernelcache-misses 2>&1 | tail -5)"
echo "ok: $pod's miss watcher: $reported"
status_misses_of() {
  k -n "$ns" get kernelcache jit -o json | python3 -c '
import json, sys
for f in json.load(sys.stdin).get("status", {}).get("fingerprints", []):
    rm = f.get("runtimeMisses") or {}
    top = [t for t in rm.get("top", []) if "add_kernel" in t.get("detail", "")]
    if rm.get("count", 0) >= 1 and rm.get("pods", 0) >= 1 and top:
        print(f["id"], "count", rm["count"], "pods", rm["pods"], "top:", top[0]["detail"][:60])
'
}
status_misses=$(until_output 60 status_misses_of) || true
[ -n "$status_misses" ] || fail "status.fingerprints[].runtimeMisses does not name add_kernel: $(k -n "$ns" get kernelcache jit -o jsonpath='{.status.fingerprints}')"
echo "ok: status runtimeMisses: $status_misses"
miss_event() { k -n "$ns" get events --field-selector reason=RuntimeMisses,type=Warning -o jsonpath='{.items[*].message}' | grep add_kernel; }
event=$(until_output 30 miss_event) || fail "no RuntimeMisses Warning Event naming add_kernel: $(k -n "$ns" get events --field-selector reason=RuntimeMisses 2>&1 | tail -3)"
echo "ok: Event RuntimeMisses: ${event:0:120}"
# Each request may reach either replica; only the leader counted it.
leader_series() { curl -s --max-time 5 "http://$KC_JIT_SVC_IP/metrics" | grep -m1 "^kernelcache_runtime_misses_total{.*framework=\"triton\""; }
series=$(until_output 30 leader_series) || true
[ -n "$series" ] || fail "no kernelcache_runtime_misses_total series for triton on the leader"
echo "ok: metrics: $series"
echo "== the same in Shared mode: a layered view over the read-only claim takes another new shape"
k -n "$ns" patch kernelcache jit --type merge -p '{"spec":{"consume":{"mode":"Shared"}}}' >/dev/null
jit_deployment "$ns" jit-miss-shared jit 1 "" '{kernelcache.io/watch-misses: "5s"}'
jit_first_calls "$ns" run=jit-miss-shared 1 >/dev/null || fail "the Shared jit-miss pod"
pod=$(k -n "$ns" get pods -l run=jit-miss-shared -o jsonpath='{.items[0].metadata.name}')
mode=$(k -n "$ns" get pod "$pod" -o jsonpath='{.metadata.annotations.kernelcache\.io/consume-mode}')
[ "$mode" = Shared ] || fail "$pod was admitted in mode '$mode', want Shared"
# add_kernel with BLOCK 4096: new to the warmup and to the Copy pod above.
k -n "$ns" exec "$pod" -c server -- /usr/bin/python3 -c '
import kernels, triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
sig = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}
triton.compile(ASTSource(kernels.add_kernel, sig, {"BLOCK": 4096}), target=GPUTarget("cuda", 90, 32))
' || fail "the runtime compile in the Shared pod $pod (a read-only view?)"
reported=$(until_output 120 watcher_log "initwarm misses: reported") || fail "the Shared pod's watcher reported nothing: $(k -n "$ns" logs "$pod" -c kernelcache-misses 2>&1 | tail -5)"
echo "ok: Shared pod $pod compiled a new shape; its watcher: $reported"
two_pods() { status_misses_of | grep -E "count [2-9][0-9]* pods [2-9]"; }
status_misses=$(until_output 60 two_pods) || fail "runtimeMisses does not count both pods: $(k -n "$ns" get kernelcache jit -o jsonpath='{.status.fingerprints[*].runtimeMisses}')"
echo "ok: status runtimeMisses: $status_misses"
sealed_after=$(find "$vol" -type f | sort)
[ "$sealed_before" = "$sealed_after" ] || fail "the Shared pod's runtime miss changed the sealed cache"
echo "ok: the sealed cache is unchanged by both runtime misses"

echo "== harvest: the fleet learns a shape once (spec.harvest.mode Merge)"
k -n "$ns" patch kernelcache jit --type merge -p '{"spec":{"harvest":{"mode":"Merge","interval":"10s"}}}' >/dev/null
fp=$(k -n "$ns" get kernelcache jit -o jsonpath='{.status.fingerprints[0].id}')
compile_block() { jit_compile_block "$ns" "$1" "$2" >/dev/null; }
# harvest_round <consume mode> <BLOCK> <generation after the merge>
harvest_round() {
  local mode=$1 block=$2 gen=$3 name first second digest misses
  name="jit-h-$(tr 'A-Z' 'a-z' <<<"$mode")"
  k -n "$ns" patch kernelcache jit --type merge -p "{\"spec\":{\"consume\":{\"mode\":\"$mode\"}}}" >/dev/null
  digest=$(k -n "$ns" get kernelcache jit -o jsonpath='{.status.fingerprints[0].manifestDigest}')
  jit_deployment "$ns" "$name" jit 1 "" '{kernelcache.io/watch-misses: "5s"}'
  jit_first_calls "$ns" "run=$name" 1 >/dev/null || fail "the $mode pod of $name"
  first=$(k -n "$ns" get pods -l "run=$name" -o jsonpath='{.items[0].metadata.name}')
  compile_block "$first" "$block" || fail "the runtime compile of BLOCK $block in the $mode pod $first"
  copied() { k -n "$ns" logs "$first" -c kernelcache-misses | grep -m1 "harvest: copied triton/"; }
  line=$(until_output 60 copied) || fail "$first's watcher copied nothing into the inbox: $(k -n "$ns" logs "$first" -c kernelcache-misses 2>&1 | tail -5)"
  echo "ok: $mode pod $first's watcher: $line"
  # The watcher runs as its own uid (never the app's), seen from the node;
  # its writable mount is the inbox root alone, which the app cannot see.
  local pid uids=""
  for pid in $(pgrep -f "^initwarm misses" || true); do uids+="$(stat -c %u "/proc/$pid") "; done
  [ -n "$uids" ] || fail "no miss watcher process on the node"
  [ -z "$(tr ' ' '\n' <<<"$uids" | grep -v '^$' | grep -vx 65533)" ] ||
    fail "miss watchers run as uids $uids, not only their own 65533"
  # (The fingerprint's inbox directory: the harvest removes the pod's own
  # directory once merged, maybe already.)
  [ "$(stat -c %u "$vol/v1/.inbox/$fp")" = 65533 ] ||
    fail "the inbox directory is not the watcher's: $(stat -c '%u %a %n' "$vol/v1/.inbox" "$vol/v1/.inbox/$fp")"
  ! k -n "$ns" exec "$first" -c server -- ls /var/cache/kernelcache-inbox >/dev/null 2>&1 ||
    fail "the app container sees the watcher's inbox mount"
  ! k -n "$ns" exec "$first" -c server -- touch /var/cache/kernelcache/v1/kc-probe >/dev/null 2>&1 ||
    fail "the app container can write the cache claim"
  echo "ok: the watcher runs as uid 65533 ($uids) and alone writes the inbox root; the app cannot reach it"
  merged() {
    k -n "$ns" get kernelcache jit -o jsonpath='{.status.fingerprints[0].harvest.generation} {.status.fingerprints[0].harvest.lastResult} {.status.fingerprints[0].harvest.addedFiles} {.status.fingerprints[0].manifestDigest}' |
      awk -v g="$gen" '$1 == g && $2 == "Merged" && $3 > 0'
  }
  line=$(until_output 180 merged) || fail "no merge to generation $gen: $(k -n "$ns" get kernelcache jit -o jsonpath='{.status.fingerprints[0].harvest}')"
  [ "$(awk '{print $4}' <<<"$line")" != "$digest" ] || fail "the merge did not change the manifest digest"
  echo "ok: harvest: generation, result, files added, digest: $line"
  event() { k -n "$ns" get events --field-selector reason=HarvestMerged -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -m1 "generation $gen,"; }
  line=$(until_output 30 event) || fail "no HarvestMerged Event for generation $gen"
  echo "ok: Event HarvestMerged: ${line:0:160}"
  k -n "$ns" exec "$first" -c kernelcache-misses -- initwarm verify --root /var/cache/kernelcache \
    --fingerprint "$fp" --level Checksums --no-quarantine >/dev/null ||
    fail "the merged generation does not verify at Checksums"
  echo "ok: the merged generation verifies at Checksums"
  k -n "$ns" scale deployment "$name" --replicas 2 >/dev/null
  jit_first_calls "$ns" "run=$name" 2 >/dev/null || fail "the second $mode pod of $name"
  second=$(k -n "$ns" get pods -l "run=$name" -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | grep -v "^$first\$" | head -1)
  compile_block "$second" "$block" || fail "the compile of BLOCK $block in $second"
  misses=$(jit_runtime_misses "$ns" "$second") || fail "initwarm misses in $second"
  [ "$misses" = 0 ] ||
    fail "$second, gated on the merged generation, compiled BLOCK $block again ($misses runtime misses)"
  echo "ok: $mode: $second compiled BLOCK $block with 0 runtime misses (the fleet learned it from $first)"
}
harvest_round Copy 8192 1
harvest_round Shared 16384 2
k -n "$ns" get kernelcache jit -o jsonpath='{.status.fingerprints[0].harvest}'; echo
echo "jit_cold_start_test: ok ($(($(date +%s) - t_all)) s)"
