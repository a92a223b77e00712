#!/usr/bin/env bash
# scripts/release-check.sh: passes on this repository; on a copy whose
# Chart.yaml, CHANGELOG.md or VERSION disagree it fails naming the fix.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
fail() { echo "FAIL: $*"; exit 1; }
out=$("$root/scripts/release-check.sh" "$root" 2>&1) || fail "release-check on the repository: $out"
version=$(cat "$root/VERSION")
grep -qF "release-check: $version" <<<"$out" || fail "no summary: $out"
# build-images.sh tags every image with VERSION (and :dev for local tests).
grep -q 'VERSION' "$root/scripts/build-images.sh" || fail "build-images.sh does not read VERSION"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy() {
  rm -rf "$tmp/r" && mkdir -p "$tmp/r/charts/kernelcache" "$tmp/r/tests/upgrade"
  cp "$root/VERSION" "$root/CHANGELOG.md" "$tmp/r/"
  cp -r "$root/deploy" "$tmp/r/"
  cp "$root/charts/kernelcache/Chart.yaml" "$tmp/r/charts/kernelcache/"
  cp "$root/tests/upgrade/previous-release.env" "$tmp/r/tests/upgrade/"
}
expect_fail() {  # <what> <message fragment>
  local out
  if out=$("$root/scripts/release-check.sh" "$tmp/r" 2>&1); then fail "$1: accepted"; fi
  grep -qF -- "$2" <<<"$out" || fail "$1: message lacks '$2': $out"
}
copy && "$root/scripts/release-check.sh" "$tmp/r" >/dev/null || fail "the copy does not pass"
copy && sed -i 's/^version: .*/version: 9.9.9/' "$tmp/r/charts/kernelcache/Chart.yaml"
expect_fail "chart version" "Chart.yaml version is '9.9.9'"
copy && sed -i 's/^appVersion: .*/appVersion: "0.0.1"/' "$tmp/r/charts/kernelcache/Chart.yaml"
expect_fail "appVersion" "Chart.yaml appVersion is '0.0.1'"
copy && sed -i 's|operator:[0-9.]*|operator:latest|' "$tmp/r/deploy/operator.yaml"
expect_fail "deploy/ image tag" "deploy/ names ghcr.io/kernelcache/operator:latest: tag it $version"
copy && echo 7.0.0 >"$tmp/r/VERSION"
expect_fail "VERSION bumped alone" "CHANGELOG.md has no section '## 7.0.0'"
copy && echo 'seven' >"$tmp/r/VERSION"
expect_fail "not semver" "is not a semantic version"
copy && sed -i "s/^KC_PREVIOUS_VERSION=.*/KC_PREVIOUS_VERSION=$version/" "$tmp/r/tests/upgrade/previous-release.env"
expect_fail "previous release = this one" "must be the release before"
echo "ok: release-check passes here and refuses 6 disagreements"
