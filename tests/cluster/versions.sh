# Pinned versions and cache paths of the local control plane.
# Sourced by build.sh and cluster.sh; change a version here and the next
# build.sh run builds it into a new cache directory (old ones stay usable).
# shellcheck shell=bash

KC_ETCD_VERSION=v3.6.16      # go.etcd.io/etcd/server/v3 (wrapper: etcd-wrapper/)
KC_K8S_VERSION=v1.34.4       # k8s.io/kubernetes (wrapper: k8s-wrapper/)
KC_K8S_BUILD_DATE=2026-02-10T12:53:36Z  # the module's publication time
KC_CRICTL_VERSION=v1.34.0    # sigs.k8s.io/cri-tools/cmd/crictl (the real node's CRI client)
KC_KWOK_VERSION=v0.7.0       # sigs.k8s.io/kwok/cmd/kwok
KC_KWOK_PATCHLEVEL=kc1       # + tests/cluster/kwok-patches/*.patch (bump when they change)
KC_KWOK_BUILD="$KC_KWOK_VERSION+$KC_KWOK_PATCHLEVEL"  # what --version reports, the cache dir's name
KC_HELM_VERSION=v3.19.5      # helm.sh/helm/v3/cmd/helm

KC_CACHE_DIR="${KC_CACHE_DIR:-$HOME/.cache/kernelcache}"
KC_ETCD_DIR="$KC_CACHE_DIR/bin/etcd-$KC_ETCD_VERSION"
KC_K8S_DIR="$KC_CACHE_DIR/bin/kubernetes-$KC_K8S_VERSION"
KC_K8S_NODE_DIR="$KC_CACHE_DIR/bin/kubernetes-node-$KC_K8S_VERSION"  # kubelet, kube-proxy
KC_KWOK_DIR="$KC_CACHE_DIR/bin/kwok-$KC_KWOK_BUILD"
KC_HELM_DIR="$KC_CACHE_DIR/bin/helm-$KC_HELM_VERSION"

KC_GO="${KC_GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[[ -x "$KC_GO" ]] || KC_GO=/usr/local/go/bin/go
