#!/usr/bin/env bash
# scripts/lint.sh's own test, against fake git, clang-format and clang-tidy
# on a PATH of nothing else: it checks every tracked C++ file but the
# vendored wrapper and build outputs, fails when clang-format finds a
# difference, rewrites with --fix, and runs clang-tidy on the .cc files in
# $KC_BUILD_DIR with --tidy.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/scripts/fake_path.sh
. "$root/tests/scripts/fake_path.sh"

under_test lint.sh
real dirname grep
fake git <<'FAKE'
[ "$1" = ls-files ] || exit 2
printf '%s\n' core/a.cc core/a.h tests/cluster/k8s-wrapper/w.cc build/gen.cc kube/b.cc
FAKE
fake clang-format <<'FAKE'
echo "clang-format $*" >>"$CALLS"
exit "${FORMAT_RC:-0}"
FAKE
fake clang-tidy <<'FAKE'
echo "clang-tidy $*" >>"$CALLS"
exit "${TIDY_RC:-0}"
FAKE
files="core/a.cc core/a.h kube/b.cc"

# 1. The check: the owned files only, no tidy.
run "$script"
[ "$rc" -eq 0 ] || fail "exit $rc: $out"
[ "$calls" = "clang-format --dry-run --Werror $files" ] || fail "check: '$calls'"
echo "$out" | grep -q "lint: clang-format clean (3 files)" || fail "no clean line: $out"

# 2. A formatting difference fails it, without the clean line.
FORMAT_RC=1 run "$script"
[ "$rc" -ne 0 ] || fail "exit 0 although clang-format failed"
echo "$out" | grep -q "clean" && fail "clean line after a failure: $out"

# 3. --fix rewrites in place and checks nothing.
run "$script" --fix
[ "$rc" -eq 0 ] || fail "exit $rc with --fix: $out"
[ "$calls" = "clang-format -i $files" ] || fail "--fix: '$calls'"

# 4. --tidy: the check, then clang-tidy over the .cc files in the build dir.
KC_BUILD_DIR=out run "$script" --tidy
want="clang-format --dry-run --Werror $files
clang-tidy -p out --quiet --extra-arg=-Wno-error core/a.cc kube/b.cc"
[ "$calls" = "$want" ] || fail "--tidy: '$calls'"
echo "$out" | grep -q "lint: clang-tidy clean" || fail "no tidy clean line: $out"
TIDY_RC=1 run "$script" --tidy
[ "$rc" -ne 0 ] || fail "exit 0 although clang-tidy failed"

finish lint_sh_test
