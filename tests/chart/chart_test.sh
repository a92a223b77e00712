#!/usr/bin/env bash
# Integration test of the Helm chart against the real local control plane:
#  1. `helm lint` passes (default and every value set below); the chart's
#     CRD template renders crds/ (one source); crds.install / crds.keep;
#     offline `helm template` renders, a cluster below 1.30 is refused;
#  2. every flag the Deployment passes to the operator is one the operator
#     binary knows;
#  3. `helm template` for the default and non-default value sets, each checked
#     for what it must (and must not) render (check_render.py): default,
#     watchNamespaces, webhook disabled, cert-manager, ServiceMonitor,
#     registry override, a repository naming its registry, one replica;
#  4. values.schema.json refuses wrong values, naming the field;
#  5. each value set applied with `kubectl apply --dry-run=server` on
#     Kubernetes 1.34 (the cert-manager and ServiceMonitor CRDs are absent
#     there: the test installs minimal stand-in CRDs, testdata/stub-crds.yaml,
#     so every rendered object is dry-run, their spec unchecked by a schema);
#  6. `helm install` succeeds, the CRD is Established, the RBAC objects exist,
#     `kubectl get kcache` works; `helm uninstall` removes them but keeps
#     the CRD.
# The real-node part (helm install/test/upgrade/uninstall with running pods)
# is chart_node_test.sh.
# Usage: chart_test.sh <repo root> <kernelcache-operator binary>
set -euo pipefail
root=$1
operator=$2
here="$(cd "$(dirname "$0")" && pwd)"
source "$root/tests/cluster/versions.sh"
helm="$KC_HELM_DIR/helm"
kubectl="$KC_K8S_DIR/kubectl"
[ -x "$helm" ] && [ -x "$kubectl" ] || { echo "FAIL: run tests/cluster/build.sh first"; exit 1; }
chart="$root/charts/kernelcache"
ns=kernelcache-system
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d /tmp/kc-chart-render.XXXXXX)
dir=""
cleanup() {
  [ -n "$dir" ] && { "$root/tests/cluster/cluster.sh" --dir "$dir" down --purge >/dev/null 2>&1 || true; }
  rm -rf "$work"
}
trap cleanup EXIT
# A command that fails outside fail() still says which one (set -e).
trap 'echo "FAIL: chart_test.sh line $LINENO: $BASH_COMMAND (exit $?)"' ERR

# The value sets: name -> helm flags (no spaces inside a flag).
declare -A sets=(
  [default]=""
  [watchns]="--set watchNamespaces={team-a,team-b}"
  [nowebhook]="--set webhook.enabled=false"
  [certmanager]="--set webhook.certManager.enabled=true"
  [servicemonitor]="--set serviceMonitor.enabled=true --set serviceMonitor.interval=15s --set serviceMonitor.labels.release=prom"
  [registry]="--set global.imageRegistry=mirror.example:5000 --set imagePullSecrets[0].name=regcred --set nodeSelector.pool=system --set tolerations[0].key=dedicated --set tolerations[0].operator=Exists"
  [registry-as-written]="--set image.repository=kernelcache.local/operator --set image.tag=dev --set image.pullPolicy=Never --set initwarmImage.registry=my.registry --set initwarmImage.repository=kc/initwarm --set initwarmImage.tag=7 --set service.clusterIP=10.96.0.50 --set resolveUrl=http://10.96.0.50"
  [replicas1]="--set replicas=1"
)
names=(default watchns nowebhook certmanager servicemonitor registry registry-as-written replicas1)

# 1. lint, CRD single-sourced.
for n in "${names[@]}"; do
  # shellcheck disable=SC2086
  out=$("$helm" lint "$chart" --kube-version 1.34.4 -n "$ns" ${sets[$n]} 2>&1) ||
    fail "helm lint ($n): $out"
  grep -q "0 chart(s) failed" <<<"$out" || fail "helm lint ($n): $out"
  grep -q "\[WARNING\]" <<<"$out" && fail "helm lint ($n) warns: $out"
done
rendered="$work/default.yaml"
"$helm" template kc "$chart" --kube-version 1.34.4 -n "$ns" 2>/dev/null >"$rendered"
# The CRD is a template (helm upgrade upgrades it) rendered from crds/: the
# same object, plus the chart's labels and helm.sh/resource-policy: keep.
# No crds/ folder in the chart: Helm would install that copy too.
python3 - "$rendered" "$root/crds/kernelcache.kernelcache.io.yaml" <<'PY' || fail "chart CRD differs from crds/"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
crd = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
src = yaml.safe_load(open(sys.argv[2]))
assert len(crd) == 1, f"{len(crd)} CRDs rendered"
meta = crd[0]["metadata"]
assert meta.pop("annotations") == {"helm.sh/resource-policy": "keep"}, "CRD annotations"
labels = meta.pop("labels")
assert labels["app.kubernetes.io/managed-by"] == "Helm" and labels["app.kubernetes.io/version"], labels
assert crd[0] == src, "chart CRD != crds/ (besides labels and annotations)"
PY
[ ! -e "$chart/crds" ] || fail "charts/kernelcache/crds/ exists: Helm would install it besides the template"
[ "$(readlink -f "$chart/files/crds")" = "$(readlink -f "$root/crds")" ] ||
  fail "charts/kernelcache/files/crds is not a link to crds/"
out=$("$helm" template kc "$chart" --set crds.install=false 2>&1) || fail "crds.install=false: $out"
grep -q "kind: CustomResourceDefinition" <<<"$out" && fail "crds.install=false still renders the CRD"
out=$("$helm" template kc "$chart" --set crds.keep=false 2>&1) || fail "crds.keep=false: $out"
grep -q "resource-policy" <<<"$out" && fail "crds.keep=false still keeps the CRD"
# The minimum Kubernetes version: offline (no cluster, no --kube-version)
# the chart renders; a cluster below 1.30 is refused by name.
out=$("$helm" template kc "$chart" 2>&1) || fail "helm template offline: $out"
grep -q "kind: Deployment" <<<"$out" || fail "helm template offline rendered no Deployment"
for v in 1.29.9 1.21.0; do
  out=$("$helm" template kc "$chart" --kube-version "$v" 2>&1) && fail "--kube-version $v was not refused"
  grep -qF "kernelcache needs Kubernetes 1.30.0 or newer; this cluster is v$v" <<<"$out" ||
    fail "--kube-version $v: unclear refusal: $out"
done
"$helm" template kc "$chart" --kube-version 1.30.0 >/dev/null 2>&1 || fail "--kube-version 1.30.0 refused"
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

# 2. Every --flag in the Deployment, in every value set, is known to the operator.
help=$("$operator" --help 2>&1 || true)
for n in "${names[@]}"; do
  # shellcheck disable=SC2086
  "$helm" template kc "$chart" --kube-version 1.34.4 -n "$ns" ${sets[$n]} >"$work/$n.yaml" 2>"$work/$n.err" ||
    fail "helm template ($n): $(cat "$work/$n.err")"
done
cat "$work"/*.yaml | python3 -c '
import sys, yaml
flags = set()
for d in yaml.safe_load_all(sys.stdin):
    if d and d["kind"] == "Deployment":
        for a in d["spec"]["template"]["spec"]["containers"][0]["args"]:
            flags.add(a.split("=")[0])
print("\n".join(sorted(flags)))' >"$work/flags"
while read -r flag; do
  grep -q -- "$flag" <<<"$help" || fail "chart passes $flag, which kernelcache-operator --help does not list"
done <"$work/flags"
echo "ok: chart lint (${#names[@]} value sets), CRD single-sourced, $(wc -l <"$work/flags") operator flags known"

# 3. What each value set renders.
for n in "${names[@]}"; do
  python3 "$here/check_render.py" "$n" "$work/$n.yaml" "$root" || fail "rendered chart ($n)"
done
echo "ok: helm template checked for ${names[*]}"

# 4. The schema refuses wrong values and names the field.
refused=0
while IFS='|' read -r flags want; do
  [ -z "$flags" ] && continue
  # shellcheck disable=SC2086
  if out=$("$helm" template kc "$chart" --kube-version 1.34.4 $flags 2>&1 >/dev/null); then
    fail "schema accepted $flags"
  fi
  grep -q "schema" <<<"$out" || fail "$flags refused, but not by the schema: $out"
  grep -qF -- "$want" <<<"$out" || fail "$flags: the error does not name '$want': $out"
  refused=$((refused + 1))
done <<'EOF'
--set replicas=0|/replicas
--set replicas=two|/replicas
--set logFormat=xml|/logFormat
--set logLevel=verbose|/logLevel
--set webhook.failurePolicy=Maybe|/webhook/failurePolicy
--set webhook.port=70000|/webhook/port
--set httpPort=0|/httpPort
--set webhook.timeoutSeconds=60|/webhook/timeoutSeconds
--set workers=0|/workers
--set warmupUnschedulableGrace=2minutes|/warmupUnschedulableGrace
--set webhook.certLifetime=90d|/webhook/certLifetime
--set serviceMonitor.interval=often|/serviceMonitor/interval
--set image.pullPolicy=Sometimes|/image/pullPolicy
--set replcas=2|replcas
--set webhook.enabeld=true|enabeld
--set watchNamespaces={Team_A}|/watchNamespaces/0
--set warmupPriorityClass.value=3000000000|/warmupPriorityClass/value
--set leaderElection=maybe|/leaderElection
--set resolveUrl=https://kc.example|/resolveUrl
--set service.clusterIP=kc-operator|/service/clusterIP
--set service.type=NodePort|type
EOF
echo "ok: values.schema.json refuses $refused wrong values, naming the field"

# 5. Server-side dry run of every value set.
dir=$(mktemp -d /tmp/kc-chart-test.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
cluster up --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"
for n in "$ns" team-a team-b; do "$kubectl" create namespace "$n" >/dev/null; done
"$kubectl" apply -f "$root/crds/" -f "$here/testdata/stub-crds.yaml" >/dev/null
cluster wait-crd crd --all >/dev/null || fail "CRDs not Established"
# The ServiceAccount admission plugin refuses a pod whose ServiceAccount does
# not exist, and a dry run creates nothing: the test pod's ServiceAccount (a
# test hook of the chart) exists for real during the dry runs; the namespace's
# default one (the pod without the webhook) once the controller made it.
"$kubectl" -n "$ns" create serviceaccount kc-operator-test >/dev/null
for _ in $(seq 60); do "$kubectl" -n "$ns" get serviceaccount default >/dev/null 2>&1 && break; sleep 1; done
for n in "${names[@]}"; do
  out=$("$kubectl" apply --dry-run=server -f "$work/$n.yaml" 2>&1) || fail "dry-run=server ($n): $out"
  count=$(grep -c "(server dry run)" <<<"$out" || true)
  want=$(python3 -c 'import sys,yaml; print(sum(1 for d in yaml.safe_load_all(open(sys.argv[1])) if d))' "$work/$n.yaml")
  [ "$count" = "$want" ] || fail "dry-run=server ($n): $count of $want objects: $out"
done
echo "ok: kubectl apply --dry-run=server of ${#names[@]} value sets (cert-manager and ServiceMonitor kinds against stand-in CRDs)"
"$kubectl" delete -f "$here/testdata/stub-crds.yaml" >/dev/null
"$kubectl" -n "$ns" delete serviceaccount kc-operator-test >/dev/null
# helm install below creates the CRD itself (a CRD Helm does not own would
# be refused: docs/helm.md, "Upgrading").
"$kubectl" delete -f "$root/crds/" --wait >/dev/null

# 6. helm install / uninstall (no node: the pods stay Pending).
"$helm" install kc "$chart" -n "$ns" --wait=false >/dev/null
cluster wait-crd crd/kernelcaches.kernelcache.io >/dev/null || fail "the CRD is not Established after helm install"
for obj in serviceaccount/kc-operator deployment/kc-operator service/kc-operator role/kc-operator-leader \
  poddisruptionbudget/kc-operator service/kc-operator-webhook; do
  "$kubectl" -n "$ns" get "$obj" >/dev/null || fail "$obj missing after helm install"
done
"$kubectl" get clusterrole kc-operator >/dev/null || fail "clusterrole missing"
"$kubectl" get priorityclass kernelcache-warmup >/dev/null || fail "priorityclass missing"
notes=$("$helm" get notes kc -n "$ns")
grep -q "kubectl get kcache" <<<"$notes" && grep -q "docs/helm.md" <<<"$notes" || fail "NOTES: $notes"
"$kubectl" apply -f "$root/examples/llama-kernelcache.yaml" >/dev/null
cols=$("$kubectl" get kcache llama 2>&1 | sed -n 1p)
[[ "$cols" == *READY*PHASE*SIZE*AGE* ]] || fail "kubectl get kcache columns: $cols"
"$kubectl" delete -f "$root/examples/llama-kernelcache.yaml" --wait=false >/dev/null
"$helm" uninstall kc -n "$ns" >/dev/null
"$kubectl" -n "$ns" get deployment kc-operator >/dev/null 2>&1 && fail "deployment left after uninstall"
"$kubectl" get clusterrole kc-operator >/dev/null 2>&1 && fail "clusterrole left after uninstall"
# crds.keep: the CRD, and the KernelCaches with it, outlive the release.
"$kubectl" get crd kernelcaches.kernelcache.io >/dev/null 2>&1 || fail "helm uninstall deleted the CRD"
echo "ok: helm install/uninstall on $("$kubectl" version -o json | python3 -c 'import json,sys;print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')"
