# A real node for the local control plane: containerd + kubelet + kube-proxy
# on this machine, pods as real containers (runc), CNI bridge networking.
# Sourced by cluster.sh (`up --with-node`, `down`, `status`); uses its
# helpers (say, die, start_component, stop_component, pid_of, wait_http...).
#
# Everything it creates, and what `down` (node_down) removes again:
#   processes   containerd, its runc shims, kubelet, kube-proxy, and
#               apiserver-proxy (socat: NODE_IP:<apiserver port> -> 127.0.0.1,
#               so pods reach the API server through the `kubernetes` Service)
#   files       DIR/node/ (containerd root/state/socket, kubelet root dir,
#               pod logs, CNI config and IPAM state, certs, configs)
#   mounts      everything under DIR/node/ (rootfs overlays, shm, projected
#               token tmpfs, netns pins): unmounted, deepest first
#   interfaces  kcnode0 (+ peer kcnode0p): a veth pair holding the node IP;
#               kcbr0: the CNI bridge; the pods' veths (gone with their netns)
#   routes      SERVICE_CIDR via kcnode0 (src NODE_IP): ClusterIP traffic
#               never takes the default route
#   iptables    kube-proxy's KUBE-* chains (kube-proxy --cleanup), the
#               kubelet's KUBE-* canaries, portmap's CNI-* chains, and
#               KC-NODE-GUARD (FORWARD: pod traffic may only go to pods)
#   cgroups     /kc-node in every hierarchy (the kubelet's cgroupRoot)
#   sysctl      net.ipv4.ip_forward (the bridge plugin turns it on): restored
#   host dirs   fixed paths the kubelet, containerd and libcni use whatever
#               their config says (HOST_PATHS: /var/lib/kubelet/device-plugins,
#               /var/log/containers, /var/lib/cni, /run/containerd/s, ...):
#               those that did not exist before `up` are removed
#   /run/kernelcache-node.owner  which DIR owns the one real node per machine
#
# Addresses: NODE_SUBNET (default 10.213.0.0/24, node IP .1) and POD_SUBNET
# (10.213.1.0/24, bridge .1), both private and checked unused at `up`;
# traffic to them never leaves this machine. Nothing binds to other
# interfaces: the kubelet serves on NODE_IP, containerd's stream server and
# the health ports on 127.0.0.1.
# shellcheck shell=bash

NODE_NAME="${KC_NODE_NAME:-kc-node}"
NODE_IFACE=kcnode0
NODE_PEER=kcnode0p
CNI_BRIDGE=kcbr0
NODE_SUBNET="${KC_NODE_SUBNET:-10.213.0.0/24}"
POD_SUBNET="${KC_POD_SUBNET:-10.213.1.0/24}"
NODE_IP="${NODE_SUBNET%.*/*}.1"
NODE_OWNER_FILE=/run/kernelcache-node.owner
NODE_DIR="$DIR/node"
NODE_SOCK="$NODE_DIR/containerd.sock"
NODE_CGROUP=kc-node
NODE_COMPONENTS=(containerd apiserver-proxy kubelet kube-proxy)
HOST_PATHS=(/var/lib/kubelet /var/log/containers /usr/libexec/kubernetes /var/lib/cni /run/containerd
  /etc/cni /opt/containerd)
KC_IMAGES_DIR="${KC_IMAGES_DIR:-$here/../../build/images}"

node_ctr() { ctr --address "$NODE_SOCK" --namespace k8s.io "$@"; }
node_crictl() { "$KC_K8S_NODE_DIR/crictl" --runtime-endpoint "unix://$NODE_SOCK" --image-endpoint "unix://$NODE_SOCK" --timeout 20s "$@"; }

node_require() {
  local missing=() c
  [[ $(id -u) == 0 ]] || die "--with-node needs root (containerd, runc, network interfaces, mounts)"
  for c in containerd containerd-shim-runc-v2 runc ctr iptables ip6tables socat ip mount; do
    command -v "$c" >/dev/null || missing+=("$c")
  done
  for c in bridge host-local loopback portmap; do
    [[ -x /usr/lib/cni/$c ]] || missing+=("/usr/lib/cni/$c")
  done
  [[ ${#missing[@]} -eq 0 ]] ||
    die "--with-node: missing ${missing[*]}; run scripts/install-deps.sh (containerd runc containernetworking-plugins iptables socat)"
  for c in kubelet kube-proxy crictl; do
    [[ -x "$KC_K8S_NODE_DIR/$c" ]] ||
      die "--with-node: $KC_K8S_NODE_DIR/$c is missing; run tests/cluster/build.sh kubernetes-node (~2 min after the control plane is built)"
  done
  [[ -f "$KC_IMAGES_DIR/pause.tar" ]] ||
    die "--with-node: the sandbox image $KC_IMAGES_DIR/pause.tar is missing; run scripts/build-images.sh"
}

# Refuses when another cluster dir's node runs here (one kube-proxy and one
# set of KUBE-* chains per machine); a stale claim is cleaned and taken over.
node_claim() {
  local owner
  if [[ -f "$NODE_OWNER_FILE" ]]; then
    owner="$(cat "$NODE_OWNER_FILE")"
    if [[ "$owner" != "$DIR" ]]; then
      if [[ -d "$owner/node" ]] && (DIR="$owner" PIDS="$owner/pids" pid_of kubelet >/dev/null ||
        DIR="$owner" PIDS="$owner/pids" pid_of containerd >/dev/null); then
        die "a real node of the cluster in $owner runs on this machine; stop it first: tests/cluster/cluster.sh --dir $owner down"
      fi
      say "taking over the stale real-node claim of $owner"
      node_cleanup_host
    fi
  fi
  local net
  for net in "$NODE_SUBNET" "$POD_SUBNET"; do
    if ip -4 route show | grep -v -e "dev $NODE_IFACE" -e "dev $CNI_BRIDGE" | grep -q "^${net} "; then
      die "the subnet $net is already routed on this machine; choose another with KC_NODE_SUBNET / KC_POD_SUBNET"
    fi
  done
  echo "$DIR" >"$NODE_OWNER_FILE"
}

node_ports() {
  # shellcheck disable=SC1091
  [[ -f "$NODE_DIR/node.env" ]] && source "$NODE_DIR/node.env"
  [[ -n "${KUBELET_PORT:-}" ]] && ! port_in_use "$KUBELET_PORT" && return 0
  pick_ports KUBELET_PORT KUBELET_HEALTHZ_PORT PROXY_HEALTHZ_PORT PROXY_METRICS_PORT
  cat >"$NODE_DIR/node.env" <<EOF
KUBELET_PORT=$KUBELET_PORT
KUBELET_HEALTHZ_PORT=$KUBELET_HEALTHZ_PORT
PROXY_HEALTHZ_PORT=$PROXY_HEALTHZ_PORT
PROXY_METRICS_PORT=$PROXY_METRICS_PORT
NODE_NAME=$NODE_NAME
NODE_IP=$NODE_IP
EOF
}

# sign <name> <subject> <extensions>: a key and certificate signed by the CA.
node_sign() {
  local name="$1" subj="$2" ext="$3" d="$NODE_DIR/pki"
  [[ -f "$d/$name.crt" ]] && return 0
  mkdir -p "$d"
  openssl req -newkey rsa:2048 -nodes -keyout "$d/$name.key" -out "$d/$name.csr" -subj "$subj" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n%s\n' "$ext" >"$d/$name.ext"
  openssl x509 -req -in "$d/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -out "$d/$name.crt" -days 3650 -extfile "$d/$name.ext" 2>/dev/null
  chmod 600 "$d/$name.key"
  rm -f "$d/$name.csr" "$d/$name.ext"
}

node_kubeconfig() {  # <file> <cert-name>
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:$APISERVER_PORT", certificate-authority: "$PKI/ca.crt"}
users:
- name: u
  user: {client-certificate: "$NODE_DIR/pki/$2.crt", client-key: "$NODE_DIR/pki/$2.key"}
contexts:
- name: c
  context: {cluster: local, user: u}
current-context: c
EOF
}

node_write_configs() {
  mkdir -p "$NODE_DIR"/{containerd,cni/net.d,cni/ipam,kubelet,pod-logs,runc}
  node_sign kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" "extendedKeyUsage=clientAuth"
  node_sign kubelet-serving "/CN=$NODE_NAME" "extendedKeyUsage=serverAuth
subjectAltName=IP:$NODE_IP,DNS:$NODE_NAME"
  node_sign kube-proxy "/CN=system:kube-proxy" "extendedKeyUsage=clientAuth"
  node_kubeconfig "$NODE_DIR/kubelet.kubeconfig" kubelet
  node_kubeconfig "$NODE_DIR/kube-proxy.kubeconfig" kube-proxy
  : >"$NODE_DIR/resolv.conf"  # pods get no name servers: no DNS traffic anywhere

  cat >"$NODE_DIR/containerd/config.toml" <<EOF
version = 2
root = "$NODE_DIR/containerd/root"
state = "$NODE_DIR/containerd/state"
[grpc]
  address = "$NODE_SOCK"
[ttrpc]
  address = "$NODE_SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$NODE_DIR/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$KC_PAUSE_IMAGE"
  # The VM refuses to lower oom_score_adj; without this runc fails with
  # "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$NODE_DIR/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_DIR/cni/net.d"
    max_conf_num = 1
EOF

  cat >"$NODE_DIR/cni/net.d/10-kernelcache.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "kernelcache-pods",
  "plugins": [
    {"type": "bridge", "bridge": "$CNI_BRIDGE", "isGateway": true, "ipMasq": false,
     "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$NODE_DIR/cni/ipam",
              "ranges": [[{"subnet": "$POD_SUBNET"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

  cat >"$NODE_DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $NODE_DIR/pki/kubelet-serving.crt
tlsPrivateKeyFile: $NODE_DIR/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$NODE_SOCK
imageServiceEndpoint: unix://$NODE_SOCK
# This VM: cgroup v1, no systemd.
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupRoot: /$NODE_CGROUP
failSwapOn: false
resolvConf: $NODE_DIR/resolv.conf
podLogsDir: $NODE_DIR/pod-logs
volumePluginDir: $NODE_DIR/kubelet/volume-plugins
clusterDomain: cluster.local
# Images are imported, never pulled: never garbage-collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
maxPods: 60
shutdownGracePeriod: 0s
EOF

  cat >"$NODE_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $NODE_DIR/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
clusterCIDR: $POD_SUBNET
nodePortAddresses: ["$NODE_IP/32"]
iptables: {localhostNodePorts: false, syncPeriod: 30s, minSyncPeriod: 0s}
# Leave the conntrack sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

node_network_up() {
  if ! ip link show "$NODE_IFACE" >/dev/null 2>&1; then
    ip link add "$NODE_IFACE" type veth peer name "$NODE_PEER"
  fi
  ip addr replace "$NODE_IP/${NODE_SUBNET#*/}" dev "$NODE_IFACE"
  ip link set "$NODE_PEER" up
  ip link set "$NODE_IFACE" up
  ip route replace "$SERVICE_CIDR" dev "$NODE_IFACE" src "$NODE_IP"
  [[ -f "$NODE_DIR/ip_forward.saved" ]] || cat /proc/sys/net/ipv4/ip_forward >"$NODE_DIR/ip_forward.saved"
  if ! iptables -w -nL KC-NODE-GUARD >/dev/null 2>&1; then
    iptables -w -N KC-NODE-GUARD
    # Pods talk to pods (and to the host's own addresses, via INPUT); nothing
    # from a pod, and nothing arriving on the node veth, is forwarded out.
    iptables -w -A KC-NODE-GUARD -s "$POD_SUBNET" -d "$POD_SUBNET" -j RETURN
    iptables -w -A KC-NODE-GUARD -s "$POD_SUBNET" -j DROP
    iptables -w -A KC-NODE-GUARD -i "$NODE_PEER" -j DROP
    iptables -w -A KC-NODE-GUARD -i "$NODE_IFACE" -j DROP
    iptables -w -I FORWARD 1 -j KC-NODE-GUARD
  fi
}

node_cgroups_up() {
  local h
  for h in /sys/fs/cgroup/*/; do
    if [[ -d "$h" && "$h" != */unified/ ]]; then mkdir -p "$h$NODE_CGROUP"; fi
  done
}

image_ref() {  # "<name> <digest>" of an image archive, one line per name
  python3 "$here/../../images/oci_image.py" inspect "$1" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print("\n".join(n + " " + d["digest"] for n in d.get("names", [d["name"]])))'
}

node_import_images() {  # every archive in KC_IMAGES_DIR not imported at its digest yet (every name)
  local f ref have
  have="$(node_ctr images ls 2>/dev/null | awk '{print $1, $3}')"
  for f in "$KC_IMAGES_DIR"/*.tar; do
    [[ -f "$f" ]] || continue
    ref="$(image_ref "$f")" || die "cannot read the image archive $f"
    [[ -z "$(comm -23 <(sort <<<"$ref") <(sort <<<"$have"))" ]] && continue
    node_ctr images import "$f" >/dev/null || die "ctr images import $f failed"
    say "imported ${ref//$'\n'/, }"
  done
}

# The API server listens on loopback only; pods reach it at NODE_IP through
# this forwarder and the `kubernetes` Service (its EndpointSlice is ours,
# the API server's endpoint reconciler is off).
node_apiserver_endpoints() {
  "$KC_K8S_DIR/kubectl" --kubeconfig="$KUBECONFIG_FILE" apply -f - >/dev/null <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels:
    kubernetes.io/service-name: kubernetes
    endpointslice.kubernetes.io/managed-by: cluster.sh.kernelcache.io
addressType: IPv4
endpoints:
- addresses: ["$NODE_IP"]
  conditions: {ready: true}
ports:
- {name: https, port: $APISERVER_PORT, protocol: TCP}
EOF
}

node_labels_arg() {
  local l="kernelcache.io/real-node=true,nvidia.com/gpu.present=true"
  l+=",nvidia.com/gpu.product=${KC_NODE_GPU_PRODUCT:-NVIDIA-H200}"
  l+=",nvidia.com/gpu.compute.major=${KC_NODE_CC_MAJOR:-9},nvidia.com/gpu.compute.minor=${KC_NODE_CC_MINOR:-0}"
  l+=",nvidia.com/cuda.driver-version.full=${KC_NODE_DRIVER:-580.159.04}"
  l+=",nvidia.com/cuda.runtime-version.full=13.0,nvidia.com/cuda.runtime-version.major=13"
  l+=",nvidia.com/cuda.runtime-version.minor=0,nvidia.com/gpu.count=${NODE_GPUS}"
  [[ -n "${NODE_LABELS:-}" ]] && l+=",${NODE_LABELS# }"
  echo "${l// /,}"
}

node_wait_ready() {
  local deadline=$(($(date +%s) + TIMEOUT)) ready
  while true; do
    if ! pid_of kubelet >/dev/null; then
      say "ERROR: the kubelet exited; last lines of $LOGS/kubelet.log:"
      log_tail kubelet 40
      return 1
    fi
    ready="$("$KC_K8S_DIR/kubectl" --kubeconfig="$KUBECONFIG_FILE" get node "$NODE_NAME" \
      -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)"
    [[ "$ready" == True ]] && return 0
    if [[ $(date +%s) -ge $deadline ]]; then
      say "ERROR: node $NODE_NAME not Ready after ${TIMEOUT}s (Ready=$ready); last lines of $LOGS/kubelet.log:"
      log_tail kubelet 40
      return 1
    fi
    sleep 0.5
  done
}

# nvidia.com/gpu as an extended resource: the kubelet keeps capacity it does
# not manage and copies it to allocatable.
node_advertise_gpus() {
  local deadline=$(($(date +%s) + 60)) got
  "$KC_K8S_DIR/kubectl" --kubeconfig="$KUBECONFIG_FILE" patch node "$NODE_NAME" --subresource=status \
    --type=json -p "[{\"op\":\"add\",\"path\":\"/status/capacity/nvidia.com~1gpu\",\"value\":\"$NODE_GPUS\"}]" >/dev/null
  until got="$("$KC_K8S_DIR/kubectl" --kubeconfig="$KUBECONFIG_FILE" get node "$NODE_NAME" \
    -o 'jsonpath={.status.allocatable.nvidia\.com/gpu}' 2>/dev/null)" && [[ "$got" == "$NODE_GPUS" ]]; do
    [[ $(date +%s) -lt $deadline ]] || die "node $NODE_NAME: allocatable nvidia.com/gpu is '$got', want $NODE_GPUS"
    sleep 0.5
  done
}

node_record_host_paths() {  # the fixed host paths that do not exist yet are ours
  local p
  for p in "${HOST_PATHS[@]}"; do
    [[ -e "$p" ]] || grep -qxF "$p" "$NODE_DIR/host-paths" 2>/dev/null || echo "$p" >>"$NODE_DIR/host-paths"
  done
  touch "$NODE_DIR/host-paths"
}

node_up() {
  node_require
  mkdir -p "$NODE_DIR"
  node_claim
  node_record_host_paths
  node_ports
  # The first name of the archive. Not `image_ref | head -1`: under pipefail
  # head closing the pipe early fails the writer with EPIPE now and then.
  local pause_ref
  pause_ref="$(image_ref "$KC_IMAGES_DIR/pause.tar")" || die "cannot read the image archive $KC_IMAGES_DIR/pause.tar"
  pause_ref="${pause_ref%%$'\n'*}"
  KC_PAUSE_IMAGE="${pause_ref%% *}"
  node_write_configs
  node_network_up
  node_cgroups_up
  if ! pid_of containerd >/dev/null; then
    start_component containerd containerd --config "$NODE_DIR/containerd/config.toml"
    local deadline=$(($(date +%s) + TIMEOUT))
    until ctr --address "$NODE_SOCK" version >/dev/null 2>&1; do
      pid_of containerd >/dev/null || { log_tail containerd 40; die "containerd exited while starting"; }
      [[ $(date +%s) -lt $deadline ]] || { log_tail containerd 40; die "containerd did not answer on $NODE_SOCK"; }
      sleep 0.2
    done
    say "containerd ready on $NODE_SOCK (pid $(pid_of containerd))"
  fi
  node_import_images
  if ! pid_of apiserver-proxy >/dev/null; then
    start_component apiserver-proxy socat -L "$NODE_DIR/apiserver-proxy.lock" \
      "TCP-LISTEN:$APISERVER_PORT,bind=$NODE_IP,fork,reuseaddr" "TCP:127.0.0.1:$APISERVER_PORT"
  fi
  node_apiserver_endpoints
  if ! pid_of kubelet >/dev/null; then
    # A Node object left by an earlier kubelet still reads Ready for ~40 s:
    # delete it, so Ready below is this kubelet's (it registers anew).
    "$KC_K8S_DIR/kubectl" --kubeconfig="$KUBECONFIG_FILE" delete node "$NODE_NAME" --ignore-not-found --wait=false >/dev/null
    local extra=()
    [[ -n "${KUBELET_ARGS:-}" ]] && read -r -a extra <<<"$KUBELET_ARGS"
    start_component kubelet "$KC_K8S_NODE_DIR/kubelet" --config="$NODE_DIR/kubelet/config.yaml" \
      --kubeconfig="$NODE_DIR/kubelet.kubeconfig" --root-dir="$NODE_DIR/kubelet/root" \
      --cert-dir="$NODE_DIR/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" \
      --node-labels="$(node_labels_arg)" --v="${KC_KUBELET_V:-1}" "${extra[@]}"
  fi
  if ! pid_of kube-proxy >/dev/null; then
    start_component kube-proxy "$KC_K8S_NODE_DIR/kube-proxy" --config="$NODE_DIR/kube-proxy.yaml" \
      --v="${KC_KUBE_PROXY_V:-1}"
  fi
  node_wait_ready || die "the real node did not become Ready"
  # kube-proxy is healthy once it has synced its rules for the (new) Node.
  local deadline=$(($(date +%s) + TIMEOUT))
  until curl -sf --max-time 2 "http://127.0.0.1:$PROXY_HEALTHZ_PORT/healthz" >/dev/null; do
    pid_of kube-proxy >/dev/null || { log_tail kube-proxy 40; die "kube-proxy exited while starting"; }
    [[ $(date +%s) -lt $deadline ]] || { log_tail kube-proxy 40; die "kube-proxy not healthy after ${TIMEOUT}s"; }
    sleep 0.3
  done
  node_advertise_gpus
  say "real node $NODE_NAME Ready at $NODE_IP ($NODE_GPUS nvidia.com/gpu, containerd $NODE_SOCK)"
}

# --- down: every step tolerates "not there", so it also cleans a failed up ---

node_stop_pods() {
  pid_of containerd >/dev/null || return 0
  [[ -x "$KC_K8S_NODE_DIR/crictl" ]] || return 0
  # Through the CRI, so the CNI plugins release addresses, veths and chains.
  node_crictl stopp $(node_crictl pods -q 2>/dev/null) >/dev/null 2>&1 || true
  node_crictl rmp --all --force >/dev/null 2>&1 || true
}

node_kill_shims() {  # runc shims of our containerd outlive it; they are ours by address
  local pid
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $NODE_SOCK" || true); do
    kill -KILL "$pid" 2>/dev/null || true
  done
  for _ in $(seq 50); do
    pgrep -f "containerd-shim-runc-v2 .*-address $NODE_SOCK" >/dev/null || return 0
    sleep 0.1
  done
}

node_unmount() {
  local m
  # Deepest first; lazy as a last resort for a busy mount.
  for m in $(awk -v d="$NODE_DIR/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "could not unmount $m"
  done
}

# Deletes every rule jumping to, and then every chain named, KUBE-*, CNI-* or
# KC-NODE-* (only the owner of the machine's one real node calls this).
node_iptables_purge() {
  local ipt t rule chain
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for t in filter nat mangle raw; do
      "$ipt" -w -t "$t" -S >/dev/null 2>&1 || continue
      while read -r rule; do
        eval "$ipt -w -t $t ${rule/#-A/-D}" 2>/dev/null || true
      done < <("$ipt" -w -t "$t" -S | grep -E '^-A .* -j (KUBE-|CNI-|KC-NODE)' | grep -vE '^-A (KUBE-|CNI-|KC-NODE)')
      for chain in $("$ipt" -w -t "$t" -S | sed -n -E 's/^-N ((KUBE-|CNI-|KC-NODE)[^ ]*)$/\1/p'); do
        "$ipt" -w -t "$t" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$ipt" -w -t "$t" -S | sed -n -E 's/^-N ((KUBE-|CNI-|KC-NODE)[^ ]*)$/\1/p'); do
        "$ipt" -w -t "$t" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

# Host state outside DIR: interfaces, route, chains, cgroups, sysctl, links.
node_cleanup_host() {
  local l h
  [[ -x "$KC_K8S_NODE_DIR/kube-proxy" ]] && "$KC_K8S_NODE_DIR/kube-proxy" --cleanup >/dev/null 2>&1 || true
  node_iptables_purge
  for l in $(ip -o link show master "$CNI_BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$l" 2>/dev/null || true
  done
  ip link del "$CNI_BRIDGE" 2>/dev/null || true
  ip link del "$NODE_IFACE" 2>/dev/null || true
  for h in /sys/fs/cgroup/*/"$NODE_CGROUP"; do
    [[ -d "$h" ]] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  [[ -f "$NODE_DIR/ip_forward.saved" ]] && cat "$NODE_DIR/ip_forward.saved" >/proc/sys/net/ipv4/ip_forward && rm -f "$NODE_DIR/ip_forward.saved"
  find /var/log/containers -maxdepth 1 -type l -lname "$NODE_DIR/*" -delete 2>/dev/null || true
  if [[ -f "$NODE_DIR/host-paths" ]]; then
    while read -r l; do
      [[ -n "$l" ]] && rm -rf "$l"
    done <"$NODE_DIR/host-paths"
  fi
  return 0
}

node_down() {
  [[ -d "$NODE_DIR" ]] || return 0
  local owner=""
  [[ -f "$NODE_OWNER_FILE" ]] && owner="$(cat "$NODE_OWNER_FILE")"
  stop_component kubelet || true
  node_stop_pods
  stop_component kube-proxy || true
  stop_component apiserver-proxy || true
  stop_component containerd || true
  node_kill_shims
  node_unmount
  if [[ "$owner" == "$DIR" ]]; then
    node_cleanup_host
    rm -f "$NODE_OWNER_FILE"
  fi
  return 0
}

# Anything of the node still present (for tests and `status`); prints it.
node_leftovers() {
  local found=1 c
  for c in "${NODE_COMPONENTS[@]}"; do
    pid_of "$c" >/dev/null && { echo "process: $c (pid $(pid_of "$c"))"; found=0; }
  done
  pgrep -af "containerd-shim-runc-v2 .*-address $NODE_SOCK" && found=0
  awk -v d="$NODE_DIR/" 'index($5, d) == 1 {print "mount: " $5; f=1} END {exit !f}' /proc/self/mountinfo && found=0
  for c in "$NODE_IFACE" "$CNI_BRIDGE"; do
    ip link show "$c" >/dev/null 2>&1 && { echo "interface: $c"; found=0; }
  done
  iptables -w -S 2>/dev/null | grep -E '^-N (KUBE-|CNI-|KC-NODE)' | sed 's/^/iptables: /' && found=0
  iptables -w -t nat -S 2>/dev/null | grep -E '^-N (KUBE-|CNI-|KC-NODE)' | sed 's/^/iptables nat: /' && found=0
  ls -d /sys/fs/cgroup/*/"$NODE_CGROUP" 2>/dev/null | sed 's/^/cgroup: /' && found=0
  ip route show "$SERVICE_CIDR" 2>/dev/null | grep . | sed 's/^/route: /' && found=0
  [[ -f "$NODE_OWNER_FILE" ]] && { echo "claim: $NODE_OWNER_FILE"; found=0; }
  if [[ -f "$NODE_DIR/host-paths" ]]; then
    while read -r l; do
      [[ -n "$l" && -e "$l" ]] && { echo "host path: $l"; found=0; }
    done <"$NODE_DIR/host-paths"
  fi
  return $found
}
