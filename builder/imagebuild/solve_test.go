package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/plan"
)

const pinDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestRouterOpts(t *testing.T) {
	p := testPlan()
	rel := p.Releases[0]
	const buildBase = "127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0@" + pinDigest
	const runtimeBase = "127.0.0.1:5000/nvidia/l4t-cuda:12.6.11-runtime"
	common := map[string]string{
		"target":                      "router",
		"platform":                    "linux/arm64",
		"filename":                    "Dockerfile-jetson",
		"build-arg:CUDA_COMPUTE_CAP":  "87",
		"build-arg:CUDA_ARCH":         "sm_87",
		"build-arg:BUILD_BASE":        buildBase,
		"build-arg:RUNTIME_BASE":      runtimeBase,
		"build-arg:ROUTER_VERSION":    "1.8.0",
		"build-arg:CUDA_RELEASE":      "12.6",
		"build-arg:SOURCE_DATE_EPOCH": "1767225600",
		"build-arg:EXTRA":             "yes",
		"context:jetbake":             "input:jetbake",
	}
	tests := []struct {
		name       string
		gitContext string
		extra      map[string]string
	}{
		{name: "local context"},
		{name: "git context", gitContext: p.Router.Context, extra: map[string]string{
			"context":       p.Router.Context,
			"dockerfilekey": "dockerfile",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &releaseJob{opts: &options{epoch: testEpoch}, plan: p, release: rel, runtimeBase: runtimeBase, gitContext: tt.gitContext,
				dockerfile: "Dockerfile-jetson"}
			want := map[string]string{}
			for k, v := range common {
				want[k] = v
			}
			for k, v := range tt.extra {
				want[k] = v
			}
			require.Equal(t, want, j.routerOpts(rel.Targets[0], buildBase))
		})
	}
}

// A target's own build args (the matrix's per-SM settings) replace the release's.
func TestRouterOptsTargetBuildArgs(t *testing.T) {
	p := testPlan()
	rel := p.Releases[0]
	tgt := rel.Targets[0]
	tgt.BuildArgs = map[string]string{"CARGO_FEATURES": "candle-cuda-volta", "CUDA_COMPUTE_CAP": "1"}
	j := &releaseJob{opts: &options{}, plan: p, release: rel, dockerfile: "Dockerfile-jetson"}
	opts := j.routerOpts(tgt, "base")
	require.Equal(t, "candle-cuda-volta", opts["build-arg:CARGO_FEATURES"])
	require.Equal(t, tgt.ComputeCap, opts["build-arg:CUDA_COMPUTE_CAP"], "jetbake's own args win")
	require.NotContains(t, opts, "build-arg:EXTRA", "the target's args already hold the release's")
}

// The router source's pinned commit reaches the build as GIT_SHA, which
// TEI's /info reports, unless the matrix sets one; the runtime stage gets
// the release's args and the pinned runtime base, no SM.
func TestStageArgs(t *testing.T) {
	p := testPlan()
	rel := p.Releases[0]
	j := &releaseJob{opts: &options{}, plan: p, release: rel, runtimeBase: "rt", dockerfile: "Dockerfile"}
	require.NotContains(t, j.routerOpts(rel.Targets[0], "base"), "build-arg:GIT_SHA", "a tag is not a commit")
	p.Router.Commit = "06670157fb6c1523482219bdb2d1660277d38088"
	require.Equal(t, p.Router.Commit, j.routerOpts(rel.Targets[0], "base")["build-arg:GIT_SHA"])
	j.release.BuildArgs = map[string]string{"GIT_SHA": "mine"}
	require.Equal(t, "mine", j.routerOpts(rel.Targets[0], "base")["build-arg:GIT_SHA"])

	j.release.RuntimeBuildArgs = map[string]string{"CUDA_LINKING": "dynamic-linking", "CUDA_RELEASE": "9.9"}
	args := j.runtimeArgs("base", "rt@"+pinDigest)
	require.Equal(t, map[string]string{"CUDA_LINKING": "dynamic-linking", "CUDA_RELEASE": "12.6", "BUILD_BASE": "base",
		"RUNTIME_BASE": "rt@" + pinDigest, "ROUTER_VERSION": "1.8.0", "SOURCE_DATE_EPOCH": "0", "GIT_SHA": p.Router.Commit}, args)
}

// Every target of a release gets its own compute capability and arch.
func TestRouterOptsPerTarget(t *testing.T) {
	p := testPlan()
	rel := p.Releases[1]
	j := &releaseJob{opts: &options{}, plan: p, release: rel, dockerfile: "Dockerfile"}
	for _, tc := range rel.Targets {
		opts := j.routerOpts(tc, "base")
		require.Equal(t, tc.ComputeCap, opts["build-arg:CUDA_COMPUTE_CAP"])
		require.Equal(t, tc.Arch, opts["build-arg:CUDA_ARCH"])
		require.Equal(t, "0", opts["build-arg:SOURCE_DATE_EPOCH"])
		require.NotContains(t, opts, "context")
		require.NotContains(t, opts, "build-arg:EXTRA")
	}
}

func TestPin(t *testing.T) {
	tests := []struct {
		ref, digest, want string
	}{
		{ref: "nvcr.io/nvidia/cuda:13.2.0", digest: pinDigest, want: "nvcr.io/nvidia/cuda:13.2.0@" + pinDigest},
		{ref: "nvcr.io/nvidia/cuda:13.2.0", digest: "", want: "nvcr.io/nvidia/cuda:13.2.0"},
		{ref: "nvcr.io/nvidia/cuda:13.2.0@" + pinDigest, digest: "sha256:other", want: "nvcr.io/nvidia/cuda:13.2.0@" + pinDigest},
	}
	for _, tt := range tests {
		t.Run(tt.ref+"+"+tt.digest, func(t *testing.T) {
			require.Equal(t, tt.want, pin(tt.ref, tt.digest))
		})
	}
}

// --no-cache and --pull reach the Dockerfile frontend as buildx sends them.
func TestRouterOptsControls(t *testing.T) {
	p := testPlan()
	rel := p.Releases[0]
	j := &releaseJob{opts: &options{}, plan: p, release: rel, dockerfile: "Dockerfile"}
	opts := j.routerOpts(rel.Targets[0], "base")
	require.NotContains(t, opts, "no-cache")
	require.NotContains(t, opts, "image-resolve-mode")
	require.Equal(t, "default", j.resolveMode().String())
	j.opts.controls = Controls{NoCache: true, Pull: true}
	opts = j.routerOpts(rel.Targets[0], "base")
	require.Equal(t, "", opts["no-cache"])
	require.Contains(t, opts, "no-cache")
	require.Equal(t, "pull", opts["image-resolve-mode"])
	require.Equal(t, "pull", j.resolveMode().String())
}

// The build args jetbake gives every router stage are the ones --build-arg
// and --set refuse (plan.ReservedBuildArg): the two lists stay one.
func TestJetbakeBuildArgsAreReserved(t *testing.T) {
	j := &releaseJob{opts: &options{}, plan: testPlan(), release: plan.Release{Name: "r"}}
	args := j.routerArgs(plan.Target{SM: "8.7", BuildArgs: map[string]string{}}, "base")
	require.NotEmpty(t, args)
	for k := range args {
		require.NotEmpty(t, plan.ReservedBuildArg(k), "%s is set by jetbake but plan.ReservedBuildArg does not know it", k)
	}
	require.Empty(t, plan.ReservedBuildArg("CARGO_FEATURES"))
}
