#!/usr/bin/env bash
# bench/seal/run.sh: `initwarm seal`, `initwarm verify --level Checksums` and
# `initwarm wait --mode Copy`, through the real CLI, side by side with a raw
# parallel read and `cp -a` of the same tree, cold and warm, in one run;
# prints a table of absolute figures and ratios.
#
#   ./scripts/build.sh initwarm bench_seal
#   bench/seal/run.sh [--sizes "512 512 5120"] [--dir /tmp/kc-bench-seal]
#                     [--cold drop_caches|fadvise] [--out results.tsv]
#
# --sizes: tree sizes in MiB, one pass pair (cold, warm) each; a size listed
# twice runs twice (the spread). The tree is bench_seal's (bench/seal/tree.h:
# a quarter in 1-50 KB Triton/Inductor files, the rest 50-200 MB artifacts),
# built into the staging directory `initwarm prepare` makes.
# --cold: how a cold pass drops the tree from memory before each command:
# drop_caches (default when /proc/sys/vm/drop_caches is writable: `echo 3`,
# page cache, dentries and inodes, machine-wide) or fadvise (bench_seal
# --drop: POSIX_FADV_DONTNEED per file; directories and inodes stay cached).
# A warm pass reads the tree once, untimed, before each command.
#
# Each command is one process, timed from outside (wall: bash's
# EPOCHREALTIME; CPU user+sys: /usr/bin/time):
#   read         bench_seal --read: walk as seal does, then 2 x cores threads
#                read every file (largest first, 1 MiB reads): the yardstick
#   seal         initwarm seal: walk, sha256 + fsync of every file, directory
#                fsyncs, modes, manifest.json, rename, READY
#   verify       initwarm verify --level Checksums: manifest, walk, sha256 of
#                every file
#   cp -a        cp -a of the published directory to a local directory
#   wait Copy    initwarm wait --mode Copy --verify Manifest: the manifest and
#                fingerprint on the volume, the copy to --local-dir, the same
#                checks on the copy, the view symlink
#   wait Copy+C  the same with --verify Checksums (the copy is hashed too)
# Ratios are throughput over the yardstick's in the same pass: seal, verify
# over read; wait Copy over cp -a. `load` is the 1-minute load average just
# before the command (other work on the machine shares its cores).
# Disk: the tree plus one copy at a time; everything under --dir is removed
# at the end.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${KC_BUILD_DIR:-$repo/build}"
initwarm="$build/initwarm/initwarm"
bench="$build/bench/seal/bench_seal"
sizes="512 512 5120"
dir="${TMPDIR:-/tmp}/kc-bench-seal"
cold=fadvise
[ -w /proc/sys/vm/drop_caches ] && cold=drop_caches
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --cold) cold="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$cold" in drop_caches|fadvise) ;; *) echo "run.sh: --cold drop_caches|fadvise" >&2; exit 2 ;; esac
for b in "$initwarm" "$bench"; do
  [ -x "$b" ] || { echo "run.sh: $b missing: ./scripts/build.sh initwarm bench_seal" >&2; exit 1; }
done

fp=0123456789abcdef
owner=bench
root="$dir/root"
staging="$root/v1/.staging/$fp-$owner"
published="$root/v1/$fp"
local_dir="$dir/local"
view="$dir/run/view"
logs="$dir/logs"
results="$(mktemp)"
trap 'rm -rf "$dir"; rm -f "$results"' EXIT

load() { cut -d' ' -f1 /proc/loadavg; }

# prime SRC TEMP: drop SRC's pages (cold) or read it once (warm).
prime() {
  if [ "$2" = warm ]; then
    "$bench" --read "$1" >/dev/null
  elif [ "$cold" = drop_caches ]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
  else
    "$bench" --drop "$1"
  fi
}

# timed NAME CMD...: runs CMD (output to $logs/NAME.log); sets wall, cpu, ld.
timed() {
  local name=$1 t0 t1 rc=0
  shift
  ld=$(load)
  t0=$EPOCHREALTIME
  /usr/bin/time -f '%U %S' -o "$logs/$name.time" "$@" >"$logs/$name.log" 2>&1 || rc=$?
  t1=$EPOCHREALTIME
  if [ "$rc" -ne 0 ]; then
    echo "run.sh: $name failed (exit $rc):" >&2
    tail -5 "$logs/$name.log" >&2
    exit 1
  fi
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  cpu=$(awk '{ printf "%.2f", $1 + $2 }' "$logs/$name.time")
}

# record SIZE RUN TEMP TOOL NOTE: one row of the results (uses wall, cpu, ld).
record() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$files" "$bytes" \
    "$wall" "$cpu" "$ld" "$5" >>"$results"
  awk -F'\t' -v OFS='\t' 'END { printf "  %-5s %-4s %-12s %7.2f s %7.0f MiB/s %8.0f files/s  cpu %6.2f s  load %s  %s\n",
    $3, $2, $4, $7, $6 / 1048576 / $7, $5 / $7, $8, $9, $10 }' "$results"
}

# unseal: put the published tree back in staging, as before the seal.
unseal() {
  mv "$published" "$staging"
  rm -f "$staging/READY" "$staging/manifest.json"
  "$initwarm" prepare --root "$root" --fingerprint "$fp" --job-uid "$owner" --view "$dir/warmup-view" >/dev/null
}

echo "bench/seal/run.sh: sizes ${sizes} MiB, cold = ${cold}, dir ${dir}"
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) memory"
echo "disk: $(df -hT "$(dirname "$dir")" | awk 'NR == 2 { print $1, $2, $3 }'); $(lsblk -dno NAME,SIZE,ROTA,MODEL "$(df "$(dirname "$dir")" | awk 'NR == 2 { print $1 }')" 2>/dev/null | sed 's/  */ /g') (rota = rotational flag)"
echo "initwarm from commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown), $(cp --version | head -1)"
run=0
for size in $sizes; do
  run=$((run + 1))
  rm -rf "$dir"
  mkdir -p "$logs" "$local_dir" "$(dirname "$view")"
  "$initwarm" prepare --root "$root" --fingerprint "$fp" --job-uid "$owner" --view "$dir/warmup-view" >/dev/null
  "$bench" --only-tree --size-mib "$size" --dir "$staging" >/dev/null
  read -r files bytes < <("$bench" --read "$staging" | jq -r '"\(.files) \(.bytes)"')
  echo "run $run: ${size} MiB tree, $files files, $bytes bytes"
  for temp in cold warm; do
    [ "$temp" = warm ] && unseal
    prime "$staging" "$temp"
    timed read "$bench" --read "$staging"
    record "$size" "$run" "$temp" read ""
    prime "$staging" "$temp"
    timed seal "$initwarm" seal --root "$root" --fingerprint "$fp" --job-uid "$owner"
    record "$size" "$run" "$temp" seal "$(grep "^{" "$logs/seal.log" | jq -c .durations | tr -d '"')"
    prime "$published" "$temp"
    timed verify "$initwarm" verify --root "$root" --fingerprint "$fp" --level Checksums \
      --no-quarantine
    record "$size" "$run" "$temp" verify ""
    prime "$published" "$temp"
    timed cp "cp" -a "$published" "$local_dir/cp"
    record "$size" "$run" "$temp" "cp -a" ""
    rm -rf "$local_dir/cp"
    for level in Manifest Checksums; do
      prime "$published" "$temp"
      timed wait "$initwarm" wait --root "$root" --fingerprint "$fp" --no-probe --mode Copy \
        --verify "$level" --view "$view" --local-dir "$local_dir" --timeout 1h
      tool="wait Copy"
      [ "$level" = Checksums ] && tool="wait Copy+C"
      record "$size" "$run" "$temp" "$tool" "waitedMs $(grep "^{" "$logs/wait.log" | jq .waitedMs)"
      rm -rf "$local_dir"/copy-* "$view"
    done
  done
done
rm -rf "$dir"

# The table: absolute figures and each tool's ratio to its yardstick.
echo
echo "## seal, verify and wait --mode Copy against a raw read and cp -a ($(date -u +%Y-%m-%dT%H:%MZ), cold = $cold)"
awk -F'\t' '
  { key = $2 SUBSEP $3; mbs = $6 / 1048576 / $7
    if ($4 == "read") base_read[key] = mbs
    if ($4 == "cp -a") base_cp[key] = mbs
    row[NR] = $0; speed[NR] = mbs }
  END {
    printf "| size | run | pass | command | s | MiB/s | files/s | CPU s | ratio | load | notes |\n"
    printf "|---|---|---|---|---|---|---|---|---|---|---|\n"
    for (i = 1; i <= NR; i++) {
      split(row[i], f, "\t"); key = f[2] SUBSEP f[3]; ratio = ""
      if (f[4] == "seal" || f[4] == "verify") ratio = sprintf("%s/read %.2f", f[4], speed[i] / base_read[key])
      if (f[4] ~ /^wait/) ratio = sprintf("/cp -a %.2f", speed[i] / base_cp[key])
      printf "| %.1f GiB | %s | %s | %s | %.2f | %.0f | %.0f | %.2f | %s | %s | %s |\n",
        f[6] / 1073741824, f[2], f[3], f[4], f[7], speed[i], f[5] / f[7], f[8], ratio, f[9], f[10]
    }
  }' "$results"
[ -n "$out" ] && cp "$results" "$out"
exit 0
