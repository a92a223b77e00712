#!/usr/bin/env bash
# The test command (README): installs what is missing, builds the pinned local
# control plane once (cached in ~/.cache/kernelcache), builds KernelCache, and
# runs every test: unit tests first, then the integration suites against the
# real kube-apiserver/etcd/kwok started by the tests themselves.
#
# First run on a fresh machine: ~40-60 minutes (Go builds of Kubernetes 1.34,
# etcd, kwok and helm from pinned modules). Later runs: a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
./scripts/install-deps.sh
./tests/cluster/build.sh
./scripts/build.sh
build_dir=${KC_BUILD_DIR:-build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "test: unit tests"
ctest --test-dir "$build_dir" -L unit --output-on-failure -j "$(nproc)" | tee -a "$log"
echo "test: integration tests (real control plane)"
ctest --test-dir "$build_dir" -L integration --output-on-failure | tee -a "$log"
echo "test: style (clang-format)"
./scripts/lint.sh
echo "test: all done in $(( $(date +%s) - start ))s"
# One closing line over both stages: "N passed, N failed, N skipped".
total=$(sed -n 's/.* tests failed out of \([0-9]*\)$/\1/p' "$log" | awk "{s+=\$1} END {print s+0}")
failed=$(sed -n 's/.*, \([0-9]*\) tests failed out of .*/\1/p' "$log" | awk "{s+=\$1} END {print s+0}")
skipped=$(grep -c '(Skipped)$' "$log" || true)
echo "test: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
