#!/usr/bin/env bash
# The test command (README): installs what is missing, builds the pinned local
# control plane once (cached in ~/.cache/kernelcache), builds KernelCache, and
# runs every test: unit tests first, then the integration suites against the
# real kube-apiserver/etcd/kwok started by the tests themselves, then the
# style check.
#
# Every stage runs even when an earlier one failed (a failed build skips the
# test stages, which would only run stale binaries); then one closing line
#   test: N passed, N failed, N skipped
# counts the tests of both test stages, and the exit status is non-zero when
# any stage failed.
#
# First run on a fresh machine: ~40-60 minutes (Go builds of Kubernetes 1.34,
# etcd, kwok and helm from pinned modules). Later runs: a few minutes.
#
# For the script's own test (tests/scripts/test_sh_test.sh): KC_TEST_SKIP_SETUP=1
# skips install and builds; KC_CTEST and KC_LINT replace ctest and the linter.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
build_dir=${KC_BUILD_DIR:-build}
ctest_cmd=${KC_CTEST:-ctest}
lint_cmd=${KC_LINT:-./scripts/lint.sh}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed_stages=()

# stage NAME COMMAND...: runs one stage, remembering a failure.
stage() {
  local name=$1
  shift
  echo "test: $name"
  if ! "$@"; then
    echo "test: stage '$name' FAILED"
    failed_stages+=("$name")
    return 1
  fi
}

built=1
if [ "${KC_TEST_SKIP_SETUP:-0}" != 1 ]; then
  stage "install dependencies" ./scripts/install-deps.sh &&
    stage "local control plane" ./tests/cluster/build.sh &&
    stage "build" ./scripts/build.sh || built=0
fi

run_ctest() { "$ctest_cmd" --test-dir "$build_dir" "$@" 2>&1 | tee -a "$log"; }
if [ "$built" = 1 ]; then
  stage "unit tests" run_ctest -L unit --output-on-failure -j "$(nproc)"
  stage "integration tests (real control plane)" run_ctest -L integration --output-on-failure
else
  echo "test: unit and integration tests skipped: the setup failed"
fi
stage "style (clang-format)" "$lint_cmd"

echo "test: all stages done in $(($(date +%s) - start))s"
if [ "${#failed_stages[@]}" -gt 0 ]; then
  printf 'test: failed stage: %s\n' "${failed_stages[@]}"
fi
# One closing line over both test stages: "N passed, N failed, N skipped".
total=$(sed -n 's/.* tests failed out of \([0-9]*\)$/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
failed=$(sed -n 's/.*, \([0-9]*\) tests failed out of .*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
skipped=$(grep -c '(Skipped)$' "$log" || true)
echo "test: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
[ "${#failed_stages[@]}" -eq 0 ]
