#!/usr/bin/env bash
# bench/faults/run.sh: the fault campaign ("Faults under load").
#  1. seal_faults.py: `initwarm seal` SIGKILLed at seeded random points on a
#     large tree, and a tmpfs volume that fills up during seal (root only);
#  2. faults.py: a private control plane with kwok (tests/cluster/cluster.sh),
#     the fleet of bench/scale/driver.py, two operator replicas with leader
#     election behind fault proxies, a stream of label changes and pod
#     creations, and the faults: kube-apiserver and etcd SIGKILLed, a
#     compaction forcing 410 Gone, the leader SIGKILLed during Job creation, a
#     slow API server, 429 throttling, the operator restarted.
# Prints both tables (markdown) and writes OUT/faults.json, OUT/seal.json.
#
# Usage: bench/faults/run.sh [--nodes 200] [--kcs 10] [--pods-per-node 2] [--seed 1]
#          [--apiserver 3] [--etcd 2] [--compactions 1] [--leader 3] [--slow 1]
#          [--throttle 1] [--restart 1] [--fault-seconds 10] [--converge-timeout 120]
#          [--seal-kills 12] [--seal-fills 8] [--seal-files 2000] [--seal-mib 32]
#          [--operator PATH] [--initwarm PATH] [--out DIR] [--keep]
# At 1,000 nodes: --nodes 1000 --kcs 50 --apiserver 10 --etcd 5 --leader 10.
# A count of 0 leaves a fault out; --seal-kills 0 --seal-fills 0 skips step 1.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
nodes=200 kcs=10 pods_per_node=2 seed=1 keep=0
faults=()
seal_kills=12 seal_fills=8 seal_files=2000 seal_mib=32
operator="$root/build/operator/kernelcache-operator"
# initwarm-testing: initwarm with the KC_CRASH_AT hook (initwarm/testing/crash_at.h)
initwarm="$root/build/initwarm/testing/initwarm-testing"
out="${TMPDIR:-/tmp}/kc-faults-$$"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) nodes="$2"; shift 2 ;;
    --kcs) kcs="$2"; shift 2 ;;
    --pods-per-node) pods_per_node="$2"; shift 2 ;;
    --apiserver | --etcd | --compactions | --leader | --slow | --throttle | --restart | --fault-seconds | \
      --converge-timeout | --log-level)
      faults+=("$1" "$2"); shift 2 ;;
    --seal-kills) seal_kills="$2"; shift 2 ;;
    --seal-fills) seal_fills="$2"; shift 2 ;;
    --seal-files) seal_files="$2"; shift 2 ;;
    --seal-mib) seal_mib="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --operator) operator="$2"; shift 2 ;;
    --initwarm) initwarm="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done
say() { echo "[faults $(date +%H:%M:%S)] $*" >&2; }
[[ -x "$operator" ]] || { say "ERROR: --operator $operator is not an executable"; exit 1; }
[[ -x "$initwarm" ]] || { say "ERROR: --initwarm $initwarm is not an executable"; exit 1; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cluster="$out/cluster"
rc=0

if [[ $seal_kills == 0 && $seal_fills == 0 ]]; then
  : >"$out/seal.table"
else
  say "1. seal faults ($initwarm)"
  python3 "$here/seal_faults.py" --initwarm "$initwarm" --seed "$seed" --kills "$seal_kills" \
    --fills "$seal_fills" --files "$seal_files" --mib "$seal_mib" --out "$out/seal.json" >"$out/seal.table" || rc=1
fi

finish() {
  "$root/tests/cluster/cluster.sh" --dir "$cluster" down $([[ $keep == 1 ]] || echo --purge) >/dev/null 2>&1 || true
}
trap finish EXIT
trap 'exit 143' INT TERM
# kwok posts no node heartbeats: without a long grace the node lifecycle
# controller flips every node Unknown and back (bench/scale/README.md).
up_args="--with-kwok --kwok-stage $root/tests/operator/kwok/pod-complete.yaml"
up_args+=" --controller-manager-arg --node-monitor-grace-period=2h --owner-pid $$"
say "2. control plane with kwok in $cluster"
# shellcheck disable=SC2086
"$root/tests/cluster/cluster.sh" --dir "$cluster" up $up_args >&2
"$root/tests/cluster/cluster.sh" --dir "$cluster" kubectl apply -f "$root/crds/" >&2
"$root/tests/cluster/cluster.sh" --dir "$cluster" wait-crd crd/kernelcaches.kernelcache.io >&2
ns=$((kcs < 20 ? kcs : 20))
say "fleet: $nodes nodes, $((nodes * pods_per_node)) pods, $ns namespaces"
python3 "$root/bench/scale/driver.py" --cluster "$cluster" fleet --nodes "$nodes" \
  --pods $((nodes * pods_per_node)) --namespaces "$ns"
say "faults under load (operator logs: $out/faults.json.replica-*.log)"
python3 "$here/faults.py" --cluster "$cluster" --up-args "$up_args" --operator "$operator" \
  --nodes "$nodes" --kcs "$kcs" --namespaces "$ns" --seed "$seed" "${faults[@]}" \
  --out "$out/faults.json" >"$out/faults.table" || rc=1

cat "$out/seal.table" "$out/faults.table"
say "results in $out (rc $rc)"
exit $rc
