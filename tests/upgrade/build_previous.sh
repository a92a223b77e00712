#!/usr/bin/env bash
# Builds the previous release (tests/upgrade/previous-release.env) from this
# repository's git history, as HEAD is built: scripts/build.sh for the
# operator and initwarm, then that release's scripts/build-images.sh. Keeps
# in a cache directory, once per machine (a release never changes):
#   operator.tar, initwarm.tar   its images, tagged kernelcache.local/<n>:<its version>
#   chart/                       its charts/kernelcache, links resolved
# and prints that directory. ccache (scripts/build.sh) makes the build cheap
# when the release's sources were compiled before.
# Usage: tests/upgrade/build_previous.sh <repo root>
set -euo pipefail
root=$(cd "$1" && pwd)
source "$root/tests/upgrade/previous-release.env"
source "$root/tests/cluster/versions.sh"
out="$KC_CACHE_DIR/releases/$KC_PREVIOUS_VERSION-${KC_PREVIOUS_COMMIT:0:12}"
if [ -f "$out/done" ]; then
  echo "$out"
  exit 0
fi
git -C "$root" cat-file -e "$KC_PREVIOUS_COMMIT^{commit}" 2>/dev/null || {
  echo "build_previous.sh: commit $KC_PREVIOUS_COMMIT (release $KC_PREVIOUS_VERSION) is not in this" \
    "clone's history; fetch main's full history (not a shallow clone)" >&2
  exit 1
}
work=$(mktemp -d /tmp/kc-previous.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
git -C "$root" archive "$KC_PREVIOUS_COMMIT" | tar -x -C "$work/src"
echo "build_previous.sh: building release $KC_PREVIOUS_VERSION (${KC_PREVIOUS_COMMIT:0:7}) in $work" >&2
(cd "$work/src" && KC_BUILD_DIR=build ./scripts/build.sh kernelcache-operator initwarm >&2)
(cd "$work/src" && KC_BUILD_DIR=build ./scripts/build-images.sh --no-build operator initwarm >&2)
rm -rf "$out.tmp" && mkdir -p "$out.tmp"
for n in operator initwarm; do
  python3 "$root/images/oci_image.py" retag "$work/src/build/images/$n.tar" \
    --name "kernelcache.local/$n:$KC_PREVIOUS_VERSION" --out "$out.tmp/$n.tar" >&2
done
cp -rL "$work/src/charts/kernelcache" "$out.tmp/chart"
touch "$out.tmp/done"
rm -rf "$out" && mv "$out.tmp" "$out"
echo "$out"
