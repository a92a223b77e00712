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
echo "test: unit tests"
ctest --test-dir "$build_dir" -L unit --output-on-failure -j "$(nproc)"
echo "test: integration tests (real control plane)"
ctest --test-dir "$build_dir" -L integration --output-on-failure
echo "test: style (clang-format)"
./scripts/lint.sh
echo "test: all done in $(( $(date +%s) - start ))s"
