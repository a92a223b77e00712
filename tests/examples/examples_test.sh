#!/usr/bin/env bash
# Integration test of examples/ (the KernelCaches and Deployments of
# docs/user-guide.md) and of the install order the guide gives for deploy/:
#  1. every example file parses, and each example directory's Deployment is
#     selected by its KernelCache (pod template labels match spec.podSelector,
#     the pod's nodeSelector lies inside the KernelCache's, same image);
#  2. on the real local control plane (Kubernetes 1.34) with the CRD
#     installed (a real apply, not a dry run: the API server must know the
#     kind), every file in examples/ passes `kubectl apply --dry-run=server`,
#     so the CRD's schema and CEL rules accept every KernelCache;
#  3. `kubectl apply --server-side -f deploy/` (for real, name order) works on
#     the fresh cluster: the Namespace file sorts first; it creates the
#     warmup PriorityClass; a second apply changes nothing that fails.
# Usage: examples_test.sh <repo root>
set -euo pipefail
root=$1
source "$root/tests/cluster/versions.sh"
kubectl="$KC_K8S_DIR/kubectl"
[ -x "$kubectl" ] || { echo "FAIL: run tests/cluster/build.sh first"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }

mapfile -t files < <(find "$root/examples" -name '*.yaml' -type f | sort)
[ "${#files[@]}" -gt 0 ] || fail "no files in examples/"

python3 - "$root/examples" <<'PY' || fail "examples are not consistent"
import os, sys, yaml
root = sys.argv[1]

def selects(sel, labels):
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, vals = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(k) not in vals: return False
        if op == "NotIn" and k in labels and labels[k] in vals: return False
        if op == "Exists" and k not in labels: return False
        if op == "DoesNotExist" and k in labels: return False
    return True

kcs, deps = {}, {}
for dirpath, _, names in os.walk(root):
    for n in sorted(names):
        if not n.endswith(".yaml"):
            continue
        path = os.path.join(dirpath, n)
        for d in yaml.safe_load_all(open(path)):
            if not d:
                continue
            assert "kind" in d and "metadata" in d, path
            if d["kind"] == "KernelCache":
                kcs.setdefault(dirpath, []).append(d)
            elif d["kind"] == "Deployment":
                deps.setdefault(dirpath, []).append(d)
checked = 0
for dirpath, ds in deps.items():
    assert dirpath in kcs, f"{dirpath}: a Deployment without a KernelCache beside it"
    for dep in ds:
        tmpl = dep["spec"]["template"]
        labels = tmpl["metadata"]["labels"]
        chosen = [k for k in kcs[dirpath] if selects(k["spec"]["podSelector"], labels)]
        assert len(chosen) == 1, f"{dirpath}: {dep['metadata']['name']} selected by {len(chosen)} KernelCaches"
        kc = chosen[0]
        name = kc["metadata"]["name"]
        assert labels.get("kernelcache.io/consumer") == name, f"{dirpath}: kernelcache.io/consumer label"
        node_sel = kc["spec"].get("nodeSelector", {"nvidia.com/gpu.present": "true"})
        pod_sel = tmpl["spec"].get("nodeSelector", {})
        for k, v in node_sel.items():
            assert pod_sel.get(k) == v, f"{dirpath}: pod nodeSelector lacks {k}={v}"
        images = {c["image"] for c in tmpl["spec"]["containers"]}
        server = kc["spec"]["warmup"].get("server")
        if server is None:
            assert kc["spec"]["image"] in images, f"{dirpath}: image differs from the KernelCache's"
        else:
            # The server form runs the workload's own template: it must name
            # this Deployment, and set no spec.image of its own.
            ref = server.get("workloadRef", {})
            assert ref == {"kind": "Deployment", "name": dep["metadata"]["name"]}, \
                f"{dirpath}: workloadRef {ref} does not name {dep['metadata']['name']}"
            assert "image" not in kc["spec"], f"{dirpath}: spec.image beside spec.warmup.server"
        checked += 1
# Disjoint selectors across all examples (the validating webhook denies overlaps
# within a namespace): no example Deployment is selected by a KernelCache of
# another example.
all_kcs = [k for ks in kcs.values() for k in ks]
for ds in deps.values():
    for dep in ds:
        labels = dep["spec"]["template"]["metadata"]["labels"]
        n = sum(selects(k["spec"]["podSelector"], labels) for k in all_kcs)
        assert n == 1, f"{dep['metadata']['name']} is selected by {n} KernelCaches of examples/"
print(f"ok: {checked} example Deployments each selected by exactly one KernelCache")
PY

dir=$(mktemp -d /tmp/kc-examples-test.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
trap 'cluster down --purge >/dev/null 2>&1 || true' EXIT
cluster up --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"

"$kubectl" apply -f "$root/crds/" >/dev/null
cluster wait-crd crd/kernelcaches.kernelcache.io >/dev/null || { echo "FAIL: the CRD is not Established"; exit 1; }
ns=kc-examples
"$kubectl" create namespace "$ns" >/dev/null
n=0
for f in "${files[@]}"; do
  out=$("$kubectl" apply --dry-run=server -n "$ns" -f "$f" 2>&1) ||
    fail "${f#"$root"/}: kubectl apply --dry-run=server: $out"
  n=$((n + 1))
done
echo "ok: $n example files pass kubectl apply --dry-run=server"

# The plain manifests as the guide installs them, for real on this fresh
# cluster: `kubectl apply -f deploy/` goes in file-name order, so
# 00-namespace.yaml must create kernelcache-system before the namespaced
# objects of the other files; the warmup PriorityClass must be among them
# (the API server refuses warmup pods that name a missing class).
"$kubectl" get namespace kernelcache-system >/dev/null 2>&1 && fail "kernelcache-system exists before the apply"
out=$("$kubectl" apply --server-side -f "$root/deploy/" 2>&1) || fail "kubectl apply --server-side -f deploy/: $out"
for obj in namespace/kernelcache-system priorityclass/kernelcache-warmup \
  mutatingwebhookconfiguration/kernelcache-webhook validatingwebhookconfiguration/kernelcache-webhook; do
  "$kubectl" get "$obj" >/dev/null || fail "kubectl apply -f deploy/ did not create $obj"
done
for obj in deployment/kernelcache-operator serviceaccount/kernelcache-operator service/kernelcache-webhook; do
  "$kubectl" -n kernelcache-system get "$obj" >/dev/null || fail "kubectl apply -f deploy/ did not create $obj"
done
[ "$("$kubectl" get priorityclass kernelcache-warmup -o jsonpath='{.value}')" = 1000000000 ] ||
  fail "PriorityClass kernelcache-warmup value"
out=$("$kubectl" apply --server-side -f "$root/deploy/" 2>&1) || fail "re-applying deploy/: $out"
echo "ok: kubectl apply --server-side -f deploy/ on a fresh cluster ($(ls "$root/deploy" | tr '\n' ' ')) and again, on $("$kubectl" version -o json | python3 -c 'import json,sys;print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')"
