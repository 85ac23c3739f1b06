package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// jetbake plan says once which path each release's router stage takes on
// each kind of node when the release has a cross build base or a forced
// path, and says nothing new otherwise.
func TestPlanBuildPath(t *testing.T) {
	path := matrixCopy(t, func(doc map[string]any) {
		releaseOf(doc, 3)["cross_build_base"] = map[string]any{"image": "registry.example.com/tei-cross:cuda13.0",
			"platform": "linux/amd64", "cuda": "13.0", "cuda_target": "sbsa-linux"}
		releaseOf(doc, 2)["build_path"] = "qemu"
	})
	r := run(t, "plan", "--matrix", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "build path:   amd64 nodes: cross in registry.example.com/tei-cross:cuda13.0 (targets/sbsa-linux), the routers compiled on linux/amd64 and run under QEMU only for the smoke run; arm64 nodes: native")
	require.Contains(t, r.stdout, "build path:   amd64 nodes: QEMU (build_path); arm64 nodes: native")
	// The shipped matrix's recipe, and JetPack 5's QEMU with its reason.
	require.Contains(t, r.stdout, "build path:   amd64 nodes: cross in the base jetbake's Dockerfile-cross-base builds FROM nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04 (cuda-cross-aarch64-12-6, GCC 11, targets/aarch64-linux),")
	require.Contains(t, r.stdout, "build path:   amd64 nodes: QEMU, as JetPack 5.1.2 has no cross build recipe (NVIDIA supports cross development for Jetson (arm64-Jetson) only on an Ubuntu 22.04 host")
	require.Equal(t, 5, strings.Count(r.stdout, "build path:"), "every release says its path")

	r = run(t, "plan", "--matrix", path, "--release", "jetpack7.0", "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var out struct {
		Releases []struct {
			CrossBuildBase string `json:"cross_build_base"`
			CUDATargetDir  string `json:"cuda_target_dir"`
		} `json:"releases"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.Len(t, out.Releases, 1)
	require.Equal(t, "registry.example.com/tei-cross:cuda13.0", out.Releases[0].CrossBuildBase)
	require.Equal(t, "sbsa-linux", out.Releases[0].CUDATargetDir)
}

// jetbake build refuses a --build-path it does not know before it connects
// to BuildKit, naming the values it takes.
func TestBuildPathFlag(t *testing.T) {
	path := matrixCopy(t, func(map[string]any) {})
	r := run(t, "build", "--matrix", path, "--build-path", "native")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, `--build-path "native": use auto, cross or qemu`)
}

// A declared JetPack 7.3 (CUDA 13.3) without cross_build_base: plan says
// it builds under QEMU on amd64 nodes, because jetbake's recipe has no
// CUDA 13.3 devel image, and what would give it the cross path.
func TestPlanBuildPathOfDeclaredRelease(t *testing.T) {
	path := matrixCopy(t, func(doc map[string]any) {
		rel := map[string]any{}
		for k, v := range releaseOf(doc, 4) {
			rel[k] = v
		}
		rel["name"], rel["jetpack"], rel["l4t"], rel["cuda"], rel["tier"] = "jetpack7.3", "7.3", "39.3.0", "13.3", "candidate"
		rel["build_base"], rel["runtime_base"] = "nvcr.io/nvidia/cuda:13.3.0-devel-ubuntu24.04", "nvcr.io/nvidia/cuda:13.3.0-runtime-ubuntu24.04"
		delete(rel, "cross_build_base")
		doc["releases"] = append(doc["releases"].([]any), rel)
		var facts any
		require.NoError(t, json.Unmarshal([]byte(`{"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04",
			"flavour": "sbsa", "rule": "driver-cuda", "sms": ["8.7", "11.0"],
			"driver_dirs": [{"dir": "/opt/nvidia/l4t-gpu-libs/nvgpu", "family": "Orin", "driver": {"name": "nvgpu", "nodes": [["/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl"], ["/dev/nvmap"]]}},
			{"dir": "/opt/nvidia/l4t-gpu-libs/openrm", "family": "Thor", "driver": {"name": "OpenRM", "nodes": [["/dev/nvidiactl"], ["/dev/nvidia0"]]}}]}]}`), &facts))
		doc["facts"] = facts
	})
	r := run(t, "plan", "--matrix", path, "--release", "jetpack7.3")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "facts:        rests on declared facts (JetPack 7.3, in the matrix) (io.jetbake.facts=declared)")
	require.Contains(t, r.stdout, "build path:   amd64 nodes: QEMU, as jetbake's cross build recipe has no CUDA 13.3 devel image for JetPack 7 "+
		"(it has nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04, nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04; declare a cross_recipes row that lists one, "+
		"or name a cross_build_base image of your own); arm64 nodes: native")
}
