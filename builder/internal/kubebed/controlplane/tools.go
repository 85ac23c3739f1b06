//go:build tools

// Package controlplane pins the Kubernetes control plane (kube-apiserver,
// kube-controller-manager, kube-scheduler, from k8s.io/kubernetes) and etcd
// (go.etcd.io/etcd/server) that the fleet test runs. It is its own module so
// that Kubernetes' dependencies never enter jetbake's go.mod, where BuildKit
// pins its own k8s.io versions; `make deps` builds bin/kube/ from here.
// k8s.io/kubernetes is not meant to be required by another module: its
// go.mod replaces its staging modules (k8s.io/api, k8s.io/client-go, ...)
// with folders of its own tree, so this go.mod replaces each of them with the
// published module of the same release (v0.37.2 for v1.37.2).
package controlplane

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
