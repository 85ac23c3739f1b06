// Package buildtest holds what the tests of imagebuild and its packages
// share: a plan shaped like the shipped matrix's, a node's workers.
package buildtest

import (
	"fmt"

	"github.com/containerd/platforms"
	gateway "github.com/moby/buildkit/frontend/gateway/client"

	"github.com/jetbake/jetbake/builder/plan"
)

const (
	// Repo is the plan's repository.
	Repo = "ghcr.io/jetbake/text-embeddings-router"
	// Epoch is the tests' SOURCE_DATE_EPOCH.
	Epoch = 1767225600 // 2026-01-01T00:00:00Z
)

// Plan is a two-release plan shaped like the shipped matrix's.
func Plan() *plan.Plan {
	return &plan.Plan{
		Router: plan.Router{
			Name:       "text-embeddings-router",
			Version:    "1.8.0",
			Context:    "https://github.com/huggingface/text-embeddings-inference.git#v1.8.0",
			Dockerfile: "/repo/dockerfiles/Dockerfile-jetson",
			Target:     "router",
			Output:     "/usr/local/bin/text-embeddings-router",
			Smoke:      []string{"--version"},
		},
		Repository: Repo,
		Releases: []plan.Release{
			{
				Name: "jetpack6.2", JetPack: "6.2", L4T: "36.4.3", CUDA: "12.6", Ubuntu: "22.04", Tier: "candidate",
				Platform:    plan.Platform,
				BuildBase:   "nvcr.io/nvidia/l4t-jetpack:r36.4.0",
				RuntimeBase: "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime",
				Targets: []plan.Target{
					{SM: "8.7", Arch: "sm_87", ComputeCap: "87", Binary: "router-87", Path: "/usr/local/bin/router-87"},
				},
				Tags:        []string{Repo + ":1.8.0-jetpack6.2", Repo + ":jetpack6"},
				BuildArgs:   map[string]string{"EXTRA": "yes"},
				Labels:      map[string]string{"org.opencontainers.image.version": "1.8.0"},
				Annotations: map[string]string{"org.opencontainers.image.version": "1.8.0", "io.jetbake.release": "jetpack6.2"},
			},
			{
				Name: "jetpack7.2", JetPack: "7.2", L4T: "39.2.0", CUDA: "13.2", Ubuntu: "24.04", Tier: "evaluate-later",
				Platform:    plan.Platform,
				BuildBase:   "nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04",
				RuntimeBase: "nvcr.io/nvidia/cuda:13.2.0-runtime-ubuntu24.04",
				Targets: []plan.Target{
					{SM: "8.7", Arch: "sm_87", ComputeCap: "87", Binary: "router-87", Path: "/usr/local/bin/router-87"},
					{SM: "11.0", Arch: "sm_110", ComputeCap: "110", Binary: "router-110", Path: "/usr/local/bin/router-110"},
				},
				Tags: []string{Repo + ":1.8.0-jetpack7.2", Repo + ":jetpack7"},
			},
		},
	}
}

// Workers is a node's worker list as the gateway gives it, each worker's
// platforms native first.
func Workers(lists ...[]string) []gateway.WorkerInfo {
	out := make([]gateway.WorkerInfo, len(lists))
	for i, ps := range lists {
		out[i].ID = fmt.Sprint(i)
		for _, p := range ps {
			out[i].Platforms = append(out[i].Platforms, platforms.MustParse(p))
		}
	}
	return out
}
