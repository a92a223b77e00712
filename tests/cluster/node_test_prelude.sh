# Sourced by the shell tests that run on the real node with Helm:
#   source "$root/tests/cluster/node_test_prelude.sh" <image>...
# sets helm, kubectl and KC_IMAGES_DIR (default $root/build/images) and
# fails the test, saying what to run, when a tool or image archive is
# missing or it is not root. Needs $root (the repository root). Also
# defines phase, until_ok and until_output (below), the helpers of those
# tests.
source "$root/tests/cluster/versions.sh"
helm="$KC_HELM_DIR/helm"
kubectl="$KC_K8S_DIR/kubectl"
[ -x "$helm" ] && [ -x "$kubectl" ] || { echo "FAIL: run tests/cluster/build.sh first"; exit 1; }
export KC_IMAGES_DIR="${KC_IMAGES_DIR:-$root/build/images}"
for n in "$@"; do
  [ -f "$KC_IMAGES_DIR/$n.tar" ] || { echo "FAIL: $KC_IMAGES_DIR/$n.tar missing: run scripts/build-images.sh"; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "FAIL: the real node needs root"; exit 1; }

# phase <text>: "== [<seconds since $t_all> s] <text>" ($t_all: the test's
# start, set by the test).
phase() { echo "== [$(($(date +%s) - t_all)) s] $*"; }

# until_ok <what> <seconds> <command...>: polls the condition every second
# (a deadline, never a sleep standing in for it); on the deadline calls the
# test's own fail (it prints what the test needs to see, then exits).
until_ok() {
  local what=$1 secs=$2 i
  shift 2
  for ((i = 0; i < secs; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 1
  done
  fail "timed out after ${secs}s waiting for $what"
}

# until_output <tries> <command...>: runs the command once a second until it
# prints something (printed), at most <tries> times; 1 if it never did.
until_output() {
  local tries=$1 out
  shift
  for _ in $(seq "$tries"); do
    out=$("$@" 2>/dev/null || true)
    [ -n "$out" ] && echo "$out" && return 0
    sleep 1
  done
  return 1
}
