#!/usr/bin/env bash
# scale_rig_test (ctest, label integration): the small version of the scale
# rig, so it cannot rot. 200 kwok GPU nodes, 6 KernelCaches, 10 driver-label
# changes (one a second: the paced schedule), a pool roll, a restart, against kernelcache-operator only. Asserts
# invariants, not timings (driver.py check): the control plane settles before
# the operator starts, every KernelCache Ready at sync
# and at the end, every change got its new warmup Jobs, zero duplicate Jobs
# (one per KernelCache and fingerprint), zero API requests over a 10 s window
# at rest, no node Ready flip the script did not make (the controller-manager's
# node-monitor grace period outlasts the run: kwok posts no heartbeats), and no
# warmup pod bound to a NotReady node. About 90 s on 2 cores.
# On failure the run's directory (operator log, 1 s timeline, the KernelCaches
# not Ready with their Jobs and pods, the control plane's logs) is kept and named.
# Usage: scale_test.sh SOURCE_DIR OPERATOR_BINARY
set -euo pipefail
src="$1"
operator="$2"
out="$(mktemp -d "${TMPDIR:-/tmp}/kc-scale-test.XXXXXX")"
finish() {
  rc=$?
  "$src/tests/cluster/cluster.sh" --dir "$out/cluster" down --purge >/dev/null 2>&1 || true
  if [[ $rc == 0 ]]; then rm -rf "$out"; else echo "scale_rig_test: FAILED (rc $rc); kept $out" >&2; fi
}
trap finish EXIT
"$src/bench/scale/run.sh" --only ours --operator "$operator" --out "$out" --nodes 200 --kcs 6 \
  --pods-per-node 2 --changes 10 --change-interval 1 --roll-seconds 5 --idle-seconds 10 --sync-timeout 120
python3 "$src/bench/scale/driver.py" check "$out/200-ours-1.json"
