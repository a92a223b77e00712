#!/usr/bin/env bash
# A warmup the operator stops mid-run, through real pods on the real node
# (tests/cluster/node.sh; root only). The warmup's prepare took the
# fingerprint's lock on the volume; a stopped warmup never reaches seal,
# which would release it. The operator remembers the Job it stopped and,
# once the Job and its pods are gone, names it dead to whoever writes that
# fingerprint next.
#
# One KernelCache (wc) on a hostPath volume (existingClaim), so the test
# reads the lock files and staging directories directly; its first warmup
# command blocks (a Python sleep that exits on SIGTERM). Asserted:
#  - the driver labels change mid-warmup: fingerprint F1 goes Stale, its
#    running warmup Job is deleted in the foreground (its pod is gone before
#    the Job) and recorded in status cancelledJobUids; F1's lock, owned by
#    that Job, is still on the volume;
#  - the warmup command is fixed and the driver goes back: F1's next warmup
#    Job passes the cancelled Job's uid in prepare's --break-lock-of, warms
#    F1 in a real pod and seals it (READY = the status' manifestDigest); the
#    lock is released and cancelledJobUids cleared;
#  - F2 (the other driver's fingerprint, whose blocking warmup is stopped
#    the same way) is collected after staleAfter by a GC Job given that
#    uid: F2's lock and staging, younger than any age limit, are removed.
# Usage: warmup_cancel_test.sh <repo root>   (KC_IMAGES_DIR: the archives)
set -euo pipefail
root=$1
source "$root/tests/cluster/node_test_prelude.sh" operator initwarm pause jit-workload
source "$root/scripts/lib/jit_node.sh"
source "$root/scripts/lib/gpu_upgrade.sh"
ns=wc
node=kc-node
old_driver=580.159.04
new_driver=580.200.01
dir=$(mktemp -d /tmp/kc-warmup-cancel.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
k() { "$kubectl" "$@"; }
fail() {
  echo "FAIL: $*"
  k -n "$ns" get kcache wc -o yaml 2>&1 | sed -n '/^status:/,$p' | sed 's/^/  /' || true
  k -n "$ns" get pods,jobs -o wide 2>&1 | sed 's/^/  /' || true
  k -n "$ns" get events --sort-by=.lastTimestamp 2>&1 | tail -25 | sed 's/^/  /' || true
  k -n kernelcache-system logs -l app.kubernetes.io/name=kernelcache --tail=20 2>&1 | sed 's/^/  /' || true
  find "$vol/v1" -maxdepth 2 2>/dev/null | sed 's/^/  /' || true
  exit 1
}
cleanup() {
  cluster down --purge >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
t_all=$(date +%s)
fp_of() {  # <driver> -> that fingerprint's id, or nothing
  k -n "$ns" get kcache wc -o json | python3 -c '
import json, sys
fps = json.load(sys.stdin).get("status", {}).get("fingerprints", [])
print(" ".join(f["id"] for f in fps if f.get("driver") == sys.argv[1]))' "$1"
}
fp_field() {  # <id> <field>
  k -n "$ns" get kcache wc -o jsonpath="{.status.fingerprints[?(@.id==\"$1\")].$2}"
}
fp_state_is() { [ "$(fp_field "$1" state)" = "$2" ]; }
fp_gone() { [ -z "$(fp_field "$1" id)" ]; }
has_fp_for() { [ -n "$(fp_of "$1")" ]; }
lock_owner() {  # <fp> -> the owner in its lock file on the volume, or nothing
  [ -f "$vol/v1/.locks/$1.lock" ] || return 0
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["owner"])' "$vol/v1/.locks/$1.lock"
}
job_uid() {  # <fp> -> the uid of its warmup Job, or nothing
  k -n "$ns" get jobs -l "kernelcache.io/component=warmup,kernelcache.io/fingerprint=$1" \
    -o jsonpath='{.items[*].metadata.uid}'
}
job_with_uid() { k -n "$ns" get jobs -o jsonpath='{.items[*].metadata.uid}' | tr ' ' '\n' | grep -qx "$1"; }
pods_of_uid() { k -n "$ns" get pods -l "batch.kubernetes.io/controller-uid=$1" -o name; }
# The warmup container of <uid>'s pod is running: prepare took the lock.
warming() {
  [ "$(k -n "$ns" get pods -l "batch.kubernetes.io/controller-uid=$1" \
    -o jsonpath='{.items[0].status.initContainerStatuses[?(@.name=="warmup")].state.running.startedAt}')" != "" ]
}
# blocked_warmup <driver>: waits for that driver's fingerprint ($fp) and
# its warmup Job ($uid) to run its warmup container (prepare took the lock).
blocked_warmup() {
  until_ok "a fingerprint on $1" 120 has_fp_for "$1"
  fp=$(fp_of "$1")
  until_ok "$fp's warmup Job" 120 job_uid "$fp"
  uid=$(job_uid "$fp")
  until_ok "$fp's warmup container running" 180 warming "$uid"
}
cancelled_has() { fp_field "$1" cancelledJobUids | grep -qF "$2"; }
# Stopped: the Job is gone, and no pod of it is left.
stopped() { ! job_with_uid "$1" && [ -z "$(pods_of_uid "$1")" ]; }

phase "real node up"
cluster up --with-node --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"
phase "helm install charts/kernelcache"
out=$(jit_helm_install --set logFormat=text 2>&1) || fail "helm install: $out"
k create namespace "$ns" >/dev/null
vol="$dir/volumes/wc"
jit_hostpath_claim "$ns" wc-cache "$vol"
k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: kernelcache.io/v1alpha1
kind: KernelCache
metadata: {name: wc}
spec:
  podSelector: {matchLabels: {app: wc}}
  image: $KC_JIT_IMAGE
  runtime: {triton: "3.6.0"}
  warmup:
    command: ["/usr/bin/python3", "-c", "import signal, sys, time; signal.signal(signal.SIGTERM, lambda *a: sys.exit(143)); time.sleep(600)"]
    backoffLimit: 0
    activeDeadlineSeconds: 600
  storage: {existingClaim: wc-cache}
  retention: {staleAfter: 30s}
YAML

phase "F1's warmup (driver $old_driver) blocks in its warmup container, holding F1's lock"
blocked_warmup "$old_driver"
f1=$fp uid1=$uid
[ "$(lock_owner "$f1")" = "$uid1" ] || fail "F1's lock is owned by '$(lock_owner "$f1")', want its Job $uid1"
echo "ok: F1 $f1 warming in Job $uid1, which owns v1/.locks/$f1.lock"

phase "driver $old_driver -> $new_driver mid-warmup: F1 Stale, its warmup stopped"
gpu_driver_labels "$node" "$new_driver"
until_ok "F1 Stale" 120 fp_state_is "$f1" Stale
until_ok "F1's cancelledJobUids to name $uid1" 60 cancelled_has "$f1" "$uid1"
# Foreground: the Job stays until its pods are gone. Seen at any moment, a
# gone Job has no pod left (the pods are listed after the Job is seen gone:
# listed before, a pod removed in between looked like one that outlived it).
for ((i = 0; i < 120; i++)); do
  if ! job_with_uid "$uid1"; then
    pods=$(pods_of_uid "$uid1")
    [ -z "$pods" ] || fail "Job $uid1 is gone but its pod $pods is not: not a foreground delete"
    break
  fi
  sleep 1
done
stopped "$uid1" || fail "F1's warmup Job $uid1 was not stopped"
[ "$(lock_owner "$f1")" = "$uid1" ] || fail "F1's lock is owned by '$(lock_owner "$f1")', want the stopped $uid1"
echo "ok: Job $uid1 deleted in the foreground and recorded; its lock is still on the volume"
blocked_warmup "$new_driver"
f2=$fp uid2=$uid

phase "the warmup fixed, the driver back to $old_driver: F1 warmed past the stopped Job's lock"
k -n "$ns" patch kcache wc --type merge \
  -p '{"spec":{"warmup":{"command":["/usr/bin/python3","/opt/jit/app/workload.py","warmup"]}}}' >/dev/null
gpu_driver_labels "$node" "$old_driver"
until_ok "F1 Ready" 300 fp_state_is "$f1" Ready
new_uid=$(fp_field "$f1" jobUid)
[ -n "$new_uid" ] && [ "$new_uid" != "$uid1" ] || fail "F1's recorded Job is '$new_uid'"
job=$(fp_field "$f1" job)
args=$(k -n "$ns" get job "$job" -o jsonpath='{.spec.template.spec.initContainers[?(@.name=="prepare")].args}')
grep -qF -- "--break-lock-of=" <<<"$args" && grep -qF "$uid1" <<<"$args" ||
  fail "F1's new warmup Job $job: prepare args $args do not name $uid1"
digest=$(fp_field "$f1" manifestDigest)
[ -n "$digest" ] && grep -qF "$digest" "$vol/v1/$f1/READY" || fail "v1/$f1/READY does not hold $digest"
[ -z "$(lock_owner "$f1")" ] || fail "F1's lock is still held by '$(lock_owner "$f1")' after the seal"
[ -z "$(fp_field "$f1" cancelledJobUids)" ] || fail "cancelledJobUids of F1 not cleared: $(fp_field "$f1" cancelledJobUids)"
line=$(k -n "$ns" logs "job/$job" -c warmup 2>/dev/null | grep -m1 '^{' || true)
[ -n "$line" ] || fail "F1's warmup printed no result line"
echo "ok: Job $job broke $uid1's lock (--break-lock-of), warmed and sealed F1 on $node: $line"

phase "F2 (its blocking warmup stopped) collected after staleAfter 30s, its lock and staging too"
until_ok "F2 Stale" 120 fp_state_is "$f2" Stale
until_ok "F2's warmup Job stopped" 120 stopped "$uid2"
[ "$(lock_owner "$f2")" = "$uid2" ] || fail "F2's lock is owned by '$(lock_owner "$f2")', want the stopped $uid2"
[ -d "$vol/v1/.staging/$f2-$uid2" ] || fail "no staging v1/.staging/$f2-$uid2 of the stopped warmup"
until_ok "F2 collected" 180 fp_gone "$f2"
[ ! -e "$vol/v1/.locks/$f2.lock" ] || fail "F2's lock outlived GC: owner $(lock_owner "$f2")"
[ ! -e "$vol/v1/.staging/$f2-$uid2" ] || fail "the stopped warmup's staging outlived GC"
grep -qF "$digest" "$vol/v1/$f1/READY" || fail "GC touched F1"
collected=$(k -n "$ns" get events -o json | python3 -c '
import json, sys
print(" ".join(e["message"] for e in json.load(sys.stdin)["items"] if e["reason"] == "CacheCollected"))')
grep -qF "$f2" <<<"$collected" || fail "no CacheCollected Event for $f2: $collected"
echo "ok: F2 $f2 collected; its stopped warmup's lock and staging removed"
echo "warmup_cancel_test: ok ($(($(date +%s) - t_all)) s)"
