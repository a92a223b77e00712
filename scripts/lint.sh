#!/usr/bin/env bash
# clang-format check over every C++ file we own (add --fix to rewrite).
# clang-tidy runs with --tidy (slow: minutes per target on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' | grep -vE '^(tests/cluster/k8s-wrapper|build)')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
clang-format --dry-run --Werror "${files[@]}"
echo "lint: clang-format clean (${#files[@]} files)"
if [ "${1:-}" = "--tidy" ]; then
  build_dir=${KC_BUILD_DIR:-build}
  mapfile -t ccs < <(printf '%s\n' "${files[@]}" | grep '\.cc$')
  # A directory configured with KC_WERROR (CI) compiles with -Werror: its
  # warnings are the compiler's business, not clang-tidy's.
  clang-tidy -p "$build_dir" --quiet --extra-arg=-Wno-error "${ccs[@]}"
  echo "lint: clang-tidy clean"
fi
