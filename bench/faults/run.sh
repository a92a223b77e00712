#!/usr/bin/env bash
# bench/faults/run.sh: the fault campaign (faults.py) on a private control
# plane with kwok: the fleet of bench/scale/driver.py, two operator replicas
# with leader election, faults under load, a table of what was lost.
#
# Usage: bench/faults/run.sh [--nodes 200] [--kcs 10] [--pods-per-node 2]
#          [--apiserver 3] [--etcd 2] [--compactions 1] [--leader 3] [--seed 1]
#          [--operator PATH] [--out DIR]
# The issue's size: --nodes 1000 --kcs 50 --apiserver 10 --etcd 5 --leader 10.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
nodes=200 kcs=10 pods_per_node=2 seed=1
faults=(--apiserver 3 --etcd 2 --compactions 1 --leader 3)
operator="$root/build/operator/kernelcache-operator"
out="${TMPDIR:-/tmp}/kc-faults-$$"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) nodes="$2"; shift 2 ;;
    --kcs) kcs="$2"; shift 2 ;;
    --pods-per-node) pods_per_node="$2"; shift 2 ;;
    --apiserver | --etcd | --compactions | --leader) faults+=("$1" "$2"); shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --operator) operator="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) sed -n '2,10p' "$0"; exit 2 ;;
  esac
done
say() { echo "[faults $(date +%H:%M:%S)] $*" >&2; }
[[ -x "$operator" ]] || { say "ERROR: --operator $operator is not an executable"; exit 1; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cluster="$out/cluster"
trap '"$root/tests/cluster/cluster.sh" --dir "$cluster" down --purge >/dev/null 2>&1 || true' EXIT INT TERM
# kwok posts no node heartbeats: without a long grace the node lifecycle
# controller flips every node Unknown and back (bench/scale/README.md).
up_args="--with-kwok --kwok-stage $root/tests/operator/kwok/pod-complete.yaml"
up_args+=" --controller-manager-arg --node-monitor-grace-period=2h"
say "control plane with kwok"
# shellcheck disable=SC2086
"$root/tests/cluster/cluster.sh" --dir "$cluster" up $up_args >&2
"$root/tests/cluster/cluster.sh" --dir "$cluster" kubectl apply -f "$root/crds/" >&2
for _ in $(seq 30); do
  "$root/tests/cluster/cluster.sh" --dir "$cluster" kubectl wait --for=condition=Established \
    --timeout=10s crd/kernelcaches.kernelcache.io >/dev/null 2>&1 && break
  sleep 1
done
ns=$((kcs < 20 ? kcs : 20))
say "fleet: $nodes nodes, $((nodes * pods_per_node)) pods, $ns namespaces"
python3 "$root/bench/scale/driver.py" --cluster "$cluster" fleet --nodes "$nodes" \
  --pods $((nodes * pods_per_node)) --namespaces "$ns"
say "faults under load (operator logs: $out/faults.json.replica-*.log)"
python3 "$here/faults.py" --cluster "$cluster" --up-args "$up_args" --kubeconfig "$cluster/kubeconfig" \
  --operator "$operator" --nodes "$nodes" --kcs "$kcs" --namespaces "$ns" --seed "$seed" \
  "${faults[@]}" --out "$out/faults.json"
