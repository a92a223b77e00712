#!/usr/bin/env bash
# bench/seal/ab_seal.sh: `initwarm seal` of two builds, alternately, on the
# same kind of tree, so that a change to seal is measured against the code
# before it under the same load (on a shared machine, minutes apart is not
# the same load).
#
#   bench/seal/ab_seal.sh OLD_INITWARM NEW_INITWARM [--size-mib 512] [--rounds 3]
#                         [--dir /tmp/kc-ab-seal]
#
# Per round and binary: a "fresh" seal (a new tree written without fsync, as
# a warmup leaves it) and a "warm" re-seal (the same tree, clean and in the
# page cache, put back into staging). Prints one line per seal: wall seconds
# (outside), seal's own durations, the 1-minute load.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench="${KC_BUILD_DIR:-$here/../../build}/bench/seal/bench_seal"
[ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
old="$1"
new="$2"
shift 2
size=512
rounds=3
dir="${TMPDIR:-/tmp}/kc-ab-seal"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size-mib) size="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    *) echo "ab_seal.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
fp=0123456789abcdef
root="$dir/root"
staging="$root/v1/.staging/$fp-bench"
trap 'rm -rf "$dir"' EXIT

prepare() { "$new" prepare --root "$root" --fingerprint "$fp" --job-uid bench --view "$dir/v" >/dev/null; }

# seal_timed LABEL BINARY: one seal, one line.
seal_timed() {
  local t0 t1 out
  t0=$EPOCHREALTIME
  out=$("$2" seal --root "$root" --fingerprint "$fp" --job-uid bench)
  t1=$EPOCHREALTIME
  printf '%-6s %-5s %6.2f s  %s  load %s\n' "$1" "$3" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
    "$(jq -c .durations <<<"$out" | tr -d '"')" "$(cut -d' ' -f1 /proc/loadavg)"
}

echo "ab_seal.sh: ${size} MiB trees, ${rounds} rounds; old $old, new $new"
for ((r = 1; r <= rounds; r++)); do
  for which in old new; do
    bin=${!which}
    rm -rf "$dir"
    sync
    prepare
    "$bench" --only-tree --fresh --size-mib "$size" --dir "$staging" >/dev/null
    seal_timed fresh "$bin" "$which"
    mv "$root/v1/$fp" "$staging"
    rm -f "$staging/READY" "$staging/manifest.json"
    prepare
    "$bench" --read "$staging" >/dev/null
    seal_timed warm "$bin" "$which"
  done
done
