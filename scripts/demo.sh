#!/usr/bin/env bash
# The main job (README): a local demo of KernelCache.
#
# With no cluster configured (no $KUBECONFIG, no ~/.kube/config) it starts the
# embedded control plane on loopback (etcd, kube-apiserver, controller-manager,
# scheduler, kwok), adds fake GPU nodes of two kinds carrying GPU Feature
# Discovery labels, installs the CRD, runs the operator, creates a KernelCache
# and shows: one warmup Job per fingerprint, the caches going Ready, the
# resolve answer an init container gets, then a driver upgrade of one node
# that warms a new fingerprint and retires the old one. kwok plays the
# kubelet: warmup pods "complete" with the seal container's termination
# message, as a real initwarm seal would write it.
#
# With a cluster configured it only prints what it would do there (it never
# touches a real cluster unasked): set KC_DEMO_USE_CLUSTER=1 to run it there.
#
# First run: builds the control plane (~25 min) and the operator (~5 min).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
./scripts/install-deps.sh
./tests/cluster/build.sh
build_dir=${KC_BUILD_DIR:-build}
[ -f "$build_dir/CMakeCache.txt" ] || cmake -S . -B "$build_dir" -G Ninja >/dev/null
echo "demo: building kernelcache-operator and initwarm"
cmake --build "$build_dir" --target kernelcache-operator initwarm >/dev/null
operator="$root/$build_dir/operator/kernelcache-operator"
initwarm="$root/$build_dir/initwarm/initwarm"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
if [ -n "${KUBECONFIG:-}" ] || [ -f "$HOME/.kube/config" ]; then
  if [ "${KC_DEMO_USE_CLUSTER:-0}" != 1 ]; then
    echo "demo: a cluster is configured (KUBECONFIG or ~/.kube/config); not touching it."
    echo "      Install there with: helm install kc charts/kernelcache   (or kubectl apply -f crds/)"
    echo "      Or run this demo on the embedded control plane: KUBECONFIG= HOME=/tmp/kc-demo-home $0"
    exit 0
  fi
fi

state=$(mktemp -d /tmp/kc-demo.XXXXXX)
cluster() { ./tests/cluster/cluster.sh --dir "$state/cluster" "$@"; }
op_pid=""
cleanup() {
  [ -n "$op_pid" ] && kill "$op_pid" 2>/dev/null && wait "$op_pid" 2>/dev/null || true
  cluster down --purge >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT

say "starting the embedded control plane (loopback only)"
cluster up --with-kwok --kwok-stage tests/operator/kwok/pod-complete.yaml
eval "$(cluster env)"
k() { kubectl "$@"; }

say "fake GPU nodes (kwok) with GPU Feature Discovery labels"
node() {  # name product cc_major driver
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake}
  labels:
    type: kwok
    kubernetes.io/arch: amd64
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
node gpu-h200-a NVIDIA-H200 9 580.159.04
node gpu-h200-b NVIDIA-H200 9 580.159.04
node gpu-h100-a NVIDIA-H100-80GB-HBM3 9 570.86.15
k get nodes -L nvidia.com/gpu.product,nvidia.com/cuda.driver-version.full

say "installing the CRD and a ReadWriteMany volume for the cache"
k apply -f crds/
k wait --for condition=established --timeout=60s crd/kernelcaches.kernelcache.io
k apply -f - <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: kc-demo-nfs}
spec:
  capacity: {storage: 100Gi}
  accessModes: [ReadWriteMany]
  storageClassName: nfs
  nfs: {server: 127.0.0.1, path: /exports/kernelcache}
YAML

say "running the operator"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$operator" --kubeconfig "$KUBECONFIG" --leader-elect=false --bind-address 127.0.0.1 --http-port "$port" \
  --log-format text --initwarm-image ghcr.io/kernelcache/initwarm:0.1.0 \
  --warmup-priority-class= >"$state/operator.log" 2>&1 &  # the chart ships the PriorityClass; none here
op_pid=$!
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$op_pid" 2>/dev/null || { cat "$state/operator.log"; exit 1; }
  sleep 0.2
done
echo "operator ready on 127.0.0.1:$port"

# Tolerate kwok's taint so warmup pods may land on the fake nodes.
sed 's/^  nodeSelector:/  tolerations: [{key: kwok.x-k8s.io\/node, operator: Exists, effect: NoSchedule}]\n  nodeSelector:/' \
  examples/llama-kernelcache.yaml | k apply -f -

wait_ready() {  # want
  local got=""
  for _ in $(seq 1 120); do
    got=$(k get kcache llama -o jsonpath='{.status.ready}' 2>/dev/null || true)
    [ "$got" = "$1" ] && return 0
    sleep 1
  done
  echo "demo: timed out waiting for READY=$1 (last: '$got'); operator log:"; tail -30 "$state/operator.log"
  return 1
}

say "two fingerprints -> two warmup Jobs"
wait_ready 2/2
k get jobs -L kernelcache.io/fingerprint
k get kcache
say "what an init container is told (resolve endpoint) for node gpu-h200-a"
curl -fs "http://127.0.0.1:$port/v1/resolve?namespace=default&kernelcache=llama&node=gpu-h200-a"; echo

say "driver upgrade of gpu-h100-a (570.86.15 -> 580.159.04)"
k label node gpu-h100-a nvidia.com/cuda.driver-version.full=580.159.04 --overwrite
for _ in $(seq 1 60); do
  k get kcache llama -o jsonpath='{range .status.fingerprints[*]}{.state}{" "}{end}' | grep -q Stale && break
  sleep 1
done
wait_ready 2/2
k get kcache llama -o jsonpath='{range .status.fingerprints[*]}{.id}{"  "}{.gpuProduct}{"  "}{.driver}{"  nodes="}{.nodes}{"  "}{.state}{"\n"}{end}'
say "kubectl describe kcache llama"
k describe kcache llama
say "the data path: a warmup seals a cache; a model pod's init container validates it"
fp=$(k get kcache llama -o jsonpath='{.status.fingerprints[?(@.gpuProduct=="NVIDIA-H200")].id}')
vol="$state/volume"  # stands in for the ReadWriteMany volume
"$initwarm" prepare --root "$vol" --fingerprint "$fp" --job-uid demo-warmup --view "$state/warm/view"
# A stand-in for the user's warmup: a Triton kernel and its metadata, written through the view.
mkdir -p "$state/warm/view/triton/3kq7f2"
head -c 65536 /dev/urandom >"$state/warm/view/triton/3kq7f2/softmax_kernel.cubin"
echo '{"name":"softmax_kernel","target":{"backend":"cuda","arch":90,"warp_size":32}}' \
  >"$state/warm/view/triton/3kq7f2/softmax_kernel.json"
"$initwarm" seal --root "$vol" --fingerprint "$fp" --job-uid demo-warmup \
  --termination-log "$state/termination-log"
# kwok fakes the warmup pods' seal report, so the manifest digest the operator
# recorded for $fp is kwok's, not this seal's; a gate asking the operator
# would refuse (and quarantine) this cache as changed after sealing. So the
# gate is given the fingerprint the operator resolved for gpu-h200-a. On the
# real node (tests/node/real_node_test.cc) the gate resolves it and checks
# the digest itself.
resolved=$(curl -fs "http://127.0.0.1:$port/v1/resolve?namespace=default&kernelcache=llama&node=gpu-h200-a")
case "$resolved" in
  *"\"$fp\""*) echo "-- the operator resolves node gpu-h200-a to fingerprint $fp" ;;
  *) echo "demo: the operator resolved gpu-h200-a to something else: $resolved" >&2; exit 1 ;;
esac
echo "-- initwarm wait, the model pod's gate, validating the cache (Checksums) into a Copy view:"
"$initwarm" wait --root "$vol" --view "$state/model/view" --fingerprint "$fp" \
  --namespace default --kernelcache llama --node gpu-h200-a --mode Copy --verify Checksums \
  --timeout 30s 2>&1 | grep -v "no local cross-check"
"$initwarm" inspect --root "$vol"
echo "-- one flipped byte in the published cache:"
printf '\x01' | dd of="$vol/v1/$fp/triton/3kq7f2/softmax_kernel.cubin" bs=1 seek=100 conv=notrunc 2>/dev/null
"$initwarm" verify --root "$vol" --fingerprint "$fp" --level Checksums || echo "(verify exit $?: quarantined)"
ls "$vol/v1/.quarantine/"

say "done; stopping everything"
