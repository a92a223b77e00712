# Shell functions shared by the demo (scripts/demo.sh) and the real-node
# cold-start test (tests/node/jit_cold_start_test.sh): the chart installed
# with the locally built images, a hostPath cache volume, Deployments of the
# CPU-only JIT workload (images/jit-workload) and reading their first-call
# figures. Sourced; needs $helm, $kubectl and $root (the repository root).
#
# The real node runs no cluster DNS (docs/real-node.md): the operator
# Service gets a fixed ClusterIP and the gates the webhook injects are given
# that address (chart values service.clusterIP and resolveUrl).
KC_JIT_SVC_IP=${KC_JIT_SVC_IP:-10.96.0.50}
KC_JIT_IMAGE=kernelcache.local/jit-workload:dev

# jit_helm_install [helm flags...]: installs charts/kernelcache as release
# kc in kernelcache-system with the local images; waits for the rollout.
jit_helm_install() {
  "$helm" install kc "$root/charts/kernelcache" -n kernelcache-system --create-namespace \
    --set image.repository=kernelcache.local/operator --set image.tag=dev --set image.pullPolicy=Never \
    --set initwarmImage.repository=kernelcache.local/initwarm --set initwarmImage.tag=dev \
    --set service.clusterIP="$KC_JIT_SVC_IP" --set resolveUrl="http://$KC_JIT_SVC_IP" \
    --wait --timeout 180s "$@"
}

# jit_hostpath_pv <name> <storageClassName> <dir>: a ReadWriteMany hostPath
# volume the cache group (65532) may write (docs/permissions.md).
jit_hostpath_pv() {
  mkdir -p "$3" && chown 0:65532 "$3" && chmod 2775 "$3"
  "$kubectl" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: $2
  hostPath: {path: $3, type: Directory}
YAML
}

# jit_hostpath_claim <namespace> <name> <dir>: jit_hostpath_pv <name>
# (storage class kc-<name>) and a ReadWriteMany claim <name> in <namespace>
# bound to it: an existingClaim whose files the test reads in <dir>.
jit_hostpath_claim() {
  jit_hostpath_pv "$2" "kc-$2" "$3"
  "$kubectl" -n "$1" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $2}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: kc-$2
  volumeName: $2
  resources: {requests: {storage: 1Gi}}
YAML
}

# jit_deployment <namespace> <name> <app label> <replicas> [env yaml] [annotations]: a
# Deployment of the workload in `serve` mode (it prints one JSON line with
# its first call's figures, then idles as a server would).
jit_deployment() {
  "$kubectl" -n "$1" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $2}
spec:
  replicas: $4
  selector: {matchLabels: {app: $3, run: $2}}
  template:
    metadata: {labels: {app: $3, run: $2}${6:+, annotations: $6}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: server
        image: $KC_JIT_IMAGE
        imagePullPolicy: Never
        args: [serve]
${5:-}
YAML
}

# jit_first_calls <namespace> <label selector> <replicas>: one line per
# pod, "<pod> <JSON>", once every replica has printed its first call (150 s).
jit_first_calls() {
  local pods line out
  for _ in $(seq 150); do
    out=""
    pods=$("$kubectl" -n "$1" get pods -l "$2" -o jsonpath='{.items[*].metadata.name}')
    [ "$(wc -w <<<"$pods")" = "$3" ] || { sleep 1; continue; }
    for p in $pods; do
      line=$("$kubectl" -n "$1" logs "$p" -c server 2>/dev/null | grep -m1 '^{' || true)
      [ -n "$line" ] || { out=""; break; }
      out+="$p $line"$'\n'
    done
    [ -n "$out" ] && { printf '%s' "$out"; return 0; }
    sleep 1
  done
  echo "the pods $2 did not all print their first call" >&2
  return 1
}

# jit_wait_gating <namespace> <app label>: until five server-side dry runs
# in a row of a pod labelled app=<label> come back with the gate injected
# (120 s); prints how many dry runs that took (5: every one was gated).
jit_wait_gating() {
  local in_a_row=0 tries=0 got
  for _ in $(seq 120); do
    tries=$((tries + 1))
    got=$("$kubectl" -n "$1" create --dry-run=server -o jsonpath='{.spec.initContainers[*].name}' -f - 2>/dev/null <<YAML || true
apiVersion: v1
kind: Pod
metadata: {generateName: gate-probe-, labels: {app: $2}}
spec:
  containers: [{name: server, image: $KC_JIT_IMAGE, imagePullPolicy: Never}]
YAML
)
    if [[ " $got " == *" kernelcache-wait "* ]]; then in_a_row=$((in_a_row + 1)); else in_a_row=0; fi
    [ "$in_a_row" -ge 5 ] && { echo "$tries"; return 0; }
    sleep 0.2
  done
  echo "the webhook did not gate five dry-run pods of app=$2 in a row" >&2
  return 1
}

# jit_job_seconds <namespace> <job>: the Job's run time (completion - start).
jit_job_seconds() {
  "$kubectl" -n "$1" get job "$2" -o json | python3 -c '
import json, sys, datetime
s = json.load(sys.stdin)["status"]
p = lambda t: datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ")
print(int((p(s["completionTime"]) - p(s["startTime"])).total_seconds()))'
}

# jit_kernelcache <name> <app label> <runtime> <spec yaml...>: prints a
# KernelCache of the workload gating pods labelled app=<label>; <runtime> is
# a flow map ({triton: "3.6.0"}); each further argument is one more line of
# its spec (storage, consume, retention...), indented by the caller.
jit_kernelcache() {
  cat <<YAML
apiVersion: kernelcache.io/v1alpha1
kind: KernelCache
metadata: {name: $1}
spec:
  podSelector: {matchLabels: {app: $2}}
  image: $KC_JIT_IMAGE
  runtime: $3
  warmup:
    command: ["/usr/bin/python3", "/opt/jit/app/workload.py", "warmup"]
    backoffLimit: 0
    activeDeadlineSeconds: 300
YAML
  shift 3
  printf '  %s\n' "$@"
}

# jit_compile_block <namespace> <pod> <BLOCK>: compiles the workload's
# add_kernel for that BLOCK in the pod's server container, as a request of a
# new shape would (Triton takes it from the view's cache when it is there);
# prints the seconds it took.
jit_compile_block() {
  "$kubectl" -n "$1" exec "$2" -c server -- /usr/bin/python3 -c "
import time, kernels, triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
sig = {'x': '*fp32', 'y': '*fp32', 'out': '*fp32', 'n': 'i32', 'BLOCK': 'constexpr'}
t = time.monotonic()
triton.compile(ASTSource(kernels.add_kernel, sig, {'BLOCK': $3}), target=GPUTarget('cuda', 90, 32))
print(f'{time.monotonic() - t:.2f}')
"
}

# jit_runtime_misses <namespace> <pod>: the number of runtime misses the
# pod's miss watcher container finds in its view now.
jit_runtime_misses() {
  "$kubectl" -n "$1" exec "$2" -c kernelcache-misses -- initwarm misses --json |
    python3 -c 'import json, sys; print(len(json.load(sys.stdin)["misses"]))'
}
