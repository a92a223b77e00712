// Package wrapper holds no code: it exists so this directory is a Go module
// from which tests/cluster/build.sh builds k8s.io/kubernetes/cmd/... binaries.
package wrapper
