#!/usr/bin/env bash
# scripts/build.sh's own test, against a fake cmake (and fake ninja, ccache,
# nproc) on a PATH of nothing else: it configures only a build directory
# that has no CMakeCache.txt, with Ninja and ccache when present, builds all
# targets or the ones named, in $KC_BUILD_DIR, fails when cmake fails, and
# under CI=true turns warnings into errors (KC_WERROR) in any directory.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/scripts/fake_path.sh
. "$root/tests/scripts/fake_path.sh"

under_test build.sh
real dirname
fake cmake <<'FAKE'
echo "cmake $*" >>"$CALLS"
exit "${CMAKE_RC:-0}"
FAKE
fake nproc <<'FAKE'
echo 3
FAKE
fake ninja <<'FAKE'
true
FAKE
fake ccache <<'FAKE'
true
FAKE
dir="$tmp/out"
unset CI  # the cases below set it where they mean it (CI runs this test with CI=true)

# 1. A fresh directory, Ninja and ccache present: configure, then build all.
KC_BUILD_DIR="$dir" run "$script"
[ "$rc" -eq 0 ] || fail "exit $rc: $out"
want="cmake -S . -B $dir -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build $dir -j 3"
[ "$calls" = "$want" ] || fail "fresh build: '$calls'"
echo "$out" | grep -q "compiling all targets" || fail "no progress line: $out"

# 2. Configured already: only the build, of the targets named.
mkdir -p "$dir" && touch "$dir/CMakeCache.txt"
KC_BUILD_DIR="$dir" run "$script" initwarm core_consume_test
[ "$calls" = "cmake --build $dir -j 3 --target initwarm core_consume_test" ] ||
  fail "targets: '$calls'"

# 3. Neither Ninja nor ccache: cmake's default generator, no launcher.
rm -f "$tmp/bin/ninja" "$tmp/bin/ccache" "$dir/CMakeCache.txt"
KC_BUILD_DIR="$dir" run "$script"
[ "$(echo "$calls" | head -n1)" = "cmake -S . -B $dir -DCMAKE_BUILD_TYPE=RelWithDebInfo" ] ||
  fail "configure without ninja and ccache: '$calls'"

# 4. The default directory is build/ of the repository.
touch "$dir/CMakeCache.txt"
run "$script" nothing
echo "$calls" | grep -q -- "--build build -j 3 --target nothing" ||
  fail "default build directory: '$calls'"

# 5. Under CI, -DKC_WERROR=ON: after a fresh configure, and on a directory
# configured before (no configure of its own).
rm -f "$dir/CMakeCache.txt"
KC_BUILD_DIR="$dir" CI=true run "$script"
want="cmake -S . -B $dir -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake $dir -DKC_WERROR=ON
cmake --build $dir -j 3"
[ "$calls" = "$want" ] || fail "CI, fresh: '$calls'"
touch "$dir/CMakeCache.txt"
KC_BUILD_DIR="$dir" CI=true run "$script" initwarm
want="cmake $dir -DKC_WERROR=ON
cmake --build $dir -j 3 --target initwarm"
[ "$calls" = "$want" ] || fail "CI, configured: '$calls'"
KC_BUILD_DIR="$dir" CI=false run "$script" initwarm
[ "$calls" = "cmake --build $dir -j 3 --target initwarm" ] || fail "CI=false: '$calls'"

# 6. cmake failing fails the script.
KC_BUILD_DIR="$dir" CMAKE_RC=1 run "$script"
[ "$rc" -ne 0 ] || fail "exit 0 although cmake failed"

finish build_sh_test
