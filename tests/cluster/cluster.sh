#!/usr/bin/env bash
# A real Kubernetes control plane on loopback, for tests and the demo.
#
# Usage: tests/cluster/cluster.sh [--dir DIR] <command> [options]
#   up [--with-kwok] [--kwok-stage FILE]... [--apiserver-arg ARG]...
#      [--controller-manager-arg ARG]...
#      [--with-node [--node-gpus N] [--node-label K=V]... [--kubelet-arg ARG]...]
#      [--owner-pid PID] [--timeout SECS]
#                       start etcd, kube-apiserver, kube-controller-manager,
#                       kube-scheduler (and kwok); wait until ready. Against an
#                       existing DIR it reuses certs, ports and etcd data; it
#                       only starts components that are not running.
#                       --with-node adds a real node (node.sh: containerd,
#                       kubelet, kube-proxy, CNI bridge; root only) named
#                       kc-node with GPU Feature Discovery labels and N
#                       (default 4) nvidia.com/gpu; images come from
#                       scripts/build-images.sh (KC_IMAGES_DIR).
#   down [--purge]      stop everything (process groups, waited for; the
#                       node's pods, mounts, interfaces and chains too);
#                       --purge also deletes DIR
#   status              each component's pid and health; exit 1 if not ready
#   stop-apiserver | start-apiserver | restart-apiserver
#   compact             compact etcd at its current revision (prints it)
#   env                 print export lines (KUBECONFIG, PATH, KC_CLUSTER_DIR)
#   wait-crd ARGS...    wait until the CRDs named (crd/NAME..., or crd --all)
#                       are Established, for up to 60 s
#   kubectl ARGS...     run the cached kubectl against this cluster
#   helm ARGS...        run the cached helm against this cluster
#   crictl ARGS... | ctr ARGS...   against the real node's containerd
#   leftovers           print what of the real node remains (exit 0 if any)
#
# DIR defaults to ${KC_CLUSTER_DIR:-/tmp/kernelcache-cluster}. KC_WITH_KWOK=1
# is the same as --with-kwok. Everything listens on 127.0.0.1 only, on free
# ports chosen at the first `up` (kept in DIR/cluster.env). With --owner-pid a
# watchdog stops the cluster when that process exits. Binaries come from the
# cache filled by tests/cluster/build.sh (see versions.sh). With --with-node
# the kubelet and a forwarder to the API server also listen on the node IP
# (10.213.0.1, on an interface node.sh creates; see node.sh).
#
# DIR layout: pki/ (CA, serving, admin and service-account keys), etcd-data/,
# logs/<component>.log, pids/<component>.pid, kubeconfig, cluster.env,
# options.env.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.sh
source "$here/versions.sh"

DIR="${KC_CLUSTER_DIR:-/tmp/kernelcache-cluster}"
if [[ "${1:-}" == "--dir" ]]; then
  DIR="$2"
  shift 2
fi
cmd="${1:-}"
[[ -n "$cmd" ]] || { sed -n '2,42p' "$0"; exit 2; }
shift
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"

PKI="$DIR/pki"
LOGS="$DIR/logs"
PIDS="$DIR/pids"
KUBECONFIG_FILE="$DIR/kubeconfig"
SERVICE_CIDR=10.96.0.0/16
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
# shellcheck source=node.sh
source "$here/node.sh"

say() { echo "[cluster.sh $(date +%H:%M:%S)] $*" >&2; }
die() {
  say "ERROR: $*"
  exit 1
}

# ---------------------------------------------------------------- binaries --
require_binaries() {
  local missing=()
  [[ -x "$KC_ETCD_DIR/etcd" ]] || missing+=("etcd $KC_ETCD_VERSION")
  [[ -x "$KC_K8S_DIR/kube-apiserver" && -x "$KC_K8S_DIR/kubectl" ]] || missing+=("kubernetes $KC_K8S_VERSION")
  if [[ "${WITH_KWOK:-0}" == 1 && ! -x "$KC_KWOK_DIR/kwok" ]]; then missing+=("kwok $KC_KWOK_BUILD"); fi
  if [[ ${#missing[@]} -gt 0 ]]; then
    die "missing binaries in $KC_CACHE_DIR/bin: ${missing[*]}. Run tests/cluster/build.sh (first build: ~20-25 min on 2 cores; later runs: seconds)."
  fi
}

# ------------------------------------------------------------------- ports --
port_in_use() { ss -Htln "sport = :$1" 2>/dev/null | grep . >/dev/null; }
# Ports handed out to the clusters of this machine: one line "PORT DIR" per
# port, under an flock, so that two components of one cluster and two
# clusters started at once never get the same port. A line whose cluster
# folder is gone is dropped when the file is next written.
PORT_REGISTRY="${KC_PORT_REGISTRY:-/tmp/kernelcache-ports}"
# pick_ports VAR...: sets each VAR to a free port below the ephemeral range
# that no other cluster of this machine holds and no process listens on.
pick_ports() {
  local var p picked
  picked=$(
    exec 9>"$PORT_REGISTRY.lock"
    flock 9
    kept=""
    if [[ -f "$PORT_REGISTRY" ]]; then
      while read -r p dir; do
        [[ -n "$p" && -n "$dir" && -d "$dir" ]] && kept+="$p $dir"$'\n'
      done <"$PORT_REGISTRY"
    fi
    for var in "$@"; do
      for _ in $(seq 200); do
        p=$((20000 + RANDOM % 12000))
        [[ $'\n'"$kept" == *$'\n'"$p "* ]] && { p=""; continue; }
        port_in_use "$p" && { p=""; continue; }
        break
      done
      [[ -n "$p" ]] || exit 1
      kept+="$p $DIR"$'\n'
      echo "$var=$p"
    done
    printf '%s' "$kept" >"$PORT_REGISTRY.tmp.$$" && mv "$PORT_REGISTRY.tmp.$$" "$PORT_REGISTRY"
  ) || die "no free port found on 127.0.0.1 in 20000-31999"
  while IFS== read -r var p; do
    printf -v "$var" '%s' "$p"
  done <<<"$picked"
  for var in "$@"; do [[ -n "${!var:-}" ]] || die "no port picked for $var"; done
}

load_env() {
  # shellcheck disable=SC1091
  [[ -f "$DIR/cluster.env" ]] && source "$DIR/cluster.env"
  # shellcheck disable=SC1091
  [[ -f "$DIR/options.env" ]] && source "$DIR/options.env"
  return 0
}

ensure_ports() {
  # shellcheck disable=SC1091
  [[ -f "$DIR/cluster.env" ]] && source "$DIR/cluster.env"
  local need_new=0 p
  if [[ -z "${ETCD_PORT:-}" ]]; then
    need_new=1
  else
    for p in "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT" "$KCM_PORT" "$SCHEDULER_PORT" "$KWOK_PORT"; do
      # A port held by our own running component is fine.
      if port_in_use "$p" && ! owned_port "$p"; then need_new=1; fi
    done
  fi
  if [[ $need_new == 1 ]]; then
    if [[ -n "${ETCD_PORT:-}" ]]; then say "a recorded port is taken by another process; choosing new ports"; fi
    pick_ports ETCD_PORT ETCD_PEER_PORT APISERVER_PORT KCM_PORT SCHEDULER_PORT KWOK_PORT
    cat >"$DIR/cluster.env" <<EOF
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$ETCD_PEER_PORT
APISERVER_PORT=$APISERVER_PORT
KCM_PORT=$KCM_PORT
SCHEDULER_PORT=$SCHEDULER_PORT
KWOK_PORT=$KWOK_PORT
KC_SERVER=https://127.0.0.1:$APISERVER_PORT
EOF
  fi
}

owned_port() {  # is port $1 held by one of our recorded pids?
  local c pid
  for c in "${COMPONENTS[@]}"; do
    pid="$(pid_of "$c")" || continue
    ss -Htlnp "sport = :$1" 2>/dev/null | grep "pid=$pid," >/dev/null && return 0
  done
  return 1
}

# ------------------------------------------------------------------- certs --
gen_certs() {
  mkdir -p "$PKI"
  [[ -f "$PKI/admin.crt" ]] && return 0
  say "generating CA, serving, admin and service-account keys in $PKI"
  local tmp
  tmp="$(mktemp -d)"
  (
    cd "$PKI"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=kernelcache-local-ca" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
    # API server serving certificate.
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out "$tmp/apiserver.csr" \
      -subj "/CN=kube-apiserver" 2>/dev/null
    cat >"$tmp/apiserver.ext" <<EOF
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
EOF
    openssl x509 -req -in "$tmp/apiserver.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
      -out apiserver.crt -days 3650 -extfile "$tmp/apiserver.ext" 2>/dev/null
    # Admin client certificate (group system:masters).
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out "$tmp/admin.csr" \
      -subj "/O=system:masters/CN=kubernetes-admin" 2>/dev/null
    cat >"$tmp/admin.ext" <<EOF
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
EOF
    openssl x509 -req -in "$tmp/admin.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
      -out admin.crt -days 3650 -extfile "$tmp/admin.ext" 2>/dev/null
    # Service-account token signing key pair.
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    chmod 600 ./*.key
  )
  rm -rf "$tmp"
}

write_kubeconfig() {
  local b64="base64 -w0"
  cat >"$KUBECONFIG_FILE.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kernelcache-local
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $($b64 <"$PKI/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $($b64 <"$PKI/admin.crt")
    client-key-data: $($b64 <"$PKI/admin.key")
contexts:
- name: kernelcache-local
  context:
    cluster: kernelcache-local
    user: admin
    namespace: default
current-context: kernelcache-local
preferences: {}
EOF
  chmod 600 "$KUBECONFIG_FILE.tmp"
  mv "$KUBECONFIG_FILE.tmp" "$KUBECONFIG_FILE"
}

# --------------------------------------------------------------- processes --
pid_of() {  # prints the recorded pid of component $1 if it is alive
  local f="$PIDS/$1.pid" pid _
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  # Guard against pid reuse: the process must still run from our cache/dir.
  # Right after start_component the child can be inside its execs (setsid,
  # then the component), where /proc/<pid>/cmdline reads empty for a
  # moment; a live process is looked at again before it is called not ours
  # (once this read a kubelet that had just started as exited).
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    if grep -qaF -e "$DIR" -e "$KC_CACHE_DIR" "/proc/$pid/cmdline" 2>/dev/null; then
      echo "$pid"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

start_component() {  # name binary args...: in its own session/process group
  local name="$1"
  shift
  mkdir -p "$LOGS" "$PIDS"
  echo "=== $(date -u +%FT%TZ) starting: $*" >>"$LOGS/$name.log"
  # fd 8 is the DIR lock held by `up`: the component must not inherit it.
  setsid "$@" </dev/null >>"$LOGS/$name.log" 2>&1 8>&- &
  echo $! >"$PIDS/$name.pid"
}

# name: TERM the process group, wait, KILL after a grace period. The API
# server stops listening at once on SIGTERM but then lingers for ~30s
# (draining), so it gets 3s; the others exit within a second or two.
stop_component() {
  local name="$1" pid i grace=200
  [[ "$name" == kube-apiserver ]] && grace="${APISERVER_GRACE:-30}"
  pid="$(pid_of "$name")" || {
    rm -f "$PIDS/$name.pid"
    return 0
  }
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq $grace); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "$name (pid $pid) still running $((grace / 10))s after SIGTERM; sending SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    for i in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  kill -0 "$pid" 2>/dev/null && die "$name (pid $pid) did not exit"
  rm -f "$PIDS/$name.pid"
  say "stopped $name (pid $pid)"
}

# kubectl wait fails at once ("<nil> is of the type <nil>") when it reads a CRD
# before the API server wrote any condition, and with NotFound just after the
# apply: those two are retried (each try waits up to the time left); any other
# error, or 60 s without Established, ends the wait.
wait_crds() {
  local out deadline=$((SECONDS + 60)) left
  while :; do
    left=$((deadline - SECONDS))
    ((left > 0)) || break
    out="$("$KC_K8S_DIR/kubectl" --kubeconfig="$KUBECONFIG_FILE" wait --for=condition=Established \
      --timeout="${left}s" "$@" 2>&1)" && return 0
    grep -q -e "is of the type <nil>" -e "NotFound" -e "not found" <<<"$out" || break
    sleep 1
  done
  die "wait-crd $*: not Established: $out"
}

log_tail() { [[ -f "$LOGS/$1.log" ]] && tail -n "${2:-25}" "$LOGS/$1.log" | sed "s/^/  $1| /" >&2 || true; }

# wait_http name url timeout-seconds [expected-body]
wait_http() {
  local name="$1" url="$2" timeout="$3" want="${4:-ok}" deadline body
  deadline=$(($(date +%s) + timeout))
  while true; do
    body="$(curl -s --max-time 2 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$url" 2>/dev/null || true)"
    [[ "$body" == "$want" ]] && return 0
    if ! pid_of "$name" >/dev/null; then
      say "ERROR: $name exited while starting; last lines of $LOGS/$name.log:"
      log_tail "$name" 40
      return 1
    fi
    if [[ $(date +%s) -ge $deadline ]]; then
      say "ERROR: $name not ready at $url after ${timeout}s (last answer: '${body:0:200}'); last lines of $LOGS/$name.log:"
      log_tail "$name" 40
      return 1
    fi
    sleep 0.2
  done
}

curl_api() {  # path: GET against the API server with the admin identity
  curl -s --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
    "https://127.0.0.1:$APISERVER_PORT$1"
}

# --------------------------------------------------------------- components --
start_etcd() {
  pid_of etcd >/dev/null && return 0
  start_component etcd "$KC_ETCD_DIR/etcd" --name kc --data-dir "$DIR/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "kc=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync --log-level warn
  wait_http etcd "http://127.0.0.1:$ETCD_PORT/health" "$TIMEOUT" '{"health":"true","reason":""}' ||
    die "etcd did not become healthy"
  say "etcd ready on 127.0.0.1:$ETCD_PORT (pid $(pid_of etcd))"
}

start_apiserver() {
  pid_of kube-apiserver >/dev/null && return 0
  local extra=()
  [[ -n "${APISERVER_ARGS:-}" ]] && read -r -a extra <<<"$APISERVER_ARGS"
  local node_args=()
  # logs/exec/port-forward reach the real node's kubelet at its InternalIP.
  [[ "${WITH_NODE:-0}" == 1 ]] && node_args=(--kubelet-client-certificate="$PKI/admin.crt"
    --kubelet-client-key="$PKI/admin.key" --kubelet-preferred-address-types=InternalIP)
  mkdir -p "$DIR/apiserver"
  start_component kube-apiserver "$KC_K8S_DIR/kube-apiserver" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --cert-dir="$DIR/apiserver" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" \
    --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --endpoint-reconciler-type=none \
    --allow-privileged=true --profiling=false \
    "${node_args[@]}" "${extra[@]}"
  wait_http kube-apiserver "https://127.0.0.1:$APISERVER_PORT/readyz" "$TIMEOUT" ok ||
    die "kube-apiserver did not become ready"
  say "kube-apiserver ready at https://127.0.0.1:$APISERVER_PORT (pid $(pid_of kube-apiserver))"
}

start_controller_manager() {
  pid_of kube-controller-manager >/dev/null && return 0
  local extra=()
  [[ -n "${KCM_ARGS:-}" ]] && read -r -a extra <<<"$KCM_ARGS"
  mkdir -p "$DIR/controller-manager"
  start_component kube-controller-manager "$KC_K8S_DIR/kube-controller-manager" \
    --kubeconfig="$KUBECONFIG_FILE" \
    --authentication-kubeconfig="$KUBECONFIG_FILE" --authorization-kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --cert-dir="$DIR/controller-manager" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --leader-elect=false --controllers='*' \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" --profiling=false "${extra[@]}"
}

start_scheduler() {
  pid_of kube-scheduler >/dev/null && return 0
  mkdir -p "$DIR/scheduler"
  start_component kube-scheduler "$KC_K8S_DIR/kube-scheduler" \
    --kubeconfig="$KUBECONFIG_FILE" \
    --authentication-kubeconfig="$KUBECONFIG_FILE" --authorization-kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --cert-dir="$DIR/scheduler" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --leader-elect=false --profiling=false
}

kwok_stage_args() {  # --config flags: default pod stages (unless overridden by name) + extras
  local f name user_names=""
  [[ -n "${KWOK_STAGES:-}" ]] || return 0
  for f in $KWOK_STAGES; do
    [[ -f "$f" ]] || die "kwok stage file $f does not exist"
    user_names+=" $(sed -n 's/^  name: *\([^ ]*\) *$/\1/p' "$f" | tr '\n' ' ')"
  done
  # kwok drops its built-in pod stages once any pod Stage is configured; add
  # them back, except those an extra file redefines by metadata.name.
  for f in "$KC_KWOK_DIR"/stages/pod-fast/*.yaml; do
    name="$(sed -n 's/^  name: *\([^ ]*\) *$/\1/p;T;q' "$f")"
    [[ " $user_names " == *" $name "* ]] && continue
    echo "--config=$f"
  done
  for f in $KWOK_STAGES; do echo "--config=$f"; done
}

start_kwok() {
  [[ "${WITH_KWOK:-0}" == 1 ]] || return 0
  pid_of kwok >/dev/null && return 0
  local cfg=()
  mapfile -t cfg < <(kwok_stage_args)
  start_component kwok "$KC_KWOK_DIR/kwok" \
    --kubeconfig="$KUBECONFIG_FILE" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --server-address="127.0.0.1:$KWOK_PORT" \
    --node-ip=10.244.0.1 --cidr=10.244.0.1/16 \
    "${cfg[@]}"
}

wait_components() {
  wait_http kube-controller-manager "https://127.0.0.1:$KCM_PORT/healthz" "$TIMEOUT" ok ||
    die "kube-controller-manager did not become healthy"
  wait_http kube-scheduler "https://127.0.0.1:$SCHEDULER_PORT/healthz" "$TIMEOUT" ok ||
    die "kube-scheduler did not become healthy"
  if [[ "${WITH_KWOK:-0}" == 1 ]]; then
    wait_http kwok "http://127.0.0.1:$KWOK_PORT/healthz" "$TIMEOUT" ok || die "kwok did not become healthy"
  fi
  # Pods can be created only once the default ServiceAccount exists.
  local deadline=$(($(date +%s) + TIMEOUT))
  until curl_api /api/v1/namespaces/default/serviceaccounts/default | grep '"kind": *"ServiceAccount"' >/dev/null; do
    if [[ $(date +%s) -ge $deadline ]]; then
      log_tail kube-controller-manager 40
      die "the default ServiceAccount did not appear within ${TIMEOUT}s (service-account controller)"
    fi
    sleep 0.2
  done
}

start_watchdog() {  # stops the cluster when process $1 exits
  local owner="$1" old
  if old="$(cat "$PIDS/watchdog.pid" 2>/dev/null)" && kill -0 "$old" 2>/dev/null; then
    kill -TERM "$old" 2>/dev/null || true
  fi
  kill -0 "$owner" 2>/dev/null || die "--owner-pid $owner is not a running process"
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 0.5; done
    exec "$2" --dir "$3" down --from-watchdog' kc-cluster-watchdog "$owner" "$here/cluster.sh" "$DIR" \
    </dev/null >>"$LOGS/watchdog.log" 2>&1 8>&- &
  echo $! >"$PIDS/watchdog.pid"
}

# Everything but etcd in parallel (the API server gets 1s before SIGKILL:
# nothing needs its drain when all stops), then etcd, which always gets a
# clean SIGTERM because it runs with --unsafe-no-fsync.
stop_all() {
  local c rc=0 pids=()
  node_down || rc=1
  for c in kwok kube-scheduler kube-controller-manager kube-apiserver; do
    APISERVER_GRACE=10 stop_component "$c" &
    pids+=($!)
  done
  for c in "${pids[@]}"; do wait "$c" || rc=1; done
  stop_component etcd || rc=1
  return $rc
}

# ---------------------------------------------------------------- commands --
TIMEOUT=180
case "$cmd" in
  up)
    WITH_KWOK="${KC_WITH_KWOK:-0}"
    KWOK_STAGES=""
    APISERVER_ARGS=""
    KCM_ARGS=""
    WITH_NODE="${KC_WITH_NODE:-0}"
    NODE_GPUS=4
    NODE_LABELS=""
    KUBELET_ARGS=""
    owner=""
    while [[ $# -gt 0 ]]; do
      if [[ "$1" == --*=* ]]; then  # --opt=value is the same as --opt value
        set -- "${1%%=*}" "${1#*=}" "${@:2}"
      fi
      case "$1" in
        --with-kwok) WITH_KWOK=1 ;;
        --kwok-stage) KWOK_STAGES+=" $(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; WITH_KWOK=1; shift ;;
        --apiserver-arg)  # one flag per use, no spaces (kept in options.env)
          [[ "$2" != *[[:space:]]* ]] || die "--apiserver-arg '$2' must not contain spaces"
          APISERVER_ARGS+=" $2"
          shift
          ;;
        --controller-manager-arg)  # likewise, for kube-controller-manager
          [[ "$2" != *[[:space:]]* ]] || die "--controller-manager-arg '$2' must not contain spaces"
          KCM_ARGS+=" $2"
          shift
          ;;
        --with-node) WITH_NODE=1 ;;
        --node-gpus) NODE_GPUS="$2"; WITH_NODE=1; shift ;;
        --node-label) NODE_LABELS+=" $2"; WITH_NODE=1; shift ;;
        --kubelet-arg)
          [[ "$2" != *[[:space:]]* ]] || die "--kubelet-arg '$2' must not contain spaces"
          KUBELET_ARGS+=" $2"
          WITH_NODE=1
          shift
          ;;
        --owner-pid) owner="$2"; shift ;;
        --timeout) TIMEOUT="$2"; shift ;;
        *) die "up: unknown option '$1'" ;;
      esac
      shift
    done
    require_binaries
    [[ $WITH_NODE == 1 ]] && node_require
    start=$(date +%s%N)
    mkdir -p "$LOGS" "$PIDS"
    exec 8>"$DIR/.lock"
    flock 8
    ensure_ports
    cat >"$DIR/options.env" <<EOF
WITH_KWOK=$WITH_KWOK
KWOK_STAGES="$KWOK_STAGES"
APISERVER_ARGS="$APISERVER_ARGS"
KCM_ARGS="$KCM_ARGS"
WITH_NODE=$WITH_NODE
NODE_GPUS=$NODE_GPUS
NODE_LABELS="$NODE_LABELS"
KUBELET_ARGS="$KUBELET_ARGS"
EOF
    gen_certs
    write_kubeconfig
    if [[ -n "$owner" ]]; then start_watchdog "$owner"; fi
    # On any failure below, stop what runs so no stray processes remain.
    trap 'rc=$?; if [[ $rc -ne 0 ]]; then say "up failed; stopping the components (logs kept in $LOGS)"; stop_all; fi' EXIT
    start_etcd
    # A running API server from an `up` without --with-node lacks the kubelet flags.
    if [[ $WITH_NODE == 1 ]] && apid="$(pid_of kube-apiserver)" &&
      ! grep -qa -- --kubelet-client-certificate "/proc/$apid/cmdline"; then
      stop_component kube-apiserver
    fi
    start_apiserver
    start_controller_manager
    start_scheduler
    start_kwok
    wait_components
    if [[ $WITH_NODE == 1 ]]; then node_up; fi
    trap - EXIT
    say "cluster up in $((($(date +%s%N) - start) / 1000000)) ms: https://127.0.0.1:$APISERVER_PORT, KUBECONFIG=$KUBECONFIG_FILE"
    ;;
  down)
    purge=0
    from_watchdog=0
    for a in "$@"; do
      case "$a" in
        --purge) purge=1 ;;
        --from-watchdog) from_watchdog=1 ;;
        *) die "down: unknown option '$a'" ;;
      esac
    done
    if [[ $from_watchdog == 0 && -f "$PIDS/watchdog.pid" ]]; then
      wd="$(cat "$PIDS/watchdog.pid")"
      kill -TERM -- "-$wd" 2>/dev/null || kill -TERM "$wd" 2>/dev/null || true
      rm -f "$PIDS/watchdog.pid"
    fi
    [[ $from_watchdog == 1 ]] && say "owner process exited; stopping the cluster"
    stop_all
    rm -f "$PIDS/watchdog.pid"
    if [[ $purge == 1 ]]; then
      rm -rf "$DIR"
      say "removed $DIR"
    fi
    ;;
  status)
    load_env
    ready=0
    shown=("${COMPONENTS[@]}")
    [[ -d "$NODE_DIR" ]] && shown+=("${NODE_COMPONENTS[@]}")
    for c in "${shown[@]}"; do
      if pid="$(pid_of "$c")"; then echo "$c: running (pid $pid)"; else echo "$c: stopped"; fi
    done
    if [[ -n "${APISERVER_PORT:-}" ]] && [[ "$(curl_api /readyz 2>/dev/null)" == ok ]]; then
      echo "readyz: ok (https://127.0.0.1:$APISERVER_PORT)"
      ready=1
    else
      echo "readyz: not ready"
    fi
    [[ $ready == 1 ]]
    ;;
  stop-apiserver)
    stop_component kube-apiserver
    ;;
  start-apiserver | restart-apiserver)
    while [[ $# -gt 0 ]]; do
      case "$1" in
        --timeout) TIMEOUT="$2"; shift ;;
        *) die "$cmd: unknown option '$1'" ;;
      esac
      shift
    done
    load_env
    [[ -n "${APISERVER_PORT:-}" ]] || die "no cluster in $DIR (run up first)"
    pid_of etcd >/dev/null || die "etcd is not running in $DIR (run up)"
    [[ "$cmd" == restart-apiserver ]] && stop_component kube-apiserver
    port_in_use "$APISERVER_PORT" && ! owned_port "$APISERVER_PORT" &&
      die "port $APISERVER_PORT is taken by another process"
    start_apiserver
    ;;
  compact)
    load_env
    [[ -n "${ETCD_PORT:-}" ]] || die "no cluster in $DIR"
    resp="$(curl -s --max-time 5 -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/range" -d '{"key":"Lw==","count_only":true}')"
    rev="$(sed -n 's/.*"revision":"\([0-9]*\)".*/\1/p' <<<"$resp")"
    [[ -n "$rev" ]] || die "could not read the etcd revision (answer: $resp)"
    resp="$(curl -s --max-time 30 -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}")"
    grep -q '"header"' <<<"$resp" || die "etcd compaction at $rev failed: $resp"
    say "compacted etcd at revision $rev"
    echo "$rev"
    ;;
  env)
    load_env
    echo "export KC_CLUSTER_DIR='$DIR'"
    echo "export KUBECONFIG='$KUBECONFIG_FILE'"
    echo "export PATH='$KC_K8S_DIR:$KC_HELM_DIR:$KC_KWOK_DIR':\"\$PATH\""
    echo "export KC_K8S_BIN='$KC_K8S_DIR'"
    echo "export KC_HELM='$KC_HELM_DIR/helm'"
    echo "export KC_KWOK='$KC_KWOK_DIR/kwok'"
    [[ -n "${KC_SERVER:-}" ]] && echo "export KC_SERVER='$KC_SERVER'"
    if [[ "${WITH_NODE:-0}" == 1 ]]; then
      echo "export KC_NODE_NAME='$NODE_NAME'"
      echo "export KC_NODE_IP='$NODE_IP'"
      echo "export CONTAINERD_ADDRESS='$NODE_SOCK'"
      echo "export CONTAINERD_NAMESPACE=k8s.io"
    fi
    ;;
  leftovers)
    node_leftovers
    ;;
  crictl)
    exec "$KC_K8S_NODE_DIR/crictl" --runtime-endpoint "unix://$NODE_SOCK" --image-endpoint "unix://$NODE_SOCK" "$@"
    ;;
  ctr)
    exec ctr --address "$NODE_SOCK" --namespace k8s.io "$@"
    ;;
  wait-crd)
    [[ $# -gt 0 ]] || die "wait-crd needs the CRDs to wait for (crd/NAME..., or crd --all)"
    wait_crds "$@"
    ;;
  kubectl)
    exec "$KC_K8S_DIR/kubectl" --kubeconfig="$KUBECONFIG_FILE" "$@"
    ;;
  helm)
    exec "$KC_HELM_DIR/helm" --kubeconfig="$KUBECONFIG_FILE" "$@"
    ;;
  *)
    die "unknown command '$cmd' (up, down, status, stop-apiserver, start-apiserver, restart-apiserver, compact, env, wait-crd, kubectl, helm, crictl, ctr, leftovers)"
    ;;
esac
