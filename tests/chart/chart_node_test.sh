#!/usr/bin/env bash
# The Helm chart on the real node (tests/cluster/node.sh: containerd +
# kubelet; root only), with the images scripts/build-images.sh built
# (KC_IMAGES_DIR, imported into containerd, never pulled):
#  1. `helm install --wait`: both operator replicas Ready;
#  2. `helm test`: the test pod gets /healthz and /readyz over the Service,
#     a dry-run KernelCache create through the API server comes back with
#     the validating webhook's Warning;
#  3. `helm upgrade` to a changed value (workers 4 -> 3): the Deployment
#     rolls out with --workers=3, and `helm test` passes again;
#  4. `helm uninstall --wait`: no Deployment, ClusterRole, webhook
#     configuration or PriorityClass is left; the CRD is (crds.keep).
# Usage: chart_node_test.sh <repo root>   (KC_IMAGES_DIR: the image archives)
set -euo pipefail
root=$1
source "$root/tests/cluster/node_test_prelude.sh" operator initwarm pause warmup-test
chart="$root/charts/kernelcache"
ns=kernelcache-system
fail() {
  echo "FAIL: $*"
  "$kubectl" -n "$ns" get pods -o wide 2>&1 | sed 's/^/  /' || true
  "$kubectl" -n "$ns" get events --sort-by=.lastTimestamp 2>&1 | tail -20 | sed 's/^/  /' || true
  for p in $("$kubectl" -n "$ns" get pods -l app.kubernetes.io/name=kernelcache -o name 2>/dev/null); do
    echo "  --- $p"
    "$kubectl" -n "$ns" logs "$p" --all-containers --tail=30 2>&1 | sed 's/^/  /' || true
  done
  exit 1
}
dir=$(mktemp -d /tmp/kc-chart-node.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
trap 'cluster down --purge >/dev/null 2>&1 || true' EXIT
cluster up --with-node --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"

images=(
  --set image.repository=kernelcache.local/operator --set image.tag=dev --set image.pullPolicy=Never
  --set initwarmImage.repository=kernelcache.local/initwarm --set initwarmImage.tag=dev
  --set tests.image.repository=kernelcache.local/warmup-test --set tests.image.tag=dev
  --set tests.image.pullPolicy=Never --set logFormat=text
)
t0=$(date +%s)
out=$("$helm" install kc "$chart" -n "$ns" --create-namespace "${images[@]}" --wait --timeout 180s 2>&1) ||
  fail "helm install: $out"
ready=$("$kubectl" -n "$ns" get deployment kc-operator -o jsonpath='{.status.readyReplicas}')
[ "$ready" = 2 ] || fail "readyReplicas $ready after helm install --wait"
echo "ok: helm install on the real node, 2 replicas Ready in $(($(date +%s) - t0)) s"

helm_test() {
  local out
  out=$("$helm" test kc -n "$ns" --timeout 180s --logs 2>&1) || fail "helm test ($1): $out"
  for want in "ok: GET /healthz" "ok: GET /readyz" "ok: server-side dry-run create" \
    "admitted by the validating webhook"; do
    grep -qF "$want" <<<"$out" || fail "helm test ($1) did not print '$want': $out"
  done
  echo "ok: helm test ($1): $(grep '^ok:' <<<"$out" | sort -u | wc -l) checks passed"
}
helm_test install

out=$("$helm" upgrade kc "$chart" -n "$ns" --reuse-values --set workers=3 --wait --timeout 180s 2>&1) ||
  fail "helm upgrade: $out"
"$kubectl" -n "$ns" rollout status deployment/kc-operator --timeout=120s >/dev/null ||
  fail "rollout after helm upgrade"
args=$("$kubectl" -n "$ns" get deployment kc-operator -o jsonpath='{.spec.template.spec.containers[0].args}')
grep -q -- '--workers=3' <<<"$args" || fail "upgrade did not change --workers: $args"
rev=$("$helm" history kc -n "$ns" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-1]["revision"])')
[ "$rev" = 2 ] || fail "release revision $rev after one upgrade"
echo "ok: helm upgrade (workers 4 -> 3), revision 2 rolled out"
helm_test upgrade

out=$("$helm" uninstall kc -n "$ns" --wait --timeout 120s 2>&1) || fail "helm uninstall: $out"
for obj in deployment/kc-operator service/kc-operator service/kc-operator-webhook; do
  "$kubectl" -n "$ns" get "$obj" >/dev/null 2>&1 && fail "$obj left after uninstall"
done
for obj in clusterrole/kc-operator mutatingwebhookconfiguration/kc-operator \
  validatingwebhookconfiguration/kc-operator priorityclass/kernelcache-warmup; do
  "$kubectl" get "$obj" >/dev/null 2>&1 && fail "$obj left after uninstall"
done
"$kubectl" get crd kernelcaches.kernelcache.io >/dev/null 2>&1 || fail "helm uninstall deleted the CRD (crds.keep)"
# Helm keeps a test hook's pod (hook-delete-policy before-hook-creation, for
# `helm test --logs`); the Secret is the operator's, not the chart's.
"$kubectl" -n "$ns" delete pod kc-operator-test --ignore-not-found >/dev/null
echo "ok: helm uninstall left no chart object"
