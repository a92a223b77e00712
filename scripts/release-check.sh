#!/usr/bin/env bash
# The release's version is VERSION at the repository root (semantic
# versioning); everything else derives from it. Checks, and exits 1 naming
# what disagrees:
#  - charts/kernelcache/Chart.yaml: version and appVersion equal VERSION;
#  - deploy/*.yaml name the images ghcr.io/kernelcache/*:<VERSION>;
#  - CHANGELOG.md has a section "## <VERSION>" (what changed for users,
#    what to do on upgrade, what was deprecated);
#  - tests/upgrade/previous-release.env names an older version.
# scripts/build-images.sh tags the images with VERSION.
# Usage: scripts/release-check.sh [repo root]   (default: this repository)
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
bad=0
problem() { echo "release-check: $*" >&2; bad=1; }
version=$(tr -d '[:space:]' <"$root/VERSION" 2>/dev/null || true)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  { echo "release-check: VERSION '$version' is not a semantic version (e.g. 0.2.0)" >&2; exit 1; }
chart="$root/charts/kernelcache/Chart.yaml"
cv=$(sed -n 's/^version:[[:space:]]*//p' "$chart" | tr -d '"'"'"' ')
av=$(sed -n 's/^appVersion:[[:space:]]*//p' "$chart" | tr -d '"'"'"' ')
[ "$cv" = "$version" ] || problem "Chart.yaml version is '$cv', VERSION is '$version': set version: $version"
[ "$av" = "$version" ] || problem "Chart.yaml appVersion is '$av', VERSION is '$version': set appVersion: \"$version\""
while read -r ref; do
  [ "${ref##*:}" = "$version" ] || problem "deploy/ names $ref: tag it $version (VERSION)"
done < <(cat "$root"/deploy/*.yaml 2>/dev/null | grep -o 'ghcr.io/kernelcache/[a-z-]*:[^" ]*' || true)
grep -qxF "## $version" "$root/CHANGELOG.md" 2>/dev/null ||
  problem "CHANGELOG.md has no section '## $version': add what changed, what to do on upgrade, what was deprecated"
prev=$(sed -n 's/^KC_PREVIOUS_VERSION=//p' "$root/tests/upgrade/previous-release.env" 2>/dev/null || true)
[ -n "$prev" ] && [ "$prev" != "$version" ] ||
  problem "tests/upgrade/previous-release.env: KC_PREVIOUS_VERSION '$prev' must be the release before $version"
[ "$bad" = 0 ] && echo "release-check: $version (chart, appVersion, CHANGELOG, previous release $prev)"
exit "$bad"
