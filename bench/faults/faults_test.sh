#!/usr/bin/env bash
# faults_test (ctest, label faults): the small version of the fault campaign
# (bench/faults/README.md), so it cannot rot. Seal faults on a 500-file tree
# (6 SIGKILLs at random points, 4 volume-full runs when a tmpfs can be
# mounted), then 120 kwok GPU nodes, 6 KernelCaches and two operator replicas
# under load: 2 kube-apiserver SIGKILLs, 1 etcd SIGKILL, 1 compaction (410
# Gone), 2 leader SIGKILLs during Job creation, a slow API server, 429
# throttling, a restart. Fails on a duplicate warmup Job, a lost status
# update, a KernelCache not converged within 120 s of a fault, a READY cache
# failing verification or any other seal invariant (the exit status of
# run.sh). Asserts invariants, not timings. About 4 minutes on 2 cores.
# On failure the run's directory (tables, JSON, operator logs, the proxies'
# request log, the control plane's logs) is kept and named.
# Usage: faults_test.sh SOURCE_DIR OPERATOR_BINARY INITWARM_BINARY
set -euo pipefail
src="$1"
operator="$2"
initwarm="$3"
out="$(mktemp -d "${TMPDIR:-/tmp}/kc-faults-test.XXXXXX")"
finish() {
  rc=$?
  if [[ $rc == 0 ]]; then rm -rf "$out"; else echo "faults_test: FAILED (rc $rc); kept $out" >&2; fi
}
trap finish EXIT
"$src/bench/faults/run.sh" --operator "$operator" --initwarm "$initwarm" --out "$out" --seed 7 \
  --seal-kills 6 --seal-fills 4 --seal-files 500 --seal-mib 8 \
  --nodes 120 --kcs 6 --apiserver 2 --etcd 1 --compactions 1 --leader 2 --slow 1 --throttle 1 \
  --restart 1 --fault-seconds 5 --converge-timeout 120
