#!/usr/bin/env bash
# Integration test of the Helm chart against the real local control plane:
#  1. `helm lint` passes and the chart's CRD is byte-identical to crds/ (one source);
#  2. every flag the Deployment passes to the operator is one the operator binary knows;
#  3. `helm install` succeeds on Kubernetes 1.34, the CRD is Established, the
#     RBAC objects exist, `kubectl get kcache` works; `helm uninstall` removes them.
# Usage: chart_test.sh <repo root> <kernelcache-operator binary>
set -euo pipefail
root=$1
operator=$2
source "$root/tests/cluster/versions.sh"
helm="$KC_HELM_DIR/helm"
kubectl="$KC_K8S_DIR/kubectl"
[ -x "$helm" ] && [ -x "$kubectl" ] || { echo "FAIL: run tests/cluster/build.sh first"; exit 1; }
chart="$root/charts/kernelcache"
fail() { echo "FAIL: $*"; exit 1; }

"$helm" lint "$chart" --kube-version 1.34.4 2>/dev/null | grep -q "0 chart(s) failed" || fail "helm lint"
rendered=$(mktemp)
"$helm" template kc "$chart" --kube-version 1.34.4 --include-crds 2>/dev/null >"$rendered"
# The CRD in the rendered chart is the one in crds/.
python3 - "$rendered" "$root/crds/kernelcache.kernelcache.io.yaml" <<'PY' || fail "chart CRD differs from crds/"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
crd = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
src = yaml.safe_load(open(sys.argv[2]))
assert len(crd) == 1 and crd[0] == src, "chart CRD != crds/"
PY
# The warmup PriorityClass: high, below system-*, may preempt; and the
# Deployment gives its name to the operator.
python3 - "$rendered" <<'PY' || fail "warmup PriorityClass"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
pcs = [d for d in docs if d["kind"] == "PriorityClass"]
assert len(pcs) == 1, pcs
pc = pcs[0]
assert pc["metadata"]["name"] == "kernelcache-warmup", pc
assert 0 < pc["value"] < 2000000000, pc["value"]
assert pc["preemptionPolicy"] == "PreemptLowerPriority" and not pc["globalDefault"], pc
dep = [d for d in docs if d["kind"] == "Deployment"][0]
args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
assert "--warmup-priority-class=kernelcache-warmup" in args, args
PY
"$helm" template kc "$chart" --kube-version 1.34.4 --set warmupPriorityClass.create=false \
  --set warmupPriorityClass.name= 2>/dev/null | grep -q "kind: PriorityClass" &&
  fail "warmupPriorityClass.create=false still renders a PriorityClass"
# Every --flag in the Deployment is known to the operator.
help=$("$operator" --help 2>&1 || true)
python3 - "$rendered" <<'PY' >"$rendered.flags"
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Deployment":
        for a in d["spec"]["template"]["spec"]["containers"][0]["args"]:
            print(a.split("=")[0])
PY
while read -r flag; do
  grep -q -- "$flag" <<<"$help" || fail "chart passes $flag, which kernelcache-operator --help does not list"
done <"$rendered.flags"
echo "ok: chart lint, CRD single-sourced, $(wc -l <"$rendered.flags") operator flags known"

dir=$(mktemp -d /tmp/kc-chart-test.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
trap 'cluster down --purge >/dev/null 2>&1 || true' EXIT
cluster up --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"
"$kubectl" create namespace kernelcache-system >/dev/null
"$helm" install kc "$chart" -n kernelcache-system --wait=false >/dev/null
"$kubectl" wait --for condition=established --timeout=60s crd/kernelcaches.kernelcache.io >/dev/null
for obj in serviceaccount/kc-operator deployment/kc-operator service/kc-operator role/kc-operator-leader; do
  "$kubectl" -n kernelcache-system get "$obj" >/dev/null || fail "$obj missing after helm install"
done
"$kubectl" get clusterrole kc-operator >/dev/null || fail "clusterrole missing"
"$kubectl" get priorityclass kernelcache-warmup >/dev/null || fail "priorityclass missing"
"$kubectl" apply -f "$root/examples/llama-kernelcache.yaml" >/dev/null
cols=$("$kubectl" get kcache llama 2>&1 | head -1)
[[ "$cols" == *READY*PHASE*SIZE*AGE* ]] || fail "kubectl get kcache columns: $cols"
"$kubectl" delete -f "$root/examples/llama-kernelcache.yaml" --wait=false >/dev/null
"$helm" uninstall kc -n kernelcache-system >/dev/null
"$kubectl" -n kernelcache-system get deployment kc-operator >/dev/null 2>&1 && fail "deployment left after uninstall"
echo "ok: helm install/uninstall on $("$kubectl" version -o json | python3 -c 'import json,sys;print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')"
