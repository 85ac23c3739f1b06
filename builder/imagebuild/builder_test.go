package imagebuild

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

func TestRouterSource(t *testing.T) {
	tests := []struct {
		name       string
		router     plan.Router
		baseDir    string
		wantCtx    string
		wantGit    string
		wantDfDir  string
		wantDfName string
	}{
		{
			name:    "git context, relative Dockerfile",
			router:  plan.Router{Context: "https://github.com/huggingface/text-embeddings-inference.git#v1.8.0", Dockerfile: "dockerfiles/Dockerfile-jetson"},
			baseDir: "/repo", wantGit: "https://github.com/huggingface/text-embeddings-inference.git#v1.8.0",
			wantDfDir: "/repo/dockerfiles", wantDfName: "Dockerfile-jetson",
		},
		{
			name:    "local relative context",
			router:  plan.Router{Context: "testdata/standin-router", Dockerfile: "testdata/standin-router/Dockerfile"},
			baseDir: "/repo", wantCtx: "/repo/testdata/standin-router",
			wantDfDir: "/repo/testdata/standin-router", wantDfName: "Dockerfile",
		},
		{
			name:    "local absolute context",
			router:  plan.Router{Context: "/src/router", Dockerfile: "/src/router/Dockerfile"},
			baseDir: "/repo", wantCtx: "/src/router", wantDfDir: "/src/router", wantDfName: "Dockerfile",
		},
		{
			name:    "no base folder keeps relative paths",
			router:  plan.Router{Context: "router", Dockerfile: "router/Dockerfile.jetson"},
			wantCtx: "router", wantDfDir: "router", wantDfName: "Dockerfile.jetson",
		},
		{
			name:    "ssh git context",
			router:  plan.Router{Context: "git@github.com:huggingface/text-embeddings-inference.git", Dockerfile: "/abs/Dockerfile"},
			baseDir: "/repo", wantGit: "git@github.com:huggingface/text-embeddings-inference.git",
			wantDfDir: "/abs", wantDfName: "Dockerfile",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctxDir, git, dfDir, dfName := routerSource(tt.router.Context, tt.router.Dockerfile, tt.baseDir)
			require.Equal(t, tt.wantCtx, ctxDir)
			require.Equal(t, tt.wantGit, git)
			require.Equal(t, tt.wantDfDir, dfDir)
			require.Equal(t, tt.wantDfName, dfName)
		})
	}
}

// entrypointDir makes a folder holding the entrypoint binaries.
func entrypointDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{EntrypointPath, CUDAProbePath, ProbePath} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(p)), []byte("bin"), 0o755))
	}
	return dir
}

func TestPrepare(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	p := testPlan()
	ep := entrypointDir(t)
	b := New(nil, WithEntrypointDir(ep), WithBaseDir("/repo"), WithSource("abc", testEpoch),
		WithMirrors(refs.Mirrors{"nvcr.io": "127.0.0.1:5000"}),
		WithLocks(map[string]string{"nvcr.io/nvidia/l4t-jetpack:r36.4.0": digest}))
	jobs, err := b.prepare(p)
	require.NoError(t, err)
	require.Len(t, jobs, 2)

	j := jobs[0]
	require.Equal(t, "jetpack6.2", j.release.Name)
	require.Equal(t, "127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0@"+digest, j.buildBase)
	require.Equal(t, "127.0.0.1:5000/nvidia/l4t-cuda:12.6.11-runtime", j.runtimeBase)
	require.Equal(t, p.Router.Context, j.gitContext)
	require.Empty(t, j.contextDir)
	require.Equal(t, "/repo/dockerfiles", j.dockerfileDir)
	require.Equal(t, "Dockerfile-jetson", j.dockerfile)
	require.Equal(t, "abc", j.opts.revision)
	require.Equal(t, int64(testEpoch), j.opts.epoch)
	require.True(t, j.multiOutput)
	require.Equal(t, "127.0.0.1:5000/nvidia/cuda:13.2.0-devel-ubuntu24.04", jobs[1].buildBase)

	one, err := New(nil, WithEntrypointDir(ep), WithReleases("jetpack7.2")).prepare(p)
	require.NoError(t, err)
	require.Len(t, one, 1)
	require.False(t, one[0].multiOutput)
	require.Equal(t, "nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04", one[0].buildBase)
}

func TestPrepareErrors(t *testing.T) {
	ep := entrypointDir(t)
	noRepo := testPlan()
	noRepo.Repository = ""
	badBase := testPlan()
	badBase.Releases[1].RuntimeBase = "Not A Ref"
	tests := []struct {
		name    string
		plan    *plan.Plan
		opts    []Option
		wantErr string
	}{
		{name: "push without repository", plan: noRepo, opts: []Option{WithPush(true), WithEntrypointDir(ep)},
			wantErr: "pushing needs image.repository"},
		{name: "no entrypoint", plan: testPlan(), wantErr: "WithEntrypointDir"},
		{name: "output type twice", plan: testPlan(), opts: []Option{WithEntrypointDir(ep),
			WithOutputs(localoutput.Output{Type: "oci", Dest: "a"}, localoutput.Output{Type: "oci", Dest: "b"})},
			wantErr: "output type=oci is given twice: one of each type at most"},
		{name: "unknown release", plan: testPlan(), opts: []Option{WithEntrypointDir(ep), WithReleases("nope")},
			wantErr: `unknown release "nope"`},
		{name: "bad base", plan: badBase, opts: []Option{WithEntrypointDir(ep)},
			wantErr: "release jetpack7.2: runtime_base"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(nil, tt.opts...).prepare(tt.plan)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.wantErr)
			require.NotContains(t, err.Error(), "--", "the package names its options, not a command's flags")
		})
	}
}

// CheckOptions refuses, without a daemon, the options that Build would:
// the same typed errors, and nothing for options it does not check.
func TestCheckOptions(t *testing.T) {
	noRepo := testPlan()
	noRepo.Repository = ""
	require.NoError(t, CheckOptions(testPlan(), WithPush(true), WithProgress("plain", &bytes.Buffer{})))
	require.NoError(t, CheckOptions(testPlan(), WithEntrypointDir("/nonexistent")), "the entrypoint folder is Build's to check")
	require.ErrorIs(t, CheckOptions(noRepo, WithPush(true)), ErrNoRepository)
	var unknown *plan.UnknownReleaseError
	require.ErrorAs(t, CheckOptions(testPlan(), WithReleases("nope")), &unknown)
	var output *localoutput.Error
	require.ErrorAs(t, CheckOptions(testPlan(), WithOutputs(localoutput.Output{Type: "docker", Dest: "a"}, localoutput.Output{Type: "docker", Dest: "b"})), &output)
	require.True(t, output.Repeated)
	var pe *progress.Error
	require.ErrorAs(t, CheckOptions(testPlan(), WithProgress("tty", &bytes.Buffer{})), &pe)
	require.Equal(t, "tty", pe.Mode)
	require.ErrorContains(t, pe, "progress tty: failed to get console")
}
