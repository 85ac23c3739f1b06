package plan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/dockerfiles"
)

// shippedMatrix parses the matrix the repository ships.
func shippedMatrix(t testing.TB) *matrix.Matrix {
	t.Helper()
	data, err := os.ReadFile("../../matrix.json")
	require.NoError(t, err)
	m, err := matrix.Parse(data)
	require.NoError(t, err)
	return m
}

const repo = "ghcr.io/jetbake/text-embeddings-router"

func TestPlanShippedMatrix(t *testing.T) {
	p, err := New(shippedMatrix(t))
	require.NoError(t, err)
	require.Equal(t, repo, p.Repository)
	require.Len(t, p.Releases, 5)
	require.Equal(t, Router{
		Name:          "text-embeddings-router",
		Version:       "1.9.3",
		Context:       "https://github.com/huggingface/text-embeddings-inference.git?ref=v1.9.3&checksum=06670157fb6c1523482219bdb2d1660277d38088",
		Dockerfile:    mustAbs(t, "dockerfiles/Dockerfile-jetson"),
		Target:        "router",
		RuntimeTarget: "runtime-base",
		Commit:        "06670157fb6c1523482219bdb2d1660277d38088",
		Output:        "/usr/local/bin/text-embeddings-router",
		Smoke:         []string{"--version"},
		Env:           map[string]string{"PORT": "80", "HUGGINGFACE_HUB_CACHE": "/data"},
		Cmd:           []string{"--json-output"},
		Ports:         []string{"80/tcp"},
	}, p.Router)

	tags := map[string][]string{}
	for _, r := range p.Releases {
		require.Equal(t, "linux/arm64", r.Platform)
		require.Equal(t, r.Labels, r.Annotations, r.Name)
		tags[r.Name] = r.Tags
	}
	require.Equal(t, map[string][]string{
		"jetpack5.1": {repo + ":1.9.3-jetpack5.1.2", repo + ":jetpack5.1.2", repo + ":jetpack5.1"},
		"jetpack6.1": {repo + ":1.9.3-jetpack6.1", repo + ":jetpack6.1"},
		"jetpack6.2": {repo + ":1.9.3-jetpack6.2", repo + ":jetpack6.2"},
		"jetpack7.0": {repo + ":1.9.3-jetpack7.0", repo + ":jetpack7.0"},
		"jetpack7.2": {repo + ":1.9.3-jetpack7.2", repo + ":jetpack7.2"},
	}, tags)
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	require.NoError(t, err)
	return abs
}

func TestPlanAnnotations(t *testing.T) {
	p, err := New(shippedMatrix(t))
	require.NoError(t, err)
	r, ok := p.Release("jetpack7.2")
	require.True(t, ok)
	require.Equal(t, map[string]string{
		"org.opencontainers.image.title":     "text-embeddings-router",
		"org.opencontainers.image.version":   "1.9.3",
		"org.opencontainers.image.source":    "https://github.com/jetbake/jetbake",
		"org.opencontainers.image.base.name": "nvcr.io/nvidia/cuda:13.2.0-runtime-ubuntu24.04",
		"io.jetbake.release":                 "jetpack7.2",
		"io.jetbake.jetpack":                 "7.2",
		"io.jetbake.l4t":                     "39.2.0",
		"io.jetbake.cuda":                    "13.2",
		"io.jetbake.ubuntu":                  "24.04",
		"io.jetbake.sm-targets":              "8.7,11.0",
		"io.jetbake.tier":                    "evaluate-later",
		"com.nvidia.cuda.version":            "13.2",
	}, r.Annotations)
	require.Equal(t, "nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04", r.BuildBase)
	require.Equal(t, []Target{
		{SM: "8.7", Arch: "sm_87", ComputeCap: "87", Binary: "router-87", Path: "/usr/local/bin/router-87",
			BuildArgs: map[string]string{"CARGO_FEATURES": "candle-cuda", "CUDA_LINKING": "static-linking"}},
		{SM: "11.0", Arch: "sm_110", ComputeCap: "110", Binary: "router-110", Path: "/usr/local/bin/router-110",
			BuildArgs: map[string]string{"CARGO_FEATURES": "candle-cuda", "CUDA_LINKING": "static-linking"}},
	}, r.Targets)

	legacy, _ := p.Release("jetpack5.1")
	require.Equal(t, "7.2,8.7", legacy.Annotations["io.jetbake.sm-targets"])
	require.Equal(t, "legacy", legacy.Tier)
	require.Equal(t, "sm_72", legacy.Targets[0].Arch)
	require.Equal(t, map[string]string{"CARGO_FEATURES": "candle-cuda-volta", "CUDA_LINKING": "static-linking"}, legacy.Targets[0].BuildArgs, "Xavier builds without flash-attention v2")
	require.Equal(t, map[string]string{"CARGO_FEATURES": "candle-cuda", "CUDA_LINKING": "static-linking"}, legacy.RuntimeBuildArgs, "the runtime stage gets the router's and the release's, no target's")
	require.Equal(t, map[string]string{"CARGO_FEATURES": "candle-cuda", "CUDA_LINKING": "static-linking"}, legacy.Targets[1].BuildArgs)
	require.Equal(t, map[string]string{"PORT": "80", "HUGGINGFACE_HUB_CACHE": "/data"}, p.Router.Env)
	require.Equal(t, []string{"--json-output"}, p.Router.Cmd)
	require.Equal(t, []string{"80/tcp"}, p.Router.Ports)
}

func TestPlanExtraLabelsAndAnnotations(t *testing.T) {
	m := shippedMatrix(t)
	m.Image.Labels = map[string]string{"org.opencontainers.image.licenses": "Apache-2.0"}
	m.Image.Annotations = map[string]string{"org.opencontainers.image.description": "TEI for Jetson"}
	m.Releases[1].BuildArgs = map[string]string{"RUSTFLAGS": "-C opt-level=3"}
	p, err := New(m, WithReleases("jetpack6.1"))
	require.NoError(t, err)
	r := p.Releases[0]
	require.Equal(t, "Apache-2.0", r.Labels["org.opencontainers.image.licenses"])
	require.NotContains(t, r.Annotations, "org.opencontainers.image.licenses")
	require.Equal(t, "TEI for Jetson", r.Annotations["org.opencontainers.image.description"])
	require.NotContains(t, r.Labels, "org.opencontainers.image.description")
	require.Equal(t, "jetpack6.1", r.Labels["io.jetbake.release"])
	require.Equal(t, map[string]string{"RUSTFLAGS": "-C opt-level=3"}, r.BuildArgs)
	require.Equal(t, map[string]string{"RUSTFLAGS": "-C opt-level=3", "CARGO_FEATURES": "candle-cuda", "CUDA_LINKING": "static-linking"}, r.Targets[0].BuildArgs)
}

func TestPlanWithReleases(t *testing.T) {
	m := shippedMatrix(t)
	p, err := New(m, WithReleases("jetpack7.0", "jetpack5.1", "jetpack7.0"))
	require.NoError(t, err)
	require.Equal(t, []string{"jetpack5.1", "jetpack7.0"}, names(p), "matrix order, no repeats")

	_, err = New(m, WithReleases("jetpack6.2", "jetpack8.0", "jp6"))
	var unknown *UnknownReleaseError
	require.ErrorAs(t, err, &unknown)
	require.Equal(t, []string{"jetpack8.0", "jp6"}, unknown.Names)
	require.Equal(t, `unknown release "jetpack8.0", "jp6": the matrix has jetpack5.1, jetpack6.1, jetpack6.2, jetpack7.0, jetpack7.2`, err.Error())
}

func names(p *Plan) []string {
	var out []string
	for _, r := range p.Releases {
		out = append(out, r.Name)
	}
	return out
}

func TestPlanWithRepository(t *testing.T) {
	m := shippedMatrix(t)
	p, err := New(m, WithRepository("127.0.0.1:5000/jetbake/tei"), WithReleases("jetpack6.2"))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:5000/jetbake/tei", p.Repository)
	require.Equal(t, []string{"127.0.0.1:5000/jetbake/tei:1.9.3-jetpack6.2", "127.0.0.1:5000/jetbake/tei:jetpack6.2"},
		p.Releases[0].Tags)

	for _, bad := range []string{"Ghcr.io/Jetbake/TEI", "ghcr.io/jetbake/tei:latest", "ghcr.io/x/y/"} {
		_, err := New(m, WithRepository(bad))
		require.ErrorContains(t, err, fmt.Sprintf("repository %q is not a valid image repository", bad))
	}
}

func TestPlanResolvesLocalContext(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../matrix.json")
	require.NoError(t, err)
	data = []byte(strings.Replace(string(data),
		"https://github.com/huggingface/text-embeddings-inference.git?ref=v1.9.3&checksum=06670157fb6c1523482219bdb2d1660277d38088", "../tei", 1))
	path := filepath.Join(dir, "ci", "matrix.json")
	// dir is a git work tree: the matrix may read anywhere in it.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ci", "dockerfiles"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tei"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ci", "dockerfiles", "Dockerfile-jetson"), dockerfiles.DockerfileJetson(), 0o644))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	m, err := matrix.Load(path)
	require.NoError(t, err)
	p, err := New(m)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "tei"), p.Router.Context)
	require.Empty(t, p.Router.Commit, "a local folder has no pinned commit")
	require.Equal(t, filepath.Join(dir, "ci", "dockerfiles", "Dockerfile-jetson"), p.Router.Dockerfile)
}

func TestPlanJSONFieldNames(t *testing.T) {
	p, err := New(shippedMatrix(t), WithReleases("jetpack6.2"))
	require.NoError(t, err)
	data, err := json.Marshal(p)
	require.NoError(t, err)
	for _, key := range []string{`"router"`, `"repository"`, `"releases"`, `"build_base"`, `"runtime_base"`,
		`"compute_cap":"87"`, `"binary":"router-87"`, `"platform":"linux/arm64"`, `"annotations"`, `"labels"`,
		`"build_args":{"CARGO_FEATURES":"candle-cuda","CUDA_LINKING":"static-linking"}`, `"runtime_target":"runtime-base"`,
		`"runtime_build_args":{"CARGO_FEATURES":"candle-cuda","CUDA_LINKING":"static-linking"}`, `"env":{"HUGGINGFACE_HUB_CACHE":"/data","PORT":"80"}`,
		`"cmd":["--json-output"]`, `"ports":["80/tcp"]`} {
		require.Contains(t, string(data), key)
	}
	require.NotContains(t, string(data), `"build_args":{}`, "empty build args are left out")
}
