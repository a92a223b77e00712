#!/usr/bin/env bash
# A GPU driver upgrade, and a downgrade, through real pods on the real node
# (tests/cluster/node.sh; root only), walked the way the GPU Operator's
# upgrade controller does it: the node labelled
# nvidia.com/gpu-driver-upgrade-state through upgrade-required,
# cordon-required (cordoned), wait-for-jobs-required, pod-deletion-required,
# drain-required, pod-restart-required (the new driver is up: its labels
# change as GPU Feature Discovery changes them), validation-required,
# uncordon-required (uncordoned) and upgrade-done.
#
# The chart (Helm) runs the operator in-cluster; two KernelCaches share one
# hostPath volume on this machine (existingClaim, shareExistingClaim), so the
# test reads the volume directly:
#   du    gates the Deployment du-serve (the CPU-only Triton JIT workload),
#         onTimeout Fail, retention.staleAfter 30s;
#   keep  another model (its own fingerprints), onTimeout StartCold with a
#         10 s wait, staleAfter 1h: its old fingerprint is still there for
#         the downgrade.
# Asserted, from the cluster and from the volume:
#  - no pod is placed on the node while it is mid-upgrade (a pod watch from
#    before the cordon to after upgrade-done: nothing but the gate probe
#    below, which names its node itself, is bound there in that window); a
#    replica added mid-upgrade stays Pending; no warmup Job of the new
#    fingerprints exists before upgrade-done;
#  - a gate that asks mid-upgrade (keep's probe pod) gets what its onTimeout
#    promises: Cold after its wait (reason Timeout), and the workload
#    compiles every kernel;
#  - the new fingerprint's warmup Job runs on kc-node, compiles every kernel
#    and seals (READY on the volume = the status' manifestDigest);
#  - gated pods placed after the upgrade (the one added mid-upgrade, one
#    added after) use the new fingerprint and compile 0 kernels; the pod
#    that ran through the upgrade is the same pod, not restarted, and still
#    compiles 0 kernels from its view after the old cache is gone;
#  - the old fingerprint goes Stale (Event FingerprintStale), and no earlier
#    than staleAfter after that a GC Job's pod on kc-node removes exactly
#    v1/<old> (Events GcStarted, CacheCollected; it leaves the status); the
#    new cache and keep's two are byte for byte unchanged;
#  - the downgrade: keep's old fingerprint is Ready again while the node is
#    still cordoned (no warmup could have run), with no new warmup Job and
#    its cache unchanged (Event FingerprintInUse); du's old one, collected,
#    comes back Pending and is really warmed again after upgrade-done.
# Usage: driver_upgrade_test.sh <repo root>   (KC_IMAGES_DIR: the archives)
set -euo pipefail
root=$1
source "$root/tests/cluster/node_test_prelude.sh" operator initwarm pause jit-workload
source "$root/scripts/lib/jit_node.sh"
source "$root/scripts/lib/gpu_upgrade.sh"
ns=du
node=kc-node
old_driver=580.159.04
new_driver=580.200.01
dir=$(mktemp -d /tmp/kc-driver-upgrade.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
k() { "$kubectl" "$@"; }
watch_pid=""
fail() {
  echo "FAIL: $*"
  k get node "$node" --show-labels 2>&1 | sed 's/^/  /' || true
  k -n "$ns" get kcache -o wide 2>&1 | sed 's/^/  /' || true
  k -n "$ns" get pods,jobs -o wide 2>&1 | sed 's/^/  /' || true
  k -n "$ns" get events --sort-by=.lastTimestamp 2>&1 | tail -25 | sed 's/^/  /' || true
  k -n kernelcache-system logs -l app.kubernetes.io/name=kernelcache --tail=20 2>&1 | sed 's/^/  /' || true
  exit 1
}
cleanup() {
  [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
  cluster down --purge >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
t_all=$(date +%s)
fp_of() {  # <kc> <driver> -> that fingerprint's id, or nothing
  k -n "$ns" get kcache "$1" -o json | python3 -c '
import json, sys
fps = json.load(sys.stdin).get("status", {}).get("fingerprints", [])
print(" ".join(f["id"] for f in fps if f.get("driver") == sys.argv[1]))' "$2"
}
fp_field() {  # <kc> <id> <field>
  k -n "$ns" get kcache "$1" -o jsonpath="{.status.fingerprints[?(@.id==\"$2\")].$3}"
}
fp_state_is() { [ "$(fp_field "$1" "$2" state)" = "$3" ]; }
fp_gone() { [ -z "$(fp_field "$1" "$2" id)" ]; }
has_fp_for() { [ -n "$(fp_of "$1" "$2")" ]; }
tree_sums() { (cd "$vol/v1/$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
warmup_jobs() {  # <kc> <fp> -> "name uid" lines
  k -n "$ns" get jobs -l "kernelcache.io/name=$1,kernelcache.io/component=warmup,kernelcache.io/fingerprint=$2" \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.uid}{"\n"}{end}'
}
gate_report() {  # <pod> -> the gate's report (JSON)
  k -n "$ns" get pod "$1" \
    -o jsonpath='{.status.initContainerStatuses[?(@.name=="kernelcache-wait")].state.terminated.message}'
}
json_get() { python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$1" "$2"; }
first_call() { k -n "$ns" logs "$1" -c server 2>/dev/null | grep -m1 '^{' || true; }
# The sealed cache of <kc>'s <fp>: READY on the volume holds the status'
# manifestDigest, the sha256 of its manifest.json.
check_sealed() {
  local digest ready
  digest=$(fp_field "$1" "$2" manifestDigest)
  ready=$(cat "$vol/v1/$2/READY" 2>/dev/null || true)
  [ -n "$digest" ] && [[ "$ready" == *"$digest"* ]] ||
    fail "$1 $2: READY on the volume is '$ready', the status says '$digest'"
  [ "$(sha256sum <"$vol/v1/$2/manifest.json" | cut -d' ' -f1)" = "$digest" ] ||
    fail "$1 $2: manifest.json does not hash to its manifestDigest"
}
# The warmup Job of <kc>'s <fp> ran on the real node and compiled every
# kernel (its warmup container's JSON line).
check_real_warmup() {
  local job line pod_node
  job=$(warmup_jobs "$1" "$2" | tail -1 | cut -d' ' -f1)
  [ -n "$job" ] || fail "$1 $2: no warmup Job"
  pod_node=$(k -n "$ns" get pods -l "job-name=$job" -o jsonpath='{.items[0].spec.nodeName}')
  [ "$pod_node" = "$node" ] || fail "$1 $2: the warmup pod of $job ran on '$pod_node', want $node"
  line=$(k -n "$ns" logs "job/$job" -c warmup 2>/dev/null | grep -m1 '^{' || true)
  [ -n "$line" ] && [ "$(json_get "$line" misses)" = "$(json_get "$line" kernels)" ] &&
    [ "$(json_get "$line" misses)" -gt 0 ] || fail "$1 $2: the warmup did not compile every kernel: '$line'"
  echo "ok: $1 $2 warmed on $node by $job (compiled $(json_get "$line" misses) kernels in $(json_get "$line" first_call_s) s) and sealed"
}

phase "real node up"
cluster up --with-node --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"
phase "helm install charts/kernelcache"
out=$(jit_helm_install --set logFormat=text 2>&1) || fail "helm install: $out"
k create namespace "$ns" >/dev/null
vol="$dir/volumes/du"
jit_hostpath_claim "$ns" du-cache "$vol"
shared="storage: {existingClaim: du-cache, shareExistingClaim: true}"
jit_kernelcache du du '{triton: "3.6.0"}' "$shared" "consume: {waitTimeoutSeconds: 300, onTimeout: Fail}" \
  "retention: {staleAfter: 30s}" | k -n "$ns" apply -f - >/dev/null
jit_kernelcache keep keep '{triton: "3.6.0", model: keep}' "$shared" \
  "consume: {waitTimeoutSeconds: 10, onTimeout: StartCold}" "retention: {staleAfter: 1h}" | k -n "$ns" apply -f - >/dev/null

phase "both KernelCaches warm their fingerprint on driver $old_driver"
kc_ready() { [ "$(k -n "$ns" get kcache "$1" -o jsonpath='{.status.ready}')" = 1/1 ]; }
until_ok "du 1/1 Ready" 300 kc_ready du
until_ok "keep 1/1 Ready" 300 kc_ready keep
f1=$(fp_of du "$old_driver")
k1=$(fp_of keep "$old_driver")
[ -n "$f1" ] && [ -n "$k1" ] && [ "$f1" != "$k1" ] || fail "fingerprints du '$f1', keep '$k1'"
check_sealed du "$f1"
check_sealed keep "$k1"
check_real_warmup du "$f1"
k1_sums=$(tree_sums "$k1")

phase "Deployment du-serve (1 replica, gated) serving warm on $node"
jit_wait_gating "$ns" du >/dev/null || fail "webhook gating"
jit_deployment "$ns" du-serve du 1
first=$(jit_first_calls "$ns" run=du-serve 1) || fail "du-serve did not start"
old_pod=$(cut -d' ' -f1 <<<"$first")
old_uid=$(k -n "$ns" get pod "$old_pod" -o jsonpath='{.metadata.uid}')
[ "$(json_get "$(cut -d' ' -f2- <<<"$first")" misses)" = 0 ] || fail "the first du-serve pod compiled: $first"
[ "$(json_get "$(gate_report "$old_pod")" fingerprint)" = "$f1" ] || fail "$old_pod's gate did not use $f1"
echo "ok: $old_pod warm from $f1 (0 compiled)"

# Every pod event in the namespace from before the cordon to after
# upgrade-done. A pod bound in that window shows spec.nodeName at a
# resourceVersion between the cordon's and upgrade-done's (etcd revisions:
# one counter for every object).
k -n "$ns" get pods -w --output-watch-events -o json >"$dir/pods.watch" 2>"$dir/pods.watch.err" &
watch_pid=$!
until_ok "the pod watch to list $old_pod" 60 grep -qF "\"name\":\"$old_pod\"" "$dir/pods.watch"

phase "driver upgrade $old_driver -> $new_driver: $node cordoned, through the upgrade states"
cordon_rv=$(gpu_upgrade_start "$node")
# The GPU Operator deletes only pods that use nvidia.com/gpu (ours do not)
# and drains only when its policy enables it: du-serve keeps running.
k -n "$ns" scale deployment du-serve --replicas=2 >/dev/null
unschedulable() {
  k -n "$ns" get pods -l run=du-serve -o json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    for c in p["status"].get("conditions", []):
        if c["type"] == "PodScheduled" and c["status"] == "False" and c.get("reason") == "Unschedulable":
            sys.exit(0)
sys.exit(1)'
}
until_ok "the replica added mid-upgrade to be Unschedulable" 120 unschedulable
mid_pod=$(k -n "$ns" get pods -l run=du-serve -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | grep -vx "$old_pod")
echo "ok: $mid_pod (added mid-upgrade) is Pending: $node is cordoned"
gpu_upgrade_state "$node" pod-restart-required
gpu_driver_labels "$node" "$new_driver"
until_ok "du's fingerprint on $new_driver" 120 has_fp_for du "$new_driver"
until_ok "keep's fingerprint on $new_driver" 120 has_fp_for keep "$new_driver"
f2=$(fp_of du "$new_driver")
k2=$(fp_of keep "$new_driver")
until_ok "du $f1 Stale" 120 fp_state_is du "$f1" Stale
until_ok "keep $k1 Stale" 120 fp_state_is keep "$k1" Stale
f1_stale_since=$(fp_field du "$f1" staleSince)
for pair in "du $f2" "keep $k2"; do
  set -- $pair
  st=$(fp_field "$1" "$2" state)
  [ "$st" = Pending ] || fail "$1 $2 is '$st' mid-upgrade, want Pending (no eligible node)"
  [ -z "$(warmup_jobs "$1" "$2")" ] || fail "$1 has a warmup Job for $2 while $node is mid-upgrade"
done
echo "ok: new fingerprints du $f2, keep $k2 Pending with no warmup Job; old $f1, $k1 Stale"

# A gate that asks now: a pod naming its node itself (as a DaemonSet's
# pods do, past the cordon), selected by keep (onTimeout StartCold, 10 s).
k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: keep-probe, labels: {app: keep}}
spec:
  nodeName: $node
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}]
  containers:
  - {name: server, image: $KC_JIT_IMAGE, imagePullPolicy: Never, args: [once]}
YAML
probe_done() { [[ "$(k -n "$ns" get pod keep-probe -o jsonpath='{.status.phase}')" =~ ^(Succeeded|Failed)$ ]]; }
until_ok "keep-probe to finish" 180 probe_done
[ "$(k -n "$ns" get pod keep-probe -o jsonpath='{.status.phase}')" = Succeeded ] || fail "keep-probe failed"
rep=$(gate_report keep-probe)
[ "$(json_get "$rep" outcome)" = Cold ] && [ "$(json_get "$rep" reason)" = Timeout ] &&
  [ "$(json_get "$rep" fingerprint)" = "$k2" ] || fail "keep-probe's gate report: $rep (want Cold, Timeout, $k2)"
line=$(first_call keep-probe)
[ "$(json_get "$line" misses)" = "$(json_get "$line" kernels)" ] || fail "keep-probe started cold but: $line"
echo "ok: a gate asking mid-upgrade got onTimeout StartCold's answer: $(json_get "$rep" outcome)/$(json_get "$rep" reason) after $(json_get "$rep" waitedMs) ms; it compiled $(json_get "$line" misses) kernels"
k -n "$ns" delete pod keep-probe --wait=false >/dev/null
[ -z "$(warmup_jobs du "$f2")$(warmup_jobs keep "$k2")" ] || fail "a warmup Job of $f2/$k2 exists before upgrade-done"
done_rv=$(gpu_upgrade_finish "$node")
phase "$node uncordoned, upgrade-done (resourceVersion $done_rv)"

until_ok "du $f2 Ready" 300 fp_state_is du "$f2" Ready
until_ok "keep $k2 Ready" 300 fp_state_is keep "$k2" Ready
check_real_warmup du "$f2"
check_sealed du "$f2"
check_sealed keep "$k2"
f2_sums=$(tree_sums "$f2")
k2_sums=$(tree_sums "$k2")

phase "gated pods after the upgrade: the new cache, 0 compiles"
k -n "$ns" scale deployment du-serve --replicas=3 >/dev/null
calls=$(jit_first_calls "$ns" run=du-serve 3) || fail "du-serve did not reach 3 pods"
while read -r pod l; do
  [ "$pod" = "$old_pod" ] && continue
  [ "$(json_get "$l" misses)" = 0 ] || fail "$pod compiled after the upgrade: $l"
  [ "$(json_get "$(gate_report "$pod")" fingerprint)" = "$f2" ] || fail "$pod's gate: $(gate_report "$pod") (want $f2)"
  echo "ok: $pod warm from $f2: $(json_get "$l" hits) from the cache, 0 compiled"
done <<<"$calls"

kill "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true
watch_pid=""
python3 - "$dir/pods.watch" "$cordon_rv" "$done_rv" "$mid_pod" <<'EOF' || fail "the pod watch"
import json, sys
text, cordon_rv, done_rv, mid = open(sys.argv[1]).read(), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
dec, i, events = json.JSONDecoder(), 0, []
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    ev, i = dec.raw_decode(text, i)
    events.append(ev)
# Bound before the cordon: the pods the watch showed with a node then.
before = {ev["object"]["metadata"]["uid"] for ev in events
          if int(ev["object"]["metadata"]["resourceVersion"]) < cordon_rv and ev["object"]["spec"].get("nodeName")}
bad, mid_seen, last_rv = [], False, 0
for ev in events:
    p = ev["object"]
    rv = int(p["metadata"]["resourceVersion"])
    last_rv = max(last_rv, rv)
    if rv >= done_rv:
        continue
    name = p["metadata"]["name"]
    mid_seen |= name == mid
    if p["spec"].get("nodeName") and p["metadata"]["uid"] not in before and name != "keep-probe":
        bad.append(f"{name} (rv {rv}) on {p['spec']['nodeName']}")
if last_rv < done_rv:
    sys.exit(f"the watch ended (last rv {last_rv}) before upgrade-done (rv {done_rv})")
if not mid_seen:
    sys.exit(f"the watch never saw {mid} before upgrade-done: it did not cover the window")
if bad:
    sys.exit("placed on the node mid-upgrade: " + ", ".join(sorted(set(bad))))
print(f"ok: {len(events)} pod events; between the cordon (rv {cordon_rv}) and upgrade-done (rv {done_rv}) "
      f"no pod was placed on the node but keep-probe (it names its node)")
EOF

phase "the old fingerprint $f1: staleAfter 30s, then a GC Job in a real pod"
until_ok "du $f1 collected" 300 fp_gone du "$f1"
[ ! -e "$vol/v1/$f1" ] || fail "v1/$f1 still on the volume after CacheCollected"
[ "$(tree_sums "$f2")" = "$f2_sums" ] || fail "GC touched du's new cache v1/$f2"
[ "$(tree_sums "$k1")" = "$k1_sums" ] || fail "GC touched keep's v1/$k1"
[ "$(tree_sums "$k2")" = "$k2_sums" ] || fail "GC touched keep's v1/$k2"
published=$(find "$vol/v1" -mindepth 1 -maxdepth 1 -name '[0-9a-f]*' -printf '%f\n' | sort | tr '\n' ' ')
[ "$published" = "$(printf '%s\n' "$f2" "$k1" "$k2" | sort | tr '\n' ' ')" ] ||
  fail "published caches after GC: $published (want $f2 $k1 $k2)"
echo "ok: v1/$f1 removed; v1/$f2, v1/$k1, v1/$k2 byte for byte unchanged"
k -n "$ns" get events -o json >"$dir/events.json"
python3 - "$dir/events.json" "$f1" "$f1_stale_since" "$node" <<'EOF' || fail "GC Events"
import datetime, json, sys
evs, f1, stale_since, node = json.load(open(sys.argv[1]))["items"], sys.argv[2], sys.argv[3], sys.argv[4]
def t(s):
    return datetime.datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S")
def when(e):
    return t(e.get("lastTimestamp") or e.get("eventTime") or e["firstTimestamp"])
def find(kind, name, reason, text=""):
    return [e for e in evs if e["involvedObject"]["kind"] == kind and e["involvedObject"]["name"].startswith(name)
            and e["reason"] == reason and text in e.get("message", "")]
stale = find("KernelCache", "du", "FingerprintStale", f1)
started = find("KernelCache", "du", "GcStarted", f1)
collected = find("KernelCache", "du", "CacheCollected", f1)
for what, got in (("FingerprintStale", stale), ("GcStarted", started), ("CacheCollected", collected)):
    if not got:
        sys.exit(f"no {what} Event naming {f1}")
    print(f"ok: Event {what}: {got[-1]['message'][:150]}")
waited = (when(started[0]) - t(stale_since)).total_seconds()
if waited < 29:
    sys.exit(f"the GC Job started {waited:.0f} s after {f1} went Stale, before staleAfter (30s)")
job = started[0]["message"].split("GC Job ", 1)[1].split(" ", 1)[0]
sched = find("Pod", job + "-", "Scheduled", "to " + node)
ran = find("Pod", job + "-", "Started", "gc")
done = find("Job", job, "Completed")
if not (sched and ran and done):
    sys.exit(f"GC Job {job}: Scheduled on {node} {bool(sched)}, container gc Started {bool(ran)}, Completed {bool(done)}")
print(f"ok: GC Job {job} started {waited:.0f} s after Stale (staleAfter 30s); its pod "
      f"{sched[0]['involvedObject']['name']} ran on {node} and completed")
EOF
out=$(k -n "$ns" exec "$old_pod" -c server -- /usr/bin/python3 /opt/jit/app/workload.py once 2>&1) ||
  fail "exec in $old_pod: $out"
line=$(grep -m1 '^{' <<<"$out" || true)
[ "$(json_get "$line" misses)" = 0 ] || fail "$old_pod compiles from its view after $f1 was collected: $line"
[ "$(k -n "$ns" get pod "$old_pod" -o jsonpath='{.metadata.uid} {.status.containerStatuses[0].restartCount}')" = "$old_uid 0" ] ||
  fail "$old_pod was replaced or restarted"
echo "ok: $old_pod ran through the upgrade, not restarted; from its view: $(json_get "$line" hits) from the cache, 0 compiled"

phase "downgrade $new_driver -> $old_driver"
k1_jobs=$(warmup_jobs keep "$k1")
gpu_upgrade_start "$node" >/dev/null
gpu_upgrade_state "$node" pod-restart-required
gpu_driver_labels "$node" "$old_driver"
until_ok "keep $k1 Ready again" 120 fp_state_is keep "$k1" Ready
[ "$(k get node "$node" -o jsonpath='{.spec.unschedulable}')" = true ] || fail "$node is not cordoned"
new_jobs=$(comm -13 <(sort <<<"$k1_jobs") <(warmup_jobs keep "$k1" | sort))
[ -z "$new_jobs" ] || fail "a new warmup Job for keep's $k1: $new_jobs"
[ "$(tree_sums "$k1")" = "$k1_sums" ] || fail "keep's v1/$k1 changed"
k -n "$ns" get events -o json | python3 -c '
import json, sys
sys.exit(0 if any(e["reason"] == "FingerprintInUse" and sys.argv[1] in e.get("message", "")
                  for e in json.load(sys.stdin)["items"]) else 1)' "$k1" || fail "no FingerprintInUse Event for $k1"
echo "ok: keep $k1 Ready again while $node is still cordoned: no warmup, cache unchanged, Event FingerprintInUse"
until_ok "du $f1 back" 120 has_fp_for du "$old_driver"
st=$(fp_field du "$f1" state)
[ "$st" = Pending ] || fail "du's collected $f1 came back '$st', want Pending (its cache is gone)"
until_ok "du $f2 Stale" 120 fp_state_is du "$f2" Stale
until_ok "keep $k2 Stale" 120 fp_state_is keep "$k2" Stale
gpu_upgrade_finish "$node" >/dev/null
until_ok "du $f1 warmed again" 300 fp_state_is du "$f1" Ready
check_real_warmup du "$f1"
check_sealed du "$f1"
echo "ok: du's collected $f1 Pending, then warmed again after upgrade-done"
echo "driver_upgrade_test: ok ($(($(date +%s) - t_all)) s)"
