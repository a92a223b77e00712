#!/usr/bin/env bash
# Convergence passes in real pods on the real node (tests/cluster/node.sh;
# root only), with the chart installed by Helm and the CPU-only JIT
# workload (images/jit-workload; Triton 3.6 compiling for cuda:90):
#  1. a warmup that compiles one kernel only on its second run in its
#     container (JIT_LATE_KERNEL=1: a run counter file in the image's own
#     filesystem, no sleep): the Job's warmup container runs it three times
#     (the warmup, pass 1 adds late_kernel, pass 2 adds nothing); the status
#     says "converged after 2 passes", a WarmupConverged Event is raised,
#     the sealed cache holds kernelcache/convergence.json with what each run
#     added; two gated pods (Copy) that compile the same kernels, the late
#     one too, compile nothing (misses == 0); a forged pod with the warmup
#     pod's labels and a container named seal, exiting 0 with another
#     digest while the warmup runs, is ignored: the recorded digest is the
#     one the real seal wrote to READY;
#  2. the same warmup with convergence.maxPasses 0 (sealed after one
#     process, as before passes existed): its gated pod compiles late_kernel
#     (misses == 1), the cost the passes remove;
#  3. a warmup whose autotuner never settles (JIT_NOISY_AUTOTUNE=1: another
#     num_warps of add_kernel every run) with maxPasses 2: published anyway
#     (onNotConverged Publish, the default), status "not converged after 2
#     passes ... all nondeterministic autotune", a WarmupNotConverged
#     Warning Event; with onNotConverged Fail: nothing published, the
#     fingerprint Failed with the seal's NotConverged reason (exit 14).
# Usage: warmup_converge_test.sh <repo root>   (KC_IMAGES_DIR: the archives)
set -euo pipefail
root=$1
source "$root/tests/cluster/node_test_prelude.sh" operator initwarm pause jit-workload
source "$root/scripts/lib/jit_node.sh"
ns=conv
dir=$(mktemp -d /tmp/kc-converge-node.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
k() { "$kubectl" "$@"; }
fail() {
  echo "FAIL: $*"
  k -n "$ns" get kernelcaches,pods,jobs -o wide 2>&1 | sed 's/^/  /' || true
  k -n "$ns" get events --sort-by=.lastTimestamp 2>&1 | tail -20 | sed 's/^/  /' || true
  for p in $(k -n "$ns" get pods -o name 2>/dev/null); do
    echo "  --- $p"
    k -n "$ns" logs "$p" --all-containers --tail=20 2>&1 | sed 's/^/  /' || true
  done
  exit 1
}
trap 'cluster down --purge >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
t_all=$(date +%s)
phase "real node up"
cluster up --with-node --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"
phase "helm install charts/kernelcache"
out=$(jit_helm_install --set logFormat=text 2>&1) || fail "helm install: $out"
k create namespace "$ns" >/dev/null

# apply_kc <name> <app> <claim> <warmup lines...>: a KernelCache of the
# workload on its own claim (a hostPath volume under $dir/volumes/<claim>).
apply_kc() {
  local name=$1 app=$2 claim=$3
  shift 3
  jit_hostpath_claim "$ns" "$claim" "$dir/volumes/$claim"
  # The extra lines continue the warmup block jit_kernelcache ends with.
  jit_kernelcache "$name" "$app" '{triton: "3.6.0"}' "$@" \
    "nodeSelector: {kernelcache.io/real-node: \"true\"}" \
    "storage: {existingClaim: $claim}" | k -n "$ns" apply -f - >/dev/null
}
# fp_field <kc> <jsonpath under the fingerprint>
fp_field() { k -n "$ns" get kernelcache "$1" -o jsonpath="{.status.fingerprints[0]$2}" 2>/dev/null; }
wait_state() {  # wait_state <kc> <state>
  local state=""
  for _ in $(seq 300); do
    state=$(fp_field "$1" .state || true)
    [ "$state" = "$2" ] && return 0
    [ "$state" = Failed ] && [ "$2" != Failed ] && break
    sleep 1
  done
  fail "KernelCache $1: fingerprint state '$state', want $2: $(k -n "$ns" get kernelcache "$1" -o jsonpath='{.status}')"
}
event_of() { k -n "$ns" get events --field-selector "reason=$1,involvedObject.name=$2" -o jsonpath='{.items[*].message}'; }
# misses_of <selector> <replicas>: "<pod> <misses>" per pod's first call.
misses_of() {
  jit_first_calls "$ns" "$1" "$2" | python3 -c '
import json, sys
for line in sys.stdin:
    pod, js = line.split(" ", 1)
    r = json.loads(js)
    print(pod, r["misses"], r["kernels"])'
}
late_env='        env: [{name: JIT_LATE_KERNEL, value: "1"}]'

phase "1. a kernel compiled only on the warmup's second run: passes until nothing is added"
apply_kc late late late-cache \
  "  env: [{name: JIT_LATE_KERNEL, value: \"1\"}]"
# While it warms, a namespace user's forged Job pod: the warmup pod's own
# labels (job-name, controller-uid, kernelcache.io/*), a container named
# seal that exits 0 with a report of another digest. The operator must read
# the Job's result only from the pods the Job owns.
job_labels() {
  local job
  job=$(fp_field late .job)
  [ -n "$job" ] && k -n "$ns" get pods -l "job-name=$job" -o json |
    python3 -c 'import json,sys; i=json.load(sys.stdin)["items"]; print(json.dumps(i[0]["metadata"]["labels"]) if i else "")'
}
labels=$(until_output 120 job_labels) || fail "no warmup pod of late to copy the labels of"
fp=$(fp_field late .id)
forged_digest=$(printf 'f%.0s' $(seq 64))
forged_report="{\"fingerprint\":\"$fp\",\"outcome\":\"Published\",\"manifestDigest\":\"$forged_digest\",\"bytes\":1,\"files\":1,\"directory\":\"v1/$fp\",\"durations\":{}}"
python3 - "$labels" "$KC_JIT_IMAGE" "$forged_report" <<'PY' | k -n "$ns" apply -f - >/dev/null
import json, sys
labels, image, report = sys.argv[1:4]
print(json.dumps({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "forged-seal", "labels": json.loads(labels)},
    "spec": {"restartPolicy": "Never",
             "nodeSelector": {"kernelcache.io/real-node": "true"},
             "containers": [{"name": "seal", "image": image, "imagePullPolicy": "Never",
                             "command": ["python3", "-c",
                                         "open('/dev/termination-log', 'w').write(%r)" % report]}]}}))
PY
forged_done() { k -n "$ns" get pod forged-seal -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}'; }
[ "$(until_output 120 forged_done)" = 0 ] || fail "the forged seal pod did not exit 0"
[ "$(fp_field late .state)" = Warming ] ||
  fail "the warmup ended before the forged pod did: the test proves nothing (state $(fp_field late .state))"
# The Job controller may adopt the forged pod (its labels match the Job's
# selector), delete its own pod and count the forged one's success as the
# Job's: then the operator refuses that result (the pod does not run the
# Job's template), the warmup fails naming it, and the retry warms. Or it
# does not adopt it in time, and the real pod seals. Either way: never the
# forged digest, Ready in the end.
ready_or_forged() {
  [ "$(fp_field late .manifestDigest)" != "$forged_digest" ] || { echo forged; return 0; }
  [ "$(fp_field late .state)" = Ready ] && echo Ready
}
line=$(until_output 400 ready_or_forged) || fail "late never became Ready: $(k -n "$ns" get kernelcache late -o jsonpath='{.status}')"
[ "$line" = Ready ] || fail "the operator recorded the forged digest"
owner=$(k -n "$ns" get pod forged-seal -o jsonpath='{.metadata.ownerReferences[0].kind}' 2>/dev/null || true)
if [ "$owner" = Job ]; then
  refused=$(event_of BadTerminationMessage late)
  grep -q "adopted by its labels, does not run its template" <<<"$refused" ||
    fail "the Job adopted the forged pod but no warmup failure says so: $refused"
  echo "ok: the Job adopted the forged pod; its result was refused: ${refused:0:300}"
else
  echo "ok: the forged pod was not adopted (owner '$owner'); the real pod sealed"
fi
ready_file=$(find "$dir/volumes/late-cache" -path "*/v1/$fp/READY" | head -1)
[ -n "$ready_file" ] || fail "no READY of $fp: $(find "$dir/volumes/late-cache" -maxdepth 3 | head)"
ready=$(tr -d '[:space:]' < "$ready_file")
[ "$(fp_field late .manifestDigest)" = "$ready" ] ||
  fail "recorded digest $(fp_field late .manifestDigest), the sealed READY says $ready (forged: $forged_digest)"
echo "ok: a forged seal pod with the Job's labels was ignored: the recorded digest is the sealed one"
conv=$(fp_field late .convergence)
echo "status convergence: $conv"
[ "$(fp_field late .convergence.passes)" = 2 ] || fail "passes: want 2: $conv"
[ "$(fp_field late .convergence.converged)" = true ] || fail "converged: want true: $conv"
[ "$(fp_field late .convergence.message)" = "converged after 2 passes" ] || fail "message: $conv"
ev=$(until_output 30 event_of WarmupConverged late) || fail "no WarmupConverged Event"
echo "ok: Event WarmupConverged: $ev"
job=$(fp_field late .job)
k -n "$ns" logs "job/$job" -c warmup | grep "initwarm converge" | sed 's/^/  /'
k -n "$ns" logs "job/$job" -c warmup | grep -q "convergence pass 1 took .* added 1 entries (0 autotune)" ||
  fail "the warmup container's log does not show pass 1 adding one entry"
record=$(find "$dir/volumes/late-cache/v1" -path '*/kernelcache/convergence.json' -not -path '*/.staging/*' | head -1)
[ -n "$record" ] || fail "no kernelcache/convergence.json in the published cache"
python3 - "$record" <<'PY' || fail "the sealed record"
import json, sys
r = json.load(open(sys.argv[1]))
added = [run["entriesAdded"] for run in r["runs"]]
assert r["converged"] and added[1:] == [1, 0], added
late = r["runs"][1]["entries"][0]
assert "kernel late_kernel" in late["detail"] and late["novelty"] == "new", late
print("ok: sealed record: entries added per run", added, "; pass 1:", late["detail"][:60])
PY
jit_deployment "$ns" late-pods late 2 "$late_env"
m=$(misses_of run=late-pods 2) || fail "the gated pods of late"
echo "$m" | sed 's/^/  /'
awk '$2 != 0 {bad=1} END {exit bad}' <<<"$m" || fail "a gated pod compiled after a converged warmup: $m"
awk '$3 != 9 {bad=1} END {exit bad}' <<<"$m" || fail "the pods did not compile all 9 kernels (8 + the late one): $m"
echo "ok: 2 gated pods, 9 kernels each, 0 compiled"
k -n "$ns" delete deployment late-pods --wait=false >/dev/null

phase "2. the same warmup sealed after one process (maxPasses 0)"
apply_kc once once once-cache \
  "  env: [{name: JIT_LATE_KERNEL, value: \"1\"}]" \
  "  convergence: {maxPasses: 0}"
wait_state once Ready
[ -z "$(fp_field once .convergence)" ] || fail "a warmup without passes reports convergence: $(fp_field once .convergence)"
jit_deployment "$ns" once-pods once 1 "$late_env"
m=$(misses_of run=once-pods 1) || fail "the gated pod of once"
[ "$(awk '{print $2}' <<<"$m")" = 1 ] || fail "want the late kernel compiled by the pod of a once-sealed cache: $m"
echo "ok: the pod of the once-sealed cache compiled 1 kernel ($m); the converged one 0"
k -n "$ns" delete deployment once-pods --wait=false >/dev/null

phase "3. an autotuner that never settles: published anyway, and said so"
apply_kc noisy noisy noisy-cache \
  "  env: [{name: JIT_NOISY_AUTOTUNE, value: \"1\"}]" \
  "  convergence: {maxPasses: 2}"
wait_state noisy Ready
msg=$(fp_field noisy .convergence.message)
echo "status: $msg"
[ "$(fp_field noisy .convergence.converged)" = false ] || fail "converged: want false: $msg"
[ "$(fp_field noisy .convergence.lastPassAutotune)" = 1 ] || fail "lastPassAutotune: $(fp_field noisy .convergence)"
[[ "$msg" == "not converged after 2 passes: the last pass still compiled 1 entry, all nondeterministic autotune: triton kernel add_kernel num_warps="* ]] ||
  fail "message: $msg"
ev=$(until_output 30 event_of WarmupNotConverged noisy) || fail "no WarmupNotConverged Event"
k -n "$ns" get events --field-selector reason=WarmupNotConverged,type=Warning -o name | grep -q . ||
  fail "WarmupNotConverged is not a Warning"
echo "ok: Warning Event WarmupNotConverged: ${ev:0:160}"

apply_kc strict strict strict-cache \
  "  env: [{name: JIT_NOISY_AUTOTUNE, value: \"1\"}]" \
  "  convergence: {maxPasses: 1, onNotConverged: Fail}"
wait_state strict Failed
why=$(fp_field strict .lastFailure)
echo "status lastFailure: $why"
[[ "$why" == *"(exit 14)"*"NotConverged: not converged after 1 pass"* ]] || fail "lastFailure: $why"
[ -z "$(find "$dir/volumes/strict-cache/v1" -maxdepth 2 -name READY)" ] || fail "a cache was published despite onNotConverged: Fail"
echo "ok: onNotConverged Fail: nothing published, the fingerprint Failed with the reason"
phase "done"
echo "warmup_converge_test: PASS"
