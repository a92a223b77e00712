#!/usr/bin/env bash
# bench/scale/run.sh: kernelcache-operator and the controller-runtime reference
# (bench/scale/reference) one after the other on one private control plane
# with kwok, the same fleet and the same event script (bench/scale/driver.py);
# prints a side-by-side table per size.
#
# Usage: bench/scale/run.sh [--nodes 300[,1000,...]] [--kcs 6] [--pods-per-node 4]
#          [--changes 50] [--roll-seconds 20] [--idle-seconds 20] [--sync-timeout 300]
#          [--operator PATH] [--reference PATH] [--out DIR] [--only ours|reference|both]
#          [--baseline PATH] [--repeat N] [--reference-every-run] [--reference-changes N]
#          [--change-interval S]
# --operator defaults to build/operator/kernelcache-operator; --reference is
# built from bench/scale/reference (go build) when not given. --baseline runs
# a second kernelcache-operator binary (say, main's, for a before/after) on
# the same cluster right after ours, named "baseline", and prints ours
# against it. --repeat N runs the operators N times on the same cluster, the
# order of ours and the baseline alternating run by run (the reference runs
# in the first run only unless --reference-every-run; --reference-changes N
# gives it N driver changes instead of --changes: at 5,000 nodes it misses
# each one, and a miss waits out the 30 s change timeout). --change-interval S
# starts a driver change every S seconds (an arrival rate, as a fleet's
# upgrades come) instead of each right after the one before (the default, 0:
# the operator saturated). Every bench starts
# only once the control plane is at rest (driver.py settle). Results:
# DIR/<nodes>-<name>-<run>.json and DIR/<nodes>-spread.md, the table of
# each figure's median (min-max) per operator (driver.py spread).
# API requests are counted from the kube-apiserver audit log, for the user
# kc-bench-operator (a client certificate this script signs with the
# cluster's CA; both operators use it, one at a time).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
nodes_list=300
kcs=6
pods_per_node=4
changes=50
roll_seconds=20
idle_seconds=20
sync_timeout=300
operator="$root/build/operator/kernelcache-operator"
reference=""
out="${TMPDIR:-/tmp}/kc-scale-$$"
only=both
baseline=""
repeat=1
reference_every=0
reference_changes=""
change_interval=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) nodes_list="$2"; shift 2 ;;
    --kcs) kcs="$2"; shift 2 ;;
    --pods-per-node) pods_per_node="$2"; shift 2 ;;
    --changes) changes="$2"; shift 2 ;;
    --roll-seconds) roll_seconds="$2"; shift 2 ;;
    --idle-seconds) idle_seconds="$2"; shift 2 ;;
    --sync-timeout) sync_timeout="$2"; shift 2 ;;
    --operator) operator="$2"; shift 2 ;;
    --reference) reference="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --baseline) baseline="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --reference-every-run) reference_every=1; shift ;;
    --reference-changes) reference_changes="$2"; shift 2 ;;
    --change-interval) change_interval="$2"; shift 2 ;;
    *) sed -n '2,27p' "$0"; exit 2 ;;
  esac
done
say() { echo "[scale $(date +%H:%M:%S)] $*" >&2; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
[[ -x "$operator" ]] || { say "ERROR: --operator $operator is not an executable (build target kernelcache-operator)"; exit 1; }
if [[ "$only" != ours && -z "$reference" ]]; then
  say "building the reference operator (go build, pinned go.mod)"
  (cd "$here/reference" && GOFLAGS=-mod=mod go build -o "$out/kc-reference-operator" .)
  reference="$out/kc-reference-operator"
fi

cluster="$out/cluster"
cleanup() {
  # Keep the control plane's logs (controller-manager, scheduler, kwok) of the last size.
  if [[ -d "$cluster/logs" ]]; then
    mkdir -p "$out/cluster-logs" && cp "$cluster"/logs/*.log "$out/cluster-logs/" 2>/dev/null || true
  fi
  "$root/tests/cluster/cluster.sh" --dir "$cluster" down --purge >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

for nodes in ${nodes_list//,/ }; do
  cleanup
  mkdir -p "$cluster"
  cat >"$out/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  users: [kc-bench-operator]
- level: None
EOF
  : >"$out/audit.log"
  # kwok posts no node heartbeats (no Leases); with the default 50 s grace period the
  # node lifecycle controller would mark every kwok node Unknown (tainted unreachable)
  # and kwok set it Ready again, a node event storm a real fleet, whose kubelets renew
  # Leases, does not have: a longer grace period than any run keeps the nodes still.
  say "$nodes nodes: control plane with kwok (audit log of the operator's user)"
  "$root/tests/cluster/cluster.sh" --dir "$cluster" up --with-kwok \
    --kwok-stage "$root/tests/operator/kwok/pod-complete.yaml" \
    --apiserver-arg "--audit-policy-file=$out/audit-policy.yaml" \
    --apiserver-arg "--audit-log-path=$out/audit.log" \
    --apiserver-arg "--audit-log-maxsize=0" \
    --controller-manager-arg "--node-monitor-grace-period=2h" >&2
  pki="$cluster/pki"
  # The operators' identity: its own client certificate, system:masters.
  openssl req -newkey rsa:2048 -nodes -keyout "$out/bench.key" -out "$out/bench.csr" \
    -subj "/O=system:masters/CN=kc-bench-operator" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' >"$out/bench.ext"
  openssl x509 -req -in "$out/bench.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -out "$out/bench.crt" -days 2 -extfile "$out/bench.ext" 2>/dev/null
  sed -e "s|client-certificate-data: .*|client-certificate-data: $(base64 -w0 <"$out/bench.crt")|" \
    -e "s|client-key-data: .*|client-key-data: $(base64 -w0 <"$out/bench.key")|" \
    "$cluster/kubeconfig" >"$out/bench.kubeconfig"
  "$root/tests/cluster/cluster.sh" --dir "$cluster" kubectl apply -f "$root/crds/" >&2
  "$root/tests/cluster/cluster.sh" --dir "$cluster" wait-crd crd/kernelcaches.kernelcache.io >&2
  ns=$(( kcs < 20 ? kcs : 20 ))
  say "$nodes nodes: fleet ($((nodes * pods_per_node)) pods, $ns namespaces)"
  python3 "$here/driver.py" --cluster "$cluster" fleet --nodes "$nodes" --pods $((nodes * pods_per_node)) \
    --namespaces "$ns"
  common=(--nodes "$nodes" --kcs "$kcs" --namespaces "$ns" --changes "$changes" --change-interval "$change_interval"
    --roll-seconds "$roll_seconds"
    --idle-seconds "$idle_seconds" --sync-timeout "$sync_timeout" --audit-log "$out/audit.log")
  bench_one() {  # NAME RUN BINARY...: one operator's bench, DIR/<nodes>-<name>-<run>.json
    local who="$1" r="$2"
    shift 2
    say "$nodes nodes: $who, run $r of $repeat"
    python3 "$here/driver.py" --cluster "$cluster" bench --name "$who" --run "$r" "${common[@]}" \
      --log "$out/$nodes-$who-$r.log" --out "$out/$nodes-$who-$r.json" -- "$@"
  }
  ours_cmd=("$operator" --kubeconfig="$out/bench.kubeconfig" --leader-elect=false --bind-address=127.0.0.1
    --http-port=0 --initwarm-image=kc.local/initwarm:test --warmup-priority-class= --log-level=info)
  for ((r = 1; r <= repeat; r++)); do
    # Which operator meets the cluster first alternates run by run, so a
    # before/after shows the change, not the order.
    order=()
    [[ "$only" != reference ]] && order+=(ours)
    [[ -n "$baseline" ]] && order+=(baseline)
    if (( r % 2 == 0 )); then
      rev=(); for ((i = ${#order[@]} - 1; i >= 0; i--)); do rev+=("${order[$i]}"); done; order=("${rev[@]}")
    fi
    for who in "${order[@]}"; do
      if [[ "$who" == ours ]]; then
        bench_one ours "$r" "${ours_cmd[@]}"
      else
        bench_one baseline "$r" "$baseline" "${ours_cmd[@]:1}"
      fi
    done
    if [[ "$only" != ours ]] && (( r == 1 || reference_every )); then
      saved=("${common[@]}")
      # driver.py takes the last --changes given.
      [[ -n "$reference_changes" ]] && common+=(--changes "$reference_changes")
      bench_one reference "$r" "$reference" --kubeconfig="$out/bench.kubeconfig"
      common=("${saved[@]}")
    fi
  done
  python3 "$here/driver.py" spread "$out/$nodes"-*-[0-9]*.json | tee "$out/$nodes-spread.md"
done
say "results in $out"
