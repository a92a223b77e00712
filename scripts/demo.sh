#!/usr/bin/env bash
# The main job (README): KernelCache end to end on this machine, through
# real pods.
#
# With no cluster configured (no $KUBECONFIG, no ~/.kube/config) it:
#  1. installs what is missing and builds, with progress: the pinned local
#     control plane, the operator and initwarm, the container images (the
#     JIT workload's Triton wheel is fetched by pip once); on a fresh 2-core
#     machine the whole first run took 15 min 23 s (README.md);
#  2. starts the embedded control plane on loopback with a REAL node
#     (containerd + kubelet: pods really run; labelled as an NVIDIA H200,
#     runs CPU-only work) and kwok fake GPU nodes of two kinds (2 x H100 on
#     driver 570, 1 x A100 on driver 550);
#  3. installs the operator with Helm (2 replicas, leader election, webhook);
#  4. runs one ungated pod of the JIT workload (images/jit-workload: Triton
#     compiling 8 kernels for cuda:90, no GPU needed): its first call
#     compiles;
#  5. applies examples/jit-demo/kernelcache.yaml: one warmup Job per
#     fingerprint; the real node's really compiles and seals, kwok's fake
#     ones complete; the status goes Ready;
#  6. applies examples/jit-demo/deployment.yaml: its pods arrive gated (the
#     webhook's init container), start warm, and print their first call;
#  7. upgrades the driver: first the kwok H100 nodes' label (kwok's canned
#     warmup and GC), then the real node, walked the way the GPU Operator
#     does it (cordon, nvidia.com/gpu-driver-upgrade-state, GFD's new driver
#     labels, uncordon): its new fingerprint really compiles and seals, a pod
#     added after the upgrade starts warm from it, and a GC Job in a real pod
#     removes the old cache from the volume;
#  8. a shape the warmup missed: with spec.harvest.mode Merge, a gated pod
#     compiles a kernel of a new shape, its miss watcher copies it into the
#     volume's inbox, the operator's harvest Job merges it into a new
#     generation of the real node's cache, and the next pod gets it with 0
#     kernels compiled;
#  9. prints a summary table and stops everything it started.
#
# It needs root (the real node: containerd, kubelet, a bridge); as another
# user it re-runs itself with sudo. With a cluster configured it does not
# touch it and prints the Helm install instead; KC_DEMO_EMBEDDED=1 runs the
# demo on its own embedded control plane anyway (it never uses yours).
# Takes about two minutes once built (126 s measured, README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ -z "${KC_DEMO_EMBEDDED:-}" ] && { [ -n "${KUBECONFIG:-}" ] || [ -f "$HOME/.kube/config" ]; }; then
  cat <<'MSG'
demo: a cluster is configured (KUBECONFIG or ~/.kube/config); the demo does not touch it.
Install KernelCache there with Helm (images: build them with scripts/build-images.sh and
push them to your registry, docs/helm.md):
  helm install kc charts/kernelcache -n kernelcache-system --create-namespace \
    --set image.repository=<registry>/kernelcache/operator --set initwarmImage.repository=<registry>/kernelcache/initwarm
  kubectl apply -f examples/llama-kernelcache.yaml        # then: kubectl get kcache
or only the CRD: kubectl apply -f crds/
To run the demo on its own embedded control plane instead: KC_DEMO_EMBEDDED=1 ./scripts/demo.sh
MSG
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "demo: the real node needs root (containerd, kubelet); run as root" >&2; exit 1; }
  echo "demo: the real node needs root; re-running with sudo"
  exec sudo -E env "PATH=$PATH" KC_DEMO_EMBEDDED=1 "$0" "$@"
fi

t0=$(date +%s)
say() { printf '\n\033[1m== [%3ds] %s\033[0m\n' "$(($(date +%s) - t0))" "$*"; }
say "1/9 installing and building what is missing (first run on 2 cores: about 15 minutes, with progress; then seconds)"
./scripts/install-deps.sh
./tests/cluster/build.sh
# The two programs and the images (kc_images runs scripts/build-images.sh
# when an input changed); ninja prints each step it runs.
./scripts/build.sh kernelcache-operator initwarm kc_images
build_dir=${KC_BUILD_DIR:-build}
[[ $build_dir == /* ]] || build_dir="$root/$build_dir"
t_run=$(date +%s)
initwarm="$build_dir/initwarm/initwarm"
source tests/cluster/versions.sh
helm="$KC_HELM_DIR/helm"
kubectl="$KC_K8S_DIR/kubectl"
source scripts/lib/jit_node.sh
source scripts/lib/gpu_upgrade.sh
export KC_IMAGES_DIR="$build_dir/images"
k() { "$kubectl" "$@"; }
ns=demo

state=$(mktemp -d /tmp/kc-demo.XXXXXX)
cluster() { ./tests/cluster/cluster.sh --dir "$state/cluster" "$@"; }
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ] && [ -f "$state/cluster/kubeconfig" ]; then
    echo "demo: FAILED (exit $rc); what the cluster shows:"
    KUBECONFIG="$state/cluster/kubeconfig" "$kubectl" get pods,jobs -A -o wide 2>&1 | tail -25 || true
    KUBECONFIG="$state/cluster/kubeconfig" "$kubectl" -n kernelcache-system logs \
      -l app.kubernetes.io/name=kernelcache --tail=15 2>&1 || true
  fi
  echo "demo: stopping everything it started"
  cluster down --purge >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
# wait_for <what> <seconds> <command...>: runs the command every second
# until it succeeds; says what it waits for every 10 s; fails after.
wait_for() {
  local what=$1 secs=$2 i
  shift 2
  for ((i = 1; i <= secs; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    ((i % 10 == 0)) && echo "   ... still waiting for $what (${i}s)"
    sleep 1
  done
  echo "demo: timed out after ${secs}s waiting for $what" >&2
  return 1
}

say "2/9 the embedded control plane (loopback) with a real node and kwok GPU nodes"
cluster up --with-node --with-kwok --kwok-stage tests/operator/kwok/pod-complete.yaml --owner-pid $$
export KUBECONFIG="$state/cluster/kubeconfig"
kwok_node() {  # name product cc_major driver
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake}
  labels:
    type: kwok
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: $1
    nvidia.com/gpu.present: "true"
    nvidia.com/gpu.product: $2
    nvidia.com/gpu.compute.major: "$3"
    nvidia.com/gpu.compute.minor: "0"
    nvidia.com/cuda.driver-version.full: $4
    nvidia.com/cuda.runtime-version.full: "13.0"
spec:
  taints: [{key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule}]
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
YAML
}
kwok_node gpu-h100-a NVIDIA-H100-80GB-HBM3 9 570.86.15
kwok_node gpu-h100-b NVIDIA-H100-80GB-HBM3 9 570.86.15
kwok_node gpu-a100-a NVIDIA-A100-SXM4-80GB 8 550.127.08
wait_for "3 kwok nodes Ready" 60 bash -c \
  "[ \$('$kubectl' get nodes -l type=kwok --no-headers | grep -cw Ready) = 3 ]"
echo "kc-node is the real node (containerd + kubelet, CPU-only, labelled as an H200); the others are kwok's:"
k get nodes -L nvidia.com/gpu.product,nvidia.com/gpu.compute.major,nvidia.com/cuda.driver-version.full

say "3/9 helm install charts/kernelcache (operator x2, leader election, admission webhook)"
echo "(the images were built here and imported into the real node's containerd; ~30-60 s)"
jit_helm_install --set logFormat=text | grep -E '^(NAME|STATUS|REVISION):'
k -n kernelcache-system get deployment,pods,service -o wide
k create namespace "$ns" >/dev/null
vol="$state/volume"
jit_hostpath_pv jit-cache kc-jit "$vol"
echo "cache volume: a ReadWriteMany hostPath PersistentVolume at $vol (storageClassName kc-jit)"

say "4/9 a model pod WITHOUT KernelCache: its first call compiles every kernel"
jit_deployment "$ns" jit-cold jit-cold 1 "        env: [{name: TRITON_CACHE_DIR, value: /tmp/triton}]"
cold=$(jit_first_calls "$ns" run=jit-cold 1)
echo "$cold"
k -n "$ns" delete deployment jit-cold --wait=false >/dev/null

say "5/9 kubectl apply -f examples/jit-demo/kernelcache.yaml: one warmup Job per fingerprint"
t_kc=$(date +%s)
k -n "$ns" apply -f examples/jit-demo/kernelcache.yaml
kc_ready() { [ "$(k -n "$ns" get kcache jit -o jsonpath='{.status.ready}')" = "$1" ]; }
for ((i = 0; i < 300; i++)); do
  kc_ready 3/3 && break
  if ((i % 5 == 0)); then
    printf '   %3ds  ' "$(($(date +%s) - t_kc))"
    k -n "$ns" get jobs -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.active}{"/"}{.status.succeeded}{"  "}{end}' 2>/dev/null
    echo "  (job active/succeeded)"
  fi
  sleep 1
done
kc_ready 3/3 || { k -n "$ns" describe kcache jit | tail -30; exit 1; }
echo "all three fingerprints Ready after $(($(date +%s) - t_kc)) s:"
k -n "$ns" get jobs -o wide -L kernelcache.io/fingerprint
k -n "$ns" get kcache jit -o jsonpath='{range .status.fingerprints[*]}{.id}  {.gpuProduct}  sm{.computeCapability}  driver {.driver}  nodes={.nodes}  {.state}  {.files} files  {.bytes} bytes{"\n"}{end}'
k -n "$ns" get kcache
job=$(k -n "$ns" get pods -l kernelcache.io/component=warmup --field-selector spec.nodeName=kc-node \
  -o jsonpath='{.items[0].metadata.labels.job-name}')
job_s=$(jit_job_seconds "$ns" "$job")
warmup_line=$(k -n "$ns" logs "job/$job" -c warmup 2>/dev/null | grep -m1 '^{' || true)
echo "the real warmup ($job on kc-node): $job_s s; its compile: $warmup_line"
echo "what it sealed on the volume (initwarm inspect):"
"$initwarm" inspect --root "$vol"
sealed_before=$(find "$vol/v1" -type f | sort)

say "6/9 kubectl apply -f examples/jit-demo/deployment.yaml: pods arrive gated, start warm"
jit_wait_gating "$ns" jit >/dev/null
k -n "$ns" apply -f examples/jit-demo/deployment.yaml
wait_for "the gated pods to start" 120 bash -c \
  "'$kubectl' -n $ns get pods -l app=jit -o jsonpath='{.items[*].status.initContainerStatuses[0].state.terminated.reason}' | grep -q Completed"
k -n "$ns" get pods -l app=jit -o wide
warm=$(jit_first_calls "$ns" app=jit 2)
gates=$(k -n "$ns" get pods -l app=jit -o json)
echo "init containers the webhook injected: $(k -n "$ns" get pods -l app=jit \
  -o jsonpath='{.items[0].spec.initContainers[*].name}'); env: $(k -n "$ns" get pods -l app=jit \
  -o jsonpath='{range .items[0].spec.containers[0].env[*]}{.name}={.value} {end}' | cut -c1-160)"
python3 scripts/lib/jit_figures.py "$cold" "$warm" "$gates" "$job_s" "$warmup_line" --json "$state/figures.json"
sealed_after=$(find "$vol/v1" -type f | sort)
[ "$sealed_before" = "$sealed_after" ] || { echo "demo: the sealed cache changed under warm pods" >&2; exit 1; }
echo "zero recompiles: the warm pods missed no kernel and added no file to the sealed cache ($(wc -l <<<"$sealed_after") files)"

say "7/9 driver upgrade: the kwok H100 nodes 570.86.15 -> 580.159.04, then the real node"
fp_of() {  # <product> <driver> -> that fingerprint's id, or nothing
  k -n "$ns" get kcache jit -o json | python3 -c '
import json, sys
fps = json.load(sys.stdin).get("status", {}).get("fingerprints", [])
print(" ".join(f["id"] for f in fps if f.get("gpuProduct") == sys.argv[1] and f.get("driver") == sys.argv[2]))' "$1" "$2"
}
fp_state() { k -n "$ns" get kcache jit -o jsonpath="{.status.fingerprints[?(@.id==\"$1\")].state}"; }
gc_pod_of() {  # <id> -> "<pod> <node>" of the GC Job that collected it (Events, 30 s)
  local i got
  for ((i = 0; i < 30; i++)); do
    got=$(gc_pod_from_events "$1")
    [ -n "$got" ] && { echo "$got"; return 0; }
    sleep 1
  done
}
gc_pod_from_events() {
  k -n "$ns" get events -o json | python3 -c '
import json, sys
evs, fp = json.load(sys.stdin)["items"], sys.argv[1]
jobs = [e["message"].rsplit("(GC Job ", 1)[1].rstrip(")") for e in evs
        if e["reason"] == "CacheCollected" and fp in e.get("message", "")]
for e in evs:
    o = e["involvedObject"]["name"]
    if e["reason"] == "Scheduled" and jobs and o.startswith(jobs[-1] + "-"):
        print(o, e.get("message", "").rsplit(" to ", 1)[-1])' "$1" | tail -1
}
# upgrade_progress <old id> <product> <new driver> <t0>: until the new
# fingerprint is Ready and the old one collected; sets new_fp, new_ready and
# old_gone (seconds after t0).
upgrade_progress() {
  local old=$1 product=$2 driver=$3 since=$4 i old_state
  new_fp="" new_ready="" old_gone=""
  for ((i = 0; i < 240; i++)); do
    [ -n "$new_fp" ] || new_fp=$(fp_of "$product" "$driver")
    if [ -z "$new_ready" ] && [ -n "$new_fp" ] && [ "$(fp_state "$new_fp")" = Ready ]; then
      new_ready=$(($(date +%s) - since))
      echo "   new fingerprint $new_fp Ready after ${new_ready}s"
    fi
    old_state=$(fp_state "$old")
    if [ -z "$old_state" ]; then
      old_gone=$(($(date +%s) - since))
      echo "   old fingerprint $old collected after ${old_gone}s"
    fi
    [ -n "$new_ready" ] && [ -n "$old_gone" ] && return 0
    ((i % 5 == 0)) && printf '   %3ds  old %s: %s\n' "$(($(date +%s) - since))" "$old" "${old_state:-gone}"
    sleep 1
  done
  k -n "$ns" describe kcache jit | tail -30
  return 1
}
echo "-- kwok: gpu-h100-a and gpu-h100-b relabelled 570.86.15 -> 580.159.04 (kwok fakes their warmup and GC)"
kwok_old=$(fp_of NVIDIA-H100-80GB-HBM3 570.86.15)
[ -n "$kwok_old" ] || { echo "demo: no H100 fingerprint on driver 570.86.15 in the status" >&2; exit 1; }
t_up=$(date +%s)
k label node gpu-h100-a gpu-h100-b nvidia.com/cuda.driver-version.full=580.159.04 --overwrite
upgrade_progress "$kwok_old" NVIDIA-H100-80GB-HBM3 580.159.04 "$t_up"
kwok_ready=$new_ready kwok_gone=$old_gone
kwok_gc=$(gc_pod_of "$kwok_old")
kwok_gc_node=${kwok_gc#* }
echo "   its GC Job's pod ${kwok_gc% *} ran on ${kwok_gc_node:-?}"

echo "-- the real node kc-node: 580.159.04 -> 580.200.01, walked as the GPU Operator does it"
# The cache volume is a hostPath on this machine: only kc-node really has
# it. From here on this KernelCache's Jobs may run only there (its kwok
# fingerprints are all Ready): the GC Job's pod must not land on a kwok node.
k -n "$ns" patch kcache jit --type=merge -p '{"spec":{"tolerations":null}}' >/dev/null
real_old=$(fp_of NVIDIA-H200 580.159.04)
[ -n "$real_old" ] || { echo "demo: no H200 fingerprint on driver 580.159.04 in the status" >&2; exit 1; }
running=$(k -n "$ns" get pods -l app=jit -o jsonpath='{.items[*].metadata.uid}')
gpu_upgrade_start kc-node >/dev/null
echo "   kc-node cordoned, $GPU_UPGRADE_STATE_LABEL=$(k get node kc-node -o jsonpath="{.metadata.labels.nvidia\.com/gpu-driver-upgrade-state}")"
gpu_upgrade_state kc-node pod-restart-required
t_real=$(date +%s)
gpu_driver_labels kc-node 580.200.01
echo "   GFD: nvidia.com/cuda.driver-version.full=580.200.01"
real_stale() { [ "$(fp_state "$real_old")" = Stale ]; }
wait_for "the old real fingerprint to go Stale" 60 real_stale
mid=$(fp_of NVIDIA-H200 580.200.01)
echo "   $real_old Stale; the new $mid ${mid:+$(fp_state "$mid")}, with $(k -n "$ns" get jobs \
  -l "kernelcache.io/fingerprint=${mid:-none}" -o name | wc -l) warmup Jobs while kc-node is mid-upgrade"
gpu_upgrade_finish kc-node >/dev/null
echo "   kc-node uncordoned, upgrade-done"
upgrade_progress "$real_old" NVIDIA-H200 580.200.01 "$t_real"
real_ready=$new_ready real_gone=$old_gone real_new=$new_fp
[ ! -e "$vol/v1/$real_old" ] || { echo "demo: v1/$real_old is still on the volume" >&2; exit 1; }
[ -f "$vol/v1/$real_new/READY" ] || { echo "demo: v1/$real_new is not sealed on the volume" >&2; exit 1; }
real_job=$(k -n "$ns" get jobs -l "kernelcache.io/component=warmup,kernelcache.io/fingerprint=$real_new" \
  -o jsonpath='{.items[0].metadata.name}')
real_job_s=$(jit_job_seconds "$ns" "$real_job")
real_warmup=$(k -n "$ns" logs "job/$real_job" -c warmup 2>/dev/null | grep -m1 '^{' || true)
gc_pod=$(gc_pod_of "$real_old")
[ "${gc_pod#* }" = kc-node ] || { echo "demo: the GC pod of $real_old did not run on kc-node: '$gc_pod'" >&2; exit 1; }
echo "   volume: v1/$real_old removed by ${gc_pod% *} on kc-node; v1/$real_new sealed by $real_job"
k -n "$ns" scale deployment jit-server --replicas=3 >/dev/null
after=$(jit_first_calls "$ns" app=jit 3 | grep -v -F -f <(k -n "$ns" get pods -l app=jit -o json | python3 -c '
import json, sys
old = set(sys.argv[1].split())
print("\n".join(p["metadata"]["name"] for p in json.load(sys.stdin)["items"] if p["metadata"]["uid"] in old))' "$running"))
echo "   pod added after the upgrade: $after"
python3 -c 'import json, sys; sys.exit(json.loads(sys.argv[1])["misses"] != 0)' "${after#* }" ||
  { echo "demo: the pod added after the upgrade compiled" >&2; exit 1; }
[ "$(k -n "$ns" get pods -l app=jit -o jsonpath='{.items[*].metadata.uid}' | tr ' ' '\n' | grep -c -F -f <(tr ' ' '\n' <<<"$running"))" = 2 ] ||
  { echo "demo: the pods that ran through the upgrade were replaced" >&2; exit 1; }
k -n "$ns" get kcache jit -o jsonpath='{range .status.fingerprints[*]}{.id}  {.gpuProduct}  driver {.driver}  nodes={.nodes}  {.state}{"\n"}{end}'
echo "events:"
k -n "$ns" get events --field-selector involvedObject.kind=KernelCache --sort-by=.lastTimestamp \
  -o custom-columns=REASON:.reason,MESSAGE:.message --no-headers | cut -c1-150 | tail -14

say "8/9 a shape the warmup missed: the first pod compiles it, the fleet learns it"
k -n "$ns" patch kcache jit --type merge -p '{"spec":{"harvest":{"mode":"Merge","interval":"10s"}}}' >/dev/null
echo "spec.harvest: {mode: Merge, interval: 10s}: what gated pods compile after their gate is merged into the cache"
k -n "$ns" apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: jit-shapes}
spec:
  replicas: 1
  selector: {matchLabels: {app: jit, run: jit-shapes}}
  template:
    metadata:
      labels: {app: jit, run: jit-shapes}
      annotations: {kernelcache.io/watch-misses: "5s"}
    spec:
      nodeSelector: {kubernetes.io/hostname: kc-node}
      terminationGracePeriodSeconds: 1
      containers:
      - {name: server, image: kernelcache.local/jit-workload:dev, imagePullPolicy: Never, args: [serve]}
YAML
jit_first_calls "$ns" run=jit-shapes 1 >/dev/null
shape_first=$(k -n "$ns" get pods -l run=jit-shapes -o jsonpath='{.items[0].metadata.name}')
shape_cold=$(jit_compile_block "$ns" "$shape_first" 2048)
t_shape=$(date +%s)
echo "   $shape_first: a request of a shape the warmup never ran (add_kernel, BLOCK 2048) compiled in ${shape_cold} s"
harvest_of() { k -n "$ns" get kcache jit -o jsonpath="{.status.fingerprints[?(@.id==\"$real_new\")].harvest.$1}"; }
wait_for "the harvest Job to merge it into $real_new" 180 bash -c \
  "'$kubectl' -n $ns get kcache jit -o jsonpath='{.status.fingerprints[?(@.id==\"$real_new\")].harvest.lastResult}' | grep -q Merged"
shape_merged=$(($(date +%s) - t_shape))
shape_added=$(harvest_of addedFiles)
echo "   merged ${shape_merged} s later: generation $(harvest_of generation), +$shape_added files ($(harvest_of added))"
k -n "$ns" get events --field-selector reason=HarvestMerged -o jsonpath='{.items[-1:].message}' | cut -c1-200; echo
k -n "$ns" scale deployment jit-shapes --replicas=2 >/dev/null
jit_first_calls "$ns" run=jit-shapes 2 >/dev/null
shape_next=$(k -n "$ns" get pods -l run=jit-shapes -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | grep -v "^$shape_first\$" | head -1)
shape_warm=$(jit_compile_block "$ns" "$shape_next" 2048)
shape_misses=$(jit_runtime_misses "$ns" "$shape_next")
echo "   $shape_next (gated on the merged generation): the same shape in ${shape_warm} s, $shape_misses kernels compiled"
[ "$shape_misses" = 0 ] || { echo "demo: the next pod compiled the harvested shape again" >&2; exit 1; }

say "9/9 summary"
python3 - "$state/figures.json" "$kwok_ready" "$kwok_gone" "$(($(date +%s) - t_run))" "$real_ready" "$real_gone" \
  "$real_job_s" "$real_warmup" "${after#* }" "$kwok_gc_node" "$shape_cold" "$shape_merged" \
  "$shape_added" "$shape_warm" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))
cold = list(f["cold"].values())[0]
rows = [("ungated pod, first call (cold)", f"{cold['first_call_s']:.2f} s, {cold['misses']} of {cold['kernels']} kernels compiled")]
for name, r in f["warm"].items():
    g = f["gates"][name]
    rows.append((f"gated pod {name[-5:]}, first call (warm)",
                 f"{r['first_call_s']:.2f} s, {r['misses']} compiled, {r['hits']} from the cache; gate {g[1]} in {g[2]} ms"))
w = f["warmup"]
rows.append(("warmup Job on the real node", f"{f['job_s']} s (its compile {w.get('first_call_s', '?')} s), once for 2 pods"))
best = max(r["first_call_s"] for r in f["warm"].values())
rows.append(("first call, cold / slowest warm", f"{cold['first_call_s'] / max(best, 1e-3):.1f}x"))
rows.append(("driver upgrade (kwok): new fingerprint Ready", f"{sys.argv[2]} s after the relabel (kwok's canned warmup)"))
gc_on = (f"GC Job pod on {sys.argv[10]}: kwok completes it" if sys.argv[10].startswith("gpu-")
         else f"GC Job pod on {sys.argv[10]}; the fingerprint's warmup was kwok's, nothing on the volume")
rows.append(("driver upgrade (kwok): old fingerprint collected", f"{sys.argv[3]} s after the relabel (staleAfter 20s + {gc_on})"))
rw = json.loads(sys.argv[8]) if sys.argv[8] else {}
rows.append(("driver upgrade (real node): new fingerprint Ready",
             f"{sys.argv[5]} s after GFD's relabel; warmup Job {sys.argv[7]} s on kc-node, {rw.get('misses', '?')} kernels compiled"))
pa = json.loads(sys.argv[9])
rows.append(("driver upgrade (real node): pod added after it",
             f"{pa['first_call_s']:.2f} s, {pa['misses']} compiled, {pa['hits']} from the new cache"))
rows.append(("driver upgrade (real node): old fingerprint collected",
             f"{sys.argv[6]} s after GFD's relabel (staleAfter 20s + GC Job pod on kc-node; its directory gone)"))
rows.append(("a shape the warmup missed: first pod", f"compiled it in {sys.argv[11]} s (add_kernel BLOCK 2048)"))
rows.append(("harvest: merged into the real node's cache", f"{sys.argv[12]} s after that compile (+{sys.argv[13]} files, a new generation)"))
rows.append(("a shape the warmup missed: next pod", f"{sys.argv[14]} s, 0 compiled (from the merged generation)"))
rows.append(("demo run (after the builds)", f"{sys.argv[4]} s"))
w0 = max(len(a) for a, _ in rows)
print(f"{'what':<{w0}}  result")
print(f"{'-' * w0}  {'-' * 60}")
for a, b in rows:
    print(f"{a:<{w0}}  {b}")
EOF
