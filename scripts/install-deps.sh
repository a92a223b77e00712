#!/usr/bin/env bash
# Installs the build and test dependencies from Debian packages. Used by the
# README's commands and by CI alike. Idempotent: a second run is quick.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libcpprest-dev libboost-dev nlohmann-json3-dev libyaml-cpp-dev libssl-dev
  libgtest-dev libgmock-dev googletest
  clang-format clang-tidy
  # scripts/fuzz.sh: clang and its libFuzzer/sanitizer runtimes
  clang-14 libclang-rt-14-dev
  openssl curl procps psmisc ccache iproute2 util-linux
  # the real node (tests/cluster/node.sh) and the images (scripts/build-images.sh)
  containerd runc containernetworking-plugins iptables conntrack socat busybox-static python3
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi
command -v go >/dev/null || { echo "install-deps: Go is required (go1.24 or newer) to build the local control plane" >&2; exit 1; }
