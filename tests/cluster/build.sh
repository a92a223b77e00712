#!/usr/bin/env bash
# Builds the pinned control-plane binaries once into a cache keyed by version:
#   ${KC_CACHE_DIR:-$HOME/.cache/kernelcache}/bin/<component>-<version>/
# Components: etcd, kubernetes (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl), kubernetes-node (kubelet, kube-proxy, and
# crictl from cri-tools: the real node of `cluster.sh up --with-node`), kwok,
# helm. A component whose binaries exist and
# report the pinned version is skipped, so a warm run takes seconds.
#
# Usage: tests/cluster/build.sh [--check] [component...]   (default: all)
#   --check  only report what is missing (exit 1 if anything is).
#
# Needs only Go (go1.24+; go1.26 at /usr/local/go/bin/go) and the Go module
# proxy. GOPATH and GOCACHE stay in their default places so compiled packages
# are reused between runs. The first build of everything takes ~20-30 minutes
# on two cores; progress is printed every 30 seconds and the full compiler
# output goes to $KC_CACHE_DIR/logs/<component>.log.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.sh
source "$here/versions.sh"

check_only=0
components=()
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    etcd | kubernetes | kubernetes-node | kwok | helm) components+=("$arg") ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument '$arg' (components: etcd kubernetes kubernetes-node kwok helm)" >&2; exit 2 ;;
  esac
done
[[ ${#components[@]} -gt 0 ]] || components=(etcd kubernetes kubernetes-node kwok helm)

log() { echo "[build.sh $(date +%H:%M:%S)] $*"; }
die() { log "ERROR: $*" >&2; exit 1; }
fmt_dur() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# --- version checks: succeed when the cached binaries are the pinned ones ---
have_etcd() {
  [[ -x "$KC_ETCD_DIR/etcd" ]] || return 1
  [[ "$("$KC_ETCD_DIR/etcd" --version 2>/dev/null)" == *"etcd Version: ${KC_ETCD_VERSION#v}"$'\n'* ]]
}
have_kubernetes() {
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    [[ -x "$KC_K8S_DIR/$b" ]] || return 1
    [[ "$("$KC_K8S_DIR/$b" --version 2>/dev/null)" == "Kubernetes $KC_K8S_VERSION" ]] || return 1
  done
  [[ -x "$KC_K8S_DIR/kubectl" ]] || return 1
  [[ "$("$KC_K8S_DIR/kubectl" version --client -o json 2>/dev/null)" == *"\"gitVersion\": \"$KC_K8S_VERSION\""* ]]
}
have_kubernetes-node() {
  local b
  for b in kubelet kube-proxy; do
    [[ -x "$KC_K8S_NODE_DIR/$b" ]] || return 1
    [[ "$("$KC_K8S_NODE_DIR/$b" --version 2>/dev/null)" == "Kubernetes $KC_K8S_VERSION" ]] || return 1
  done
  [[ -x "$KC_K8S_NODE_DIR/crictl" ]] &&
    [[ "$("$KC_K8S_NODE_DIR/crictl" --version 2>/dev/null)" == "crictl version $KC_CRICTL_VERSION" ]]
}
have_kwok() {
  [[ -x "$KC_KWOK_DIR/kwok" && -f "$KC_KWOK_DIR/stages/pod-fast/pod-ready.yaml" ]] || return 1
  [[ "$("$KC_KWOK_DIR/kwok" --version 2>/dev/null)" == *"$KC_KWOK_BUILD "* ]]
}
have_helm() {
  [[ -x "$KC_HELM_DIR/helm" ]] &&
    [[ "$("$KC_HELM_DIR/helm" version --template '{{.Version}}' 2>/dev/null)" == "$KC_HELM_VERSION" ]]
}

if [[ $check_only == 1 ]]; then
  missing=0
  for c in "${components[@]}"; do
    if "have_$c"; then log "$c: ok"; else log "$c: MISSING"; missing=1; fi
  done
  exit $missing
fi

mkdir -p "$KC_CACHE_DIR/logs" "$KC_CACHE_DIR/work"
exec 9>"$KC_CACHE_DIR/build.lock"
if ! flock -n 9; then
  log "another build.sh holds $KC_CACHE_DIR/build.lock; waiting for it to finish..."
  flock 9
fi

# run_go <name> <total-packages-or-0> <estimate> <logfile> <command...>
# Runs a go build with -v in the background and prints progress every 30s.
run_go() {
  local name="$1" total="$2" estimate="$3" logf="$4"
  shift 4
  local start now n pid rc=0 last eta
  start=$(date +%s)
  log "$name: building (cold estimate: $estimate; warm: seconds). Log: $logf"
  "$@" >"$logf" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 30); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    kill -0 "$pid" 2>/dev/null || break
    now=$(date +%s)
    n=$(grep -cv -e '^go: ' -e '^#' "$logf" || true)
    last=$(tail -n 1 "$logf" | cut -c1-80)
    eta=""
    if [[ $total -gt 0 && $n -gt 100 && $n -lt $total ]]; then
      eta=", ~$(fmt_dur $(((total - n) * (now - start) / n))) left"
    fi
    if [[ $total -gt 0 ]]; then
      log "$name: $n/$total packages compiled, $(fmt_dur $((now - start))) elapsed$eta (last: $last)"
    else
      log "$name: $n packages compiled, $(fmt_dur $((now - start))) elapsed (last: $last)"
    fi
  done
  wait "$pid" || rc=$?
  if [[ $rc -ne 0 ]]; then
    log "$name: FAILED (exit $rc) after $(fmt_dur $(($(date +%s) - start))); last lines of $logf:"
    tail -n 40 "$logf" >&2
    return $rc
  fi
  log "$name: built in $(fmt_dur $(($(date +%s) - start)))"
}

# Copies a wrapper module into the cache work dir (the source tree is not
# written to) and prints its path.
stage_wrapper() {
  local src="$here/$1" dst="$KC_CACHE_DIR/work/$1"
  rm -rf "$dst"
  mkdir -p "$dst"
  cp "$src"/go.mod "$src"/*.go "$dst"/
  [[ -f "$src/go.sum" ]] && cp "$src/go.sum" "$dst/"
  echo "$dst"
}

count_deps() {  # <dir> <pkgs...>: number of non-standard packages to compile
  local dir="$1"
  shift
  (cd "$dir" && GOFLAGS=-mod=mod "$KC_GO" list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "$@" 2>/dev/null | grep -c . || true)
}

build_etcd() {
  local w out="$KC_ETCD_DIR.tmp"
  w="$(stage_wrapper etcd-wrapper)"
  log "etcd $KC_ETCD_VERSION: resolving modules..."
  local total
  total=$(count_deps "$w" .)
  rm -rf "$out"
  mkdir -p "$out"
  (cd "$w" && run_go "etcd $KC_ETCD_VERSION" "$total" "2-4 min" "$KC_CACHE_DIR/logs/etcd.log" \
    env GOFLAGS=-mod=mod "$KC_GO" build -v -trimpath -ldflags "-s -w" -o "$out/etcd" .)
  rm -rf "$KC_ETCD_DIR"
  mv "$out" "$KC_ETCD_DIR"
}

k8s_ldflags() {  # -X flags so --version and `kubectl version` report the pin
  local ld="-s -w" p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$KC_K8S_VERSION -X $p.gitMajor=$(echo "$KC_K8S_VERSION" | cut -d. -f1 | tr -d v)"
    ld+=" -X $p.gitMinor=$(echo "$KC_K8S_VERSION" | cut -d. -f2) -X $p.gitCommit=$KC_K8S_VERSION"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=$KC_K8S_BUILD_DATE"
  done
  echo "$ld"
}

# build_k8s_binaries <component> <dest-dir> <estimate> <cmd/...>: one go build
# from the k8s-wrapper module for all listed commands, so shared packages
# compile once (and, through GOCACHE, are shared between components).
build_k8s_binaries() {
  local comp="$1" dest="$2" estimate="$3" w out="$2.tmp" total ld
  shift 3
  local pkgs=()
  for p in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$p"); done
  ld="$(k8s_ldflags)"
  w="$(stage_wrapper k8s-wrapper)"
  log "$comp $KC_K8S_VERSION: resolving modules (first time: downloads ~300 modules)..."
  total=$(count_deps "$w" "${pkgs[@]}")
  rm -rf "$out"
  mkdir -p "$out"
  (cd "$w" && run_go "$comp $KC_K8S_VERSION" "$total" "$estimate" "$KC_CACHE_DIR/logs/$comp.log" \
    env GOFLAGS=-mod=mod "$KC_GO" build -v -trimpath -ldflags "$ld" -o "$out/" "${pkgs[@]}")
  rm -rf "$dest"
  mv "$out" "$dest"
}

build_kubernetes() {
  build_k8s_binaries kubernetes "$KC_K8S_DIR" "10-20 min on 2 cores (9 min measured)" \
    kube-apiserver kube-controller-manager kube-scheduler kubectl
}

# kubelet and kube-proxy (and crictl, which `down` uses to stop pods through
# the CRI): a separate directory, so clusters without a real node never need
# them; most packages come from the kubernetes build's GOCACHE.
build_kubernetes-node() {
  build_k8s_binaries kubernetes-node "$KC_K8S_NODE_DIR" "1-2 min after kubernetes, ~10 min cold" \
    kubelet kube-proxy
  local tmp="$KC_K8S_NODE_DIR.crictl"
  rm -rf "$tmp"
  run_go "crictl $KC_CRICTL_VERSION" 0 "1-5 min" "$KC_CACHE_DIR/logs/crictl.log" \
    env GOFLAGS= GOBIN="$tmp" "$KC_GO" install -v -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$KC_CRICTL_VERSION" \
    "sigs.k8s.io/cri-tools/cmd/crictl@$KC_CRICTL_VERSION"
  mv "$tmp/crictl" "$KC_K8S_NODE_DIR/crictl"
  rm -rf "$tmp"
}

build_kwok() {
  # kwok from its pinned module source with the patches in kwok-patches/ applied
  # (each says what it fixes); --version reports v<pin>+<patch level>.
  local out="$KC_KWOK_DIR.tmp" src="$KC_CACHE_DIR/work/kwok-src" dir p
  rm -rf "$out" "$src"
  mkdir -p "$out/stages/pod-fast"
  dir="$(GOFLAGS= "$KC_GO" mod download -json "sigs.k8s.io/kwok@$KC_KWOK_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$dir" && -d "$dir" ]] || die "kwok $KC_KWOK_VERSION: go mod download gave no source directory"
  cp -r "$dir" "$src"
  chmod -R u+w "$src"
  for p in "$here"/kwok-patches/*.patch; do
    (cd "$src" && git apply "$p") || die "kwok $KC_KWOK_VERSION: $p does not apply"
  done
  (cd "$src" && run_go "kwok $KC_KWOK_BUILD" 0 "5-8 min" "$KC_CACHE_DIR/logs/kwok.log" \
    env GOFLAGS= "$KC_GO" build -v -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KC_KWOK_BUILD#v}" \
    -o "$out/kwok" ./cmd/kwok)
  # kwok replaces its default pod stages when any pod Stage is configured;
  # cluster.sh re-adds these so extra stage files extend the defaults.
  cp "$src"/kustomize/stage/pod/fast/pod-*.yaml "$out/stages/pod-fast/"
  rm -rf "$src" "$KC_KWOK_DIR"
  mv "$out" "$KC_KWOK_DIR"
}

build_helm() {
  local out="$KC_HELM_DIR.tmp"
  rm -rf "$out"
  mkdir -p "$out"
  run_go "helm $KC_HELM_VERSION" 0 "4-6 min" "$KC_CACHE_DIR/logs/helm.log" \
    env GOFLAGS= GOBIN="$out" "$KC_GO" install -v -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$KC_HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
    "helm.sh/helm/v3/cmd/helm@$KC_HELM_VERSION"
  rm -rf "$KC_HELM_DIR"
  mv "$out" "$KC_HELM_DIR"
}

overall=$(date +%s)
log "Go: $("$KC_GO" version); cache: $KC_CACHE_DIR"
for c in "${components[@]}"; do
  if "have_$c"; then
    log "$c: cached and at the pinned version, skipping"
    continue
  fi
  "build_$c"
  if ! "have_$c"; then
    log "$c: built, but the binary does not report the pinned version; see $KC_CACHE_DIR/logs/$c.log" >&2
    exit 1
  fi
done
log "done in $(fmt_dur $(($(date +%s) - overall))): ${components[*]} (etcd $KC_ETCD_VERSION, kubernetes and kubernetes-node $KC_K8S_VERSION, kwok $KC_KWOK_BUILD, helm $KC_HELM_VERSION)"
