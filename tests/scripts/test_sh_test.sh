#!/usr/bin/env bash
# scripts/test.sh's own test: with ctest and the linter replaced by fakes
# that replay saved ctest logs (tests/scripts/testdata), a failing stage no
# longer stops the script: every stage runs, the closing line
# "test: N passed, N failed, N skipped" is printed, and the exit status is
# non-zero exactly when a stage failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data="$root/tests/scripts/testdata"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

bash -n "$root/scripts/test.sh" || fail "scripts/test.sh does not parse"

# fake ctest: replays $UNIT_LOG / $INTEGRATION_LOG, exits like ctest (8 when a test failed).
cat >"$tmp/ctest" <<'FAKE'
#!/usr/bin/env bash
label=""
while [ $# -gt 0 ]; do [ "$1" = -L ] && label=$2; shift; done
echo "ctest $label" >>"$CALLS"
if [ "$label" = unit ]; then f=$UNIT_LOG; else f=$INTEGRATION_LOG; fi
cat "$f"
grep -q ' 0 tests failed' "$f" || exit 8
FAKE
cat >"$tmp/lint" <<'FAKE'
#!/usr/bin/env bash
echo lint >>"$CALLS"
exit "${LINT_RC:-0}"
FAKE
chmod +x "$tmp/ctest" "$tmp/lint"

# run UNIT_LOG INTEGRATION_LOG LINT_RC: sets $out, $rc, $calls.
run() {
  : >"$tmp/calls"
  out=$(CALLS="$tmp/calls" UNIT_LOG=$1 INTEGRATION_LOG=$2 LINT_RC=$3 KC_TEST_SKIP_SETUP=1 \
    KC_CTEST="$tmp/ctest" KC_LINT="$tmp/lint" bash "$root/scripts/test.sh" 2>&1)
  rc=$?
  calls=$(tr '\n' ' ' <"$tmp/calls")
}

# 1. A failing unit stage: the integration and lint stages still run.
run "$data/ctest_unit_failing.log" "$data/ctest_integration_passing.log" 0
[ "$calls" = "ctest unit ctest integration lint " ] || fail "stages run after a failure: '$calls'"
[ "$(echo "$out" | tail -n1)" = "test: 11 passed, 1 failed, 1 skipped" ] ||
  fail "closing line: $(echo "$out" | tail -n1)"
[ "$rc" -ne 0 ] || fail "exit status 0 although the unit stage failed"
echo "$out" | grep -q "failed stage: unit tests" || fail "the failed stage is not named"

# 2. Everything passes: exit 0 and the same closing line format.
run "$data/ctest_integration_passing.log" "$data/ctest_integration_passing.log" 0
[ "$rc" -eq 0 ] || fail "exit status $rc although every stage passed: $out"
[ "$(echo "$out" | tail -n1)" = "test: 6 passed, 0 failed, 0 skipped" ] ||
  fail "closing line: $(echo "$out" | tail -n1)"

# 3. Only the style stage fails: still the closing line, non-zero exit.
run "$data/ctest_integration_passing.log" "$data/ctest_integration_passing.log" 1
[ "$rc" -ne 0 ] || fail "exit status 0 although lint failed"
[ "$(echo "$out" | tail -n1)" = "test: 6 passed, 0 failed, 0 skipped" ] ||
  fail "closing line after a lint failure: $(echo "$out" | tail -n1)"

if [ "$fails" -gt 0 ]; then
  echo "test_sh_test: $fails failure(s)"
  exit 1
fi
echo "test_sh_test: ok"
