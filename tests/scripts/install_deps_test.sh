#!/usr/bin/env bash
# scripts/install-deps.sh's own test, against fake dpkg-query, apt-get, sudo,
# id and go on a PATH of nothing else: it installs exactly the missing
# packages (through sudo only when not root), touches apt nothing when all
# are present, and refuses to finish without Go.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/scripts/fake_path.sh
. "$root/tests/scripts/fake_path.sh"

under_test install-deps.sh
real grep
# dpkg-query: a package is installed unless listed in $MISSING.
fake dpkg-query <<'FAKE'
pkg=${!#}
case " $MISSING " in
  *" $pkg "*) echo -n "unknown ok not-installed" ;;
  *) echo -n "install ok installed" ;;
esac
FAKE
fake apt-get <<'FAKE'
echo "apt-get $*" >>"$CALLS"
FAKE
fake sudo <<'FAKE'
echo "sudo $1" >>"$CALLS"
"$@"
FAKE
fake id <<'FAKE'
echo "${FAKE_UID:-0}"
FAKE
fake go <<'FAKE'
echo "go version go1.24.0 linux/amd64"
FAKE

# 1. Everything present: nothing installed, exit 0.
MISSING="" run "$script"
[ "$rc" -eq 0 ] || fail "exit $rc with every package present: $out"
[ -z "$calls" ] || fail "apt was used with every package present: $calls"
echo "$out" | grep -q "all Debian packages present" || fail "no 'all present' line: $out"

# 2. Two missing, as root: one update, one install of exactly those two.
MISSING="cmake socat" run "$script"
[ "$rc" -eq 0 ] || fail "exit $rc after installing: $out"
want="apt-get update -q
apt-get install -y -q --no-install-recommends cmake socat"
[ "$calls" = "$want" ] || fail "apt calls as root: '$calls'"
echo "$out" | grep -q "installing cmake socat" || fail "the missing packages are not named: $out"

# 3. Not root: the same through sudo.
MISSING="ninja-build" FAKE_UID=1000 run "$script"
[ "$rc" -eq 0 ] || fail "exit $rc as a user: $out"
want="sudo apt-get
apt-get update -q
sudo apt-get
apt-get install -y -q --no-install-recommends ninja-build"
[ "$calls" = "$want" ] || fail "apt calls as a user: '$calls'"

# 4. No Go: exit 1 naming it.
rm "$tmp/bin/go"
MISSING="" run "$script"
[ "$rc" -eq 1 ] || fail "exit $rc without Go"
echo "$out" | grep -q "Go is required" || fail "Go is not named: $out"

# 5. apt failing fails the script.
fake apt-get <<'FAKE'
echo "apt-get $*" >>"$CALLS"
exit 100
FAKE
fake go <<'FAKE'
true
FAKE
MISSING="cmake" run "$script"
[ "$rc" -ne 0 ] || fail "exit 0 although apt-get failed"

finish install_deps_test
