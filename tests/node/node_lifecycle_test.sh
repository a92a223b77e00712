#!/usr/bin/env bash
# The real node's life (tests/cluster/node.sh): `up --with-node` runs a pod
# as a real container that reaches the API server and a Service through
# kube-proxy, reports a termination message and shows its logs; `down`
# leaves no process, mount, interface, route, chain, cgroup or host
# directory behind; and neither does an `up` that fails half-way (a kubelet
# that cannot start). Run by ctest (labels integration, node); needs root.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cluster="$here/../cluster/cluster.sh"
dir="$(mktemp -d /tmp/kc-node-lifecycle-XXXXXX)"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
k() { "$cluster" --dir "$dir" kubectl "$@"; }
cleanup() {
  "$cluster" --dir "$dir" down >/dev/null 2>&1 || true
  [[ $failures -eq 0 ]] && rm -rf "$dir" || echo "logs kept in $dir/logs" >&2
}
trap cleanup EXIT

# Host state to compare with after down (things node.sh must not leave).
snapshot() {
  ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | sort
  ip -4 route show | sort
  iptables -w -S | sort
  iptables -w -t nat -S | sort
  cat /proc/sys/net/ipv4/ip_forward
}
before="$(snapshot)"
check_clean() {  # <what>
  local left
  if left="$("$cluster" --dir "$dir" leftovers)"; then fail "$1: leftovers: $left"; fi
  if [[ "$(snapshot)" != "$before" ]]; then
    fail "$1: host state differs: $(diff <(echo "$before") <(snapshot) || true)"
  fi
  if pgrep -af "$dir" >/dev/null; then fail "$1: processes still running: $(pgrep -af "$dir")"; fi
  if grep -qF "$dir" /proc/self/mountinfo; then fail "$1: mounts left: $(grep -F "$dir" /proc/self/mountinfo)"; fi
}

t0=$(date +%s)
"$cluster" --dir "$dir" up --with-node --with-kwok --timeout 240
echo "up --with-node --with-kwok: $(($(date +%s) - t0)) s"

# A kwok fake node sits beside the real one; kwok leaves kc-node alone.
k apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: fake-gpu-0
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
EOF
k wait --for=condition=Ready node/fake-gpu-0 --timeout=60s >/dev/null || fail "kwok node beside the real node not Ready"
[[ "$(k get node kc-node -o jsonpath='{.metadata.annotations.kwok\.x-k8s\.io/node}')" == "" ]] || fail "kc-node carries the kwok annotation"
k delete node fake-gpu-0 >/dev/null  # the pods below must land on kc-node

k apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: echo, labels: {app: echo}}
spec:
  containers:
  - name: c
    image: kernelcache.local/warmup-test:dev
    imagePullPolicy: Never
    args: ["-c", "echo serving; echo hello-from-pod > /www/index.html && exec httpd -f -p 8080 -h /www"]
    volumeMounts: [{name: www, mountPath: /www}]
    readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
  volumes: [{name: www, emptyDir: {}}]
---
apiVersion: v1
kind: Service
metadata: {name: echo}
spec:
  selector: {app: echo}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  restartPolicy: OnFailure
  containers:
  - name: c
    image: kernelcache.local/warmup-test:dev
    imagePullPolicy: Never
    args: ["-c", "wget -q -O- --no-check-certificate https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/healthz > /dev/termination-log; echo; wget -q -O- http://$ECHO_SERVICE_HOST/ || exit 3; echo client done"]
    resources: {limits: {nvidia.com/gpu: 1}}
EOF
# The client retries (restartPolicy OnFailure) until echo serves.
k wait --for=condition=Ready pod/echo --timeout=120s >/dev/null || fail "pod echo not Ready"
ok=0
for _ in $(seq 120); do
  [[ "$(k get pod client -o jsonpath='{.status.phase}')" == Succeeded ]] && { ok=1; break; }
  sleep 1
done
[[ $ok == 1 ]] || fail "client pod did not succeed: $(k get pod client -o yaml | tail -30)"
msg="$(k get pod client -o jsonpath='{.status.containerStatuses[0].state.terminated.message}')"
[[ "$msg" == ok ]] || fail "termination message (API server /healthz through the kubernetes Service) is '$msg', want ok"
logs="$(k logs client)"
[[ "$logs" == *hello-from-pod* && "$logs" == *"client done"* ]] || fail "kubectl logs client: '$logs'"
[[ "$(k get node kc-node -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" == 4 ]] || fail "nvidia.com/gpu not allocatable"
[[ "$(k get node kc-node -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.product}')" == NVIDIA-H200 ]] || fail "GFD label missing"
svc_ip="$(k get svc echo -o jsonpath='{.spec.clusterIP}')"
[[ "$(curl -s --max-time 5 "http://$svc_ip/")" == hello-from-pod ]] || fail "the Service's ClusterIP $svc_ip is not reachable from the host"

t0=$(date +%s)
"$cluster" --dir "$dir" down
echo "down (2 pods running): $(($(date +%s) - t0)) s"
check_clean "after down"

# A failed up: the kubelet refuses a flag; up must fail and clean up.
if "$cluster" --dir "$dir" up --with-node --kubelet-arg=--no-such-flag --timeout 60 >"$dir/failed-up.log" 2>&1; then
  fail "up with a broken kubelet succeeded"
fi
grep -q "the kubelet exited" "$dir/failed-up.log" || fail "failed up did not say why: $(tail -5 "$dir/failed-up.log")"
check_clean "after a failed up"

if [[ $failures -gt 0 ]]; then
  echo "node_lifecycle_test: $failures failure(s)" >&2
  exit 1
fi
echo "node_lifecycle_test: ok"
