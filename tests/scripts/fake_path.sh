# Sourced by the script tests (after setting $root, the repository): a
# scratch directory $tmp (removed on exit), a PATH of only $tmp/bin, and
# helpers to fill it.
#   under_test NAME     $script = scripts/NAME, which must parse; no
#                       KC_BUILD_DIR from the caller's environment
#   real TOOL...        links the real TOOL into $tmp/bin
#   fake NAME <<'BODY'  writes an executable bash script NAME from stdin
#   fail MESSAGE        counts a failure; finish prints the verdict and exits
# Fakes append what they were called with to $CALLS ("name arg arg").
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
export CALLS="$tmp/calls"
fails=0
bash_bin=$(command -v bash)
under_test() {
  script="$root/scripts/$1"
  unset KC_BUILD_DIR
  bash -n "$script" || fail "scripts/$1 does not parse"
}
real() {
  local t
  for t in "$@"; do ln -sf "$(command -v "$t")" "$tmp/bin/$t"; done
}
fake() {
  { echo "#!$bash_bin"; cat; } >"$tmp/bin/$1"
  chmod +x "$tmp/bin/$1"
}
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
finish() {
  if [ "$fails" -gt 0 ]; then
    echo "$1: $fails failure(s)"
    exit 1
  fi
  echo "$1: ok"
}
# run SCRIPT ARGS...: runs it with PATH=$tmp/bin; sets $out (stdout and
# stderr), $rc and $calls (the fakes' calls, one per line).
run() {
  : >"$CALLS"
  out=$(PATH="$tmp/bin" "$bash_bin" "$@" 2>&1)
  rc=$?
  calls=$(cat "$CALLS")
}
