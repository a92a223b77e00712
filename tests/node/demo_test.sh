#!/usr/bin/env bash
# Runs the README's main job, scripts/demo.sh, as a user would (root, no
# cluster configured: KC_DEMO_EMBEDDED=1 so a developer's own kubeconfig is
# never used) and checks it ended with its summary: warm pods with zero
# compiles, the driver upgrade's rows for the kwok nodes and for the real
# node (its new fingerprint warmed there, a pod added after it warm, its old
# cache collected by a GC Job on kc-node), and nothing of the real node left
# running.
# Usage: demo_test.sh <repo root>
set -uo pipefail
root=$1
out=$(mktemp /tmp/kc-demo-test.XXXXXX)
trap 'rm -f "$out"' EXIT
KC_DEMO_EMBEDDED=1 "$root/scripts/demo.sh" >"$out" 2>&1
rc=$?
fail() {
  echo "FAIL: $*"
  tail -60 "$out"
  exit 1
}
[ "$rc" = 0 ] || fail "scripts/demo.sh exited $rc"
sed -n '/8\/8 summary/,$p' "$out"
for want in "ungated pod, first call (cold)" "first call (warm)" "0 compiled, 8 from the cache" \
  "driver upgrade (kwok): new fingerprint Ready" "driver upgrade (kwok): old fingerprint collected" \
  "driver upgrade (real node): new fingerprint Ready" "driver upgrade (real node): old fingerprint collected" \
  "GC Job pod on kc-node; its directory gone" \
  "zero recompiles" "demo: stopping everything it started"; do
  grep -qF -- "$want" "$out" || fail "the demo's output lacks \"$want\""
done
grep -q "gate Warm in" "$out" || fail "no gated pod reported gate outcome Warm"
# The webhook is reinvoked after the ServiceAccount plugin mounts the token
# into our gate too: that is not a conflict.
grep -q "InjectionConflict" "$out" && fail "a gated pod reported an InjectionConflict"
# Its KernelCache names the class of its static hostPath PersistentVolume:
# the claim binds, so the validating webhook must not warn about the class.
grep -q "spec.storage.storageClassName: StorageClass" "$out" &&
  fail "the demo was warned about a StorageClass its PersistentVolume names"
left=$(pgrep -af 'kube-apiserver|kubelet|containerd --config|kwok' | grep /tmp/kc-demo || true)
[ -z "$left" ] || fail "the demo left processes running: $left"
echo "demo_test: ok"
