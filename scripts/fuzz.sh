#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, AddressSanitizer
# and UndefinedBehaviorSanitizer in a separate build directory, and runs each
# for a bounded time on a copy of its committed corpus.
#
#   scripts/fuzz.sh [seconds-per-target] [target...]    (default 30 s, all)
#   KC_FUZZ_MERGE=1 scripts/fuzz.sh 600                 also merge new inputs
#                                                       that add coverage (at
#                                                       most 4 KiB each) into
#                                                       the committed corpus
#
# build-fuzz/ (KC_FUZZ_BUILD_DIR) is configured with clang++-14, the
# libraries instrumented for coverage (-fsanitize=fuzzer-no-link) and
# sanitized, and only the fuzz_* targets and what they link are built
# (KC_BUILD_TESTS=OFF, KC_BUILD_FUZZ=ON). Work corpora and crash inputs go
# to build-fuzz/fuzz-work/<target>/ and build-fuzz/fuzz-crashes/<target>/.
# Prints a table (target, runs, execs/s, corpus size, result) and exits
# non-zero when any target crashed, leaked, timed out or ran out of memory.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
only=("$@")
build_dir=${KC_FUZZ_BUILD_DIR:-build-fuzz}
cxx=${KC_FUZZ_CXX:-clang++-14}

command -v "$cxx" >/dev/null || { echo "fuzz: $cxx not found (scripts/install-deps.sh)" >&2; exit 1; }
if ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/ 2>/dev/null | grep -q 'libclang_rt.fuzzer-x86_64'; then
  if [ "$cxx" = clang++-14 ]; then
    echo "fuzz: the libFuzzer runtime is missing (apt-get install libclang-rt-14-dev)" >&2
    exit 1
  fi
fi

flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
flags+=" -fno-omit-frame-pointer -O1 -g"
configure=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$flags"
  -DKC_BUILD_TESTS=OFF -DKC_BUILD_FUZZ=ON -DKC_WITH_LIBTORCH=OFF)
command -v ninja >/dev/null && configure+=(-G Ninja)
if command -v ccache >/dev/null; then  # shares entries across clones, like build.sh
  configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
t0=$(date +%s)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  mkdir -p "$build_dir"
  cmake -S . -B "$build_dir" "${configure[@]}" >"$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log" >&2; echo "fuzz: configure failed" >&2; exit 1; }
else
  cmake "$build_dir" >/dev/null || { echo "fuzz: configure failed" >&2; exit 1; }
fi
list="$build_dir/fuzz_targets.txt"
[ -s "$list" ] || { echo "fuzz: $list is empty (is $cxx clang?)" >&2; exit 1; }
targets=()
declare -A corpus binary
while read -r path dir; do
  name=$(basename "$path")
  if ((${#only[@]})) && [[ ! " ${only[*]} " =~ " $name " && ! " ${only[*]} " =~ " ${name#fuzz_} " ]]; then
    continue
  fi
  targets+=("$name")
  corpus[$name]=$dir
  binary[$name]=$path
done <"$list"
((${#targets[@]})) || { echo "fuzz: no such target: ${only[*]}" >&2; exit 1; }
echo "fuzz: building ${#targets[@]} targets in $build_dir"
nice -n 15 cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}" ||
  { echo "fuzz: build failed" >&2; exit 1; }
t1=$(date +%s)
echo "fuzz: build took $((t1 - t0)) s; running each target for $seconds s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
rows=()
failed=0
for name in "${targets[@]}"; do
  work="$build_dir/fuzz-work/$name"
  crashes="$build_dir/fuzz-crashes/$name"
  rm -rf "$work" && mkdir -p "$work" "$crashes"
  cp -r "${corpus[$name]}/." "$work/"
  seeds=$(find "${corpus[$name]}" -type f | wc -l)
  log="$build_dir/fuzz-work/$name.log"
  nice -n 15 "${binary[$name]}" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" "$work" >"$log" 2>&1
  rc=$?
  runs=$(grep -oE '^Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1)
  [ -n "$runs" ] || runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  eps=$(grep -oE 'exec/s: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  size=$(find "$work" -type f | wc -l)
  result=ok
  if ((rc != 0)); then
    failed=1
    result="FAILED (rc $rc; $(grep -m1 -oE 'ERROR: [A-Za-z]+: [^ ]+( [^ ]+)?|runtime error: .{0,60}|deadly signal|timeout|out-of-memory' "$log" || echo see log); inputs in $crashes; log $log)"
  fi
  if ((rc == 0)) && [ "${KC_FUZZ_MERGE:-0}" = 1 ]; then
    nice -n 15 "${binary[$name]}" -merge=1 -max_len=4096 "${corpus[$name]}" "$work" \
      >"$log.merge" 2>&1 || echo "fuzz: merge for $name failed (see $log.merge)" >&2
  fi
  rows+=("$(printf '%-26s %10s %9s %8s  %s' "$name" "${runs:-?}" "${eps:-?}" "$seeds->$size" "$result")")
  echo "fuzz: $name: ${runs:-?} runs, ${eps:-?} exec/s, $result"
done
printf '\n%-26s %10s %9s %8s  %s\n' target runs exec/s corpus result
printf '%s\n' "${rows[@]}"
t2=$(date +%s)
echo "fuzz: build $((t1 - t0)) s, runs $((t2 - t1)) s"
exit $failed
