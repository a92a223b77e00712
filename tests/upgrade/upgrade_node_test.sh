#!/usr/bin/env bash
# An upgrade in place, on the real node (root; tests/cluster/node.sh), from
# the previous release (tests/upgrade/previous-release.env, built from git
# history by build_previous.sh) to this tree, as docs/helm.md tells users:
#  1. the previous release's chart (with its CRD) and images: Helm
#     install; KernelCaches jit (a gated Deployment of the JIT workload) and
#     jit-b go Ready; the Deployment's pod starts warm; the old CRD refuses
#     or prunes a field only this release knows (spec.warmup.convergence);
#  2. `helm upgrade` to this chart (the CRD is a template of the chart since
#     0.2.0) rolls out this release's images;
#  3. then: the CRD carries the new field and Helm's keep policy; every
#     stored fingerprint keeps its id, state, manifest digest, readyAt and
#     Job, and its sealed cache on the volume; no warmup Job is added for
#     them; the pod gated before the upgrade still runs, untouched; a new
#     pod of the Deployment, gated by this release, starts warm;
#  4. a new KernelCache jit-c setting spec.warmup.convergence: the field is
#     stored, its warmup runs the convergence pass it asks for, it goes Ready
#     with status.fingerprints[].convergence saying so.
# Usage: upgrade_node_test.sh <repo root>   (KC_IMAGES_DIR: HEAD's archives)
set -euo pipefail
root=$1
source "$root/tests/cluster/node_test_prelude.sh" operator initwarm pause jit-workload
source "$root/scripts/lib/jit_node.sh"
source "$root/tests/upgrade/previous-release.env"
version=$(tr -d '[:space:]' <"$root/VERSION")
ns=upgrade
sys=kernelcache-system
dir=$(mktemp -d /tmp/kc-upgrade.XXXXXX)
cluster() { "$root/tests/cluster/cluster.sh" --dir "$dir" "$@"; }
k() { "$kubectl" "$@"; }
fail() {
  echo "FAIL: $*"
  k -n "$ns" get kcache,pods,jobs -o wide 2>&1 | sed 's/^/  /' || true
  k -n "$ns" get events --sort-by=.lastTimestamp 2>&1 | tail -20 | sed 's/^/  /' || true
  k -n "$sys" get pods -o wide 2>&1 | sed 's/^/  /' || true
  k -n "$sys" logs -l app.kubernetes.io/name=kernelcache --tail=20 2>&1 | sed 's/^/  /' || true
  exit 1
}
trap 'cluster down --purge >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
t_all=$(date +%s)
since() { echo "$(($(date +%s) - $1)) s"; }

t=$(date +%s)
prev=$("$root/tests/upgrade/build_previous.sh" "$root") || fail "building release $KC_PREVIOUS_VERSION"
echo "ok: release $KC_PREVIOUS_VERSION (${KC_PREVIOUS_COMMIT:0:7}) built or cached in $(since "$t")"

# The node imports every archive of KC_IMAGES_DIR: this tree's (tagged :dev
# and :$version) and the previous release's (:$KC_PREVIOUS_VERSION).
mkdir -p "$dir/images"
for n in operator initwarm pause jit-workload; do ln -s "$KC_IMAGES_DIR/$n.tar" "$dir/images/$n.tar"; done
for n in operator initwarm; do ln -s "$prev/$n.tar" "$dir/images/previous-$n.tar"; done
KC_IMAGES_DIR="$dir/images" cluster up --with-node --owner-pid $$ >/dev/null
export KUBECONFIG="$dir/kubeconfig"

values() {  # <tag>: the chart values of both releases' installs
  echo --set image.repository=kernelcache.local/operator --set "image.tag=$1" --set image.pullPolicy=Never \
    --set initwarmImage.repository=kernelcache.local/initwarm --set "initwarmImage.tag=$1" \
    --set service.clusterIP="$KC_JIT_SVC_IP" --set resolveUrl="http://$KC_JIT_SVC_IP" --set logFormat=text
}
echo "== release $KC_PREVIOUS_VERSION: helm install, KernelCaches jit and jit-b, a gated Deployment"
t=$(date +%s)
# shellcheck disable=SC2046
out=$("$helm" install kc "$prev/chart" -n "$sys" --create-namespace $(values "$KC_PREVIOUS_VERSION") \
  --wait --timeout 180s 2>&1) || fail "helm install of $KC_PREVIOUS_VERSION: $out"
k create namespace "$ns" >/dev/null
kcache_yaml() {  # <name> [extra warmup YAML, indented by 4]
  cat <<YAML
apiVersion: kernelcache.io/v1alpha1
kind: KernelCache
metadata: {name: $1}
spec:
  podSelector: {matchLabels: {app: $1}}
  nodeSelector: {kernelcache.io/real-node: "true"}
  image: $KC_JIT_IMAGE
  runtime: {triton: "3.6.0"}
  warmup:
    command: ["/usr/bin/python3", "/opt/jit/app/workload.py", "warmup"]
    backoffLimit: 0
    activeDeadlineSeconds: 300
${2:-}
  storage: {storageClassName: kc-$1, size: 1Gi}
YAML
}
kcache() {  # <name> [extra warmup YAML]: a hostPath volume and the KernelCache
  jit_hostpath_pv "$1-cache" "kc-$1" "$dir/volumes/$1"
  kcache_yaml "$@" | k -n "$ns" apply -f - >/dev/null
}
# The field only this release knows.
newfield='    convergence: {maxPasses: 1, onNotConverged: Publish}'
wait_ready() {  # <name>...: every fingerprint of each Ready (300 s)
  local n s
  for n in "$@"; do
    for _ in $(seq 300); do
      s=$(k -n "$ns" get kcache "$n" -o jsonpath='{.status.fingerprints[*].state}' 2>/dev/null || true)
      [ "$s" = Ready ] && break
      [[ "$s" == *Failed* ]] && break
      sleep 1
    done
    [ "$s" = Ready ] || fail "KernelCache $n: fingerprint states '$s', want one Ready"
  done
}
kcache jit
# A cache-affecting variable: another fingerprint on the same node.
kcache jit-b "    env: [{name: TRITON_PRINT_AUTOTUNING, value: \"0\"}]"
wait_ready jit jit-b
jit_wait_gating "$ns" jit >/dev/null || fail "the $KC_PREVIOUS_VERSION webhook does not gate app=jit"
jit_deployment "$ns" jit-warm jit 1
first=$(jit_first_calls "$ns" run=jit-warm 1) || fail "the gated pod under $KC_PREVIOUS_VERSION"
[ "$(cut -d' ' -f2- <<<"$first" | python3 -c 'import json,sys; print(json.load(sys.stdin)["misses"])')" = 0 ] ||
  fail "the gated pod under $KC_PREVIOUS_VERSION compiled kernels: $first"
old_pod=$(k -n "$ns" get pods -l run=jit-warm -o jsonpath='{.items[0].metadata.uid}')
echo "ok: $KC_PREVIOUS_VERSION installed; jit and jit-b Ready; the gated pod started warm ($(since "$t"))"

# kubectl's strict field validation refuses the field; a client that does
# not ask for it (--validate=ignore; many do not) has it pruned silently.
out=$(kcache_yaml probe "$newfield" | k -n "$ns" create --dry-run=server -f - 2>&1) &&
  fail "the $KC_PREVIOUS_VERSION CRD accepted spec.warmup.convergence: the test proves nothing"
grep -qF 'unknown field "spec.warmup.convergence"' <<<"$out" || fail "dry run under $KC_PREVIOUS_VERSION: $out"
got=$(kcache_yaml probe "$newfield" | k -n "$ns" create --dry-run=server --validate=ignore \
  -o jsonpath='{.spec.warmup.convergence}' -f - 2>"$dir/dry-run.err") ||
  fail "dry run under $KC_PREVIOUS_VERSION: $(cat "$dir/dry-run.err")"
[ -z "$got" ] || fail "the $KC_PREVIOUS_VERSION CRD kept spec.warmup.convergence ($got): the test proves nothing"
echo "ok: the $KC_PREVIOUS_VERSION CRD refuses spec.warmup.convergence (strict) or prunes it (--validate=ignore)"

snapshot() {  # every stored fingerprint's identity, and the sealed caches' READY files
  k -n "$ns" get kcache jit jit-b -o json | python3 -c '
import json, sys
for kc in json.load(sys.stdin)["items"]:
    for f in kc["status"]["fingerprints"]:
        print(kc["metadata"]["name"], f["id"], f["state"], f.get("manifestDigest"), f.get("readyAt"),
              f.get("job"), f.get("warmGeneration", 0))'
  local n r
  for n in jit jit-b; do
    r=$(find "$dir/volumes/$n" -name READY | sort)
    [ -n "$r" ] || { echo "$n: no sealed cache (READY) on its volume"; continue; }
    for r in $r; do echo "$n ${r#"$dir/"} $(cat "$r")"; done
  done
}
warmup_jobs() { k -n "$ns" get jobs -l kernelcache.io/component=warmup \
  -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' | sort; }
before=$(snapshot)
grep -q "no sealed cache" <<<"$before" && fail "before the upgrade: $before"
jobs_before=$(warmup_jobs)
[ "$(wc -l <<<"$jobs_before")" = 2 ] || fail "want 2 warmup Jobs before the upgrade: $jobs_before"

echo "== helm upgrade to $version (this tree)"
t=$(date +%s)
# shellcheck disable=SC2046
out=$("$helm" upgrade kc "$root/charts/kernelcache" -n "$sys" $(values "$version") \
  --wait --timeout 180s 2>&1) || fail "helm upgrade: $out"
k -n "$sys" rollout status deployment/kc-operator --timeout=120s >/dev/null || fail "rollout after helm upgrade"
image=$(k -n "$sys" get deployment kc-operator -o jsonpath='{.spec.template.spec.containers[0].image}')
[ "$image" = "kernelcache.local/operator:$version" ] || fail "the operator runs $image after the upgrade"
echo "ok: helm upgrade to $version rolled out in $(since "$t")"

schema=$(k get crd kernelcaches.kernelcache.io -o json)
python3 - "$schema" <<'PY' || fail "the CRD after the upgrade"
import json, sys
crd = json.loads(sys.argv[1])
w = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["warmup"]
assert w["properties"]["convergence"]["type"] == "object", "no spec.warmup.convergence"
m = crd["metadata"]
assert m["labels"].get("app.kubernetes.io/managed-by") == "Helm", m["labels"]
assert m["annotations"].get("meta.helm.sh/release-name") == "kc", m["annotations"]
assert m["annotations"].get("helm.sh/resource-policy") == "keep", m["annotations"]
PY
echo "ok: the CRD is the release's: spec.warmup.convergence, managed by Helm, kept on uninstall"

echo "== a KernelCache only $version understands: spec.warmup.convergence"
t=$(date +%s)
kcache jit-c "$newfield"
stored=$(k -n "$ns" get kcache jit-c -o jsonpath='{.spec.warmup.convergence.maxPasses}')
[ "$stored" = 1 ] || fail "spec.warmup.convergence not stored after the upgrade: '$stored'"
# jit-c Ready also means the new operator has long since listed and
# reconciled jit and jit-b (one informer, one queue).
wait_ready jit-c
conv=$(k -n "$ns" get kcache jit-c -o jsonpath='{.status.fingerprints[0].convergence}')
python3 -c 'import json,sys; c=json.loads(sys.argv[1]); assert c.get("passes") == 1 and "message" in c, c' "$conv" ||
  fail "jit-c's status does not say what its convergence pass found: '$conv'"
echo "ok: jit-c stored, its warmup ran the convergence pass ($conv), Ready ($(since "$t"))"

after=$(snapshot)
[ "$before" = "$after" ] || fail "stored fingerprints or caches changed over the upgrade:
$(diff <(echo "$before") <(echo "$after"))"
jobs_after=$(warmup_jobs | grep -v '^jit-c-' || true)
[ "$jobs_before" = "$jobs_after" ] || fail "warmup Jobs of jit/jit-b changed over the upgrade:
$(diff <(echo "$jobs_before") <(echo "$jobs_after"))"
echo "ok: $(wc -l <<<"$before") fingerprint and cache records unchanged; no new warmup Job for them"

echo "== gated pods: the one admitted before the upgrade, and a new one"
t=$(date +%s)
pod=$(k -n "$ns" get pods -l run=jit-warm -o jsonpath='{.items[0].metadata.uid} {.items[0].status.containerStatuses[0].restartCount} {.items[0].status.containerStatuses[0].ready}')
[ "$pod" = "$old_pod 0 true" ] || fail "the pod gated before the upgrade: '$pod', want '$old_pod 0 true'"
k -n "$ns" rollout restart deployment/jit-warm >/dev/null
k -n "$ns" rollout status deployment/jit-warm --timeout=180s >/dev/null || fail "jit-warm rollout after the upgrade"
first=$(jit_first_calls "$ns" run=jit-warm 1) || fail "the gated pod under $version"
gates=$(k -n "$ns" get pods -l run=jit-warm -o json)
python3 - "$first" "$gates" "$version" <<'PY' || fail "the pod gated by $version"
import json, sys
first, pods, version = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
pod = pods["items"][0]
gate = pod["spec"]["initContainers"][0]
assert gate["image"] == f"kernelcache.local/initwarm:{version}", gate["image"]
rep = json.loads(pod["status"]["initContainerStatuses"][0]["state"]["terminated"].get("message") or "{}")
assert rep.get("outcome") == "Warm", rep
assert json.loads(first.split(" ", 1)[1])["misses"] == 0, first
PY
echo "ok: the pod gated before the upgrade runs on; a new pod gated by $version started Warm, 0 kernels compiled ($(since "$t"))"
echo "upgrade_node_test: ok ($KC_PREVIOUS_VERSION -> $version, $(since "$t_all"))"
