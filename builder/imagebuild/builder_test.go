package imagebuild

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

func TestSelectReleases(t *testing.T) {
	p := testPlan()
	tests := []struct {
		name    string
		names   []string
		want    []string
		wantErr string
	}{
		{name: "all", want: []string{"jetpack6.2", "jetpack7.2"}},
		{name: "one", names: []string{"jetpack7.2"}, want: []string{"jetpack7.2"}},
		{name: "given order", names: []string{"jetpack7.2", "jetpack6.2"}, want: []string{"jetpack7.2", "jetpack6.2"}},
		{name: "unknown", names: []string{"jetpack6.2", "jetpack9", "jetpack8", "jetpack9"},
			wantErr: `unknown release "jetpack9", "jetpack8": the matrix has jetpack6.2, jetpack7.2`},
		{name: "twice", names: []string{"jetpack6.2", "jetpack7.2", "jetpack6.2"},
			wantErr: `release "jetpack6.2" is selected twice: select each release once`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SelectReleases(p, tt.names)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				var unknown *plan.UnknownReleaseError
				var twice *DuplicateReleaseError
				require.True(t, errors.As(err, &unknown) || errors.As(err, &twice), "typed: %T", err)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, r := range got {
				names = append(names, r.Name)
			}
			require.Equal(t, tt.want, names)
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

func TestCheckEntrypointDir(t *testing.T) {
	require.NoError(t, checkEntrypointDir(entrypointDir(t), "abc"))

	err := checkEntrypointDir("", "")
	require.Equal(t, &EntrypointError{}, err)
	require.Contains(t, err.Error(), "WithEntrypointDir")

	half := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(half, "jetbake-entrypoint"), nil, 0o755))
	err = checkEntrypointDir(half, "")
	require.Equal(t, &EntrypointError{Dir: half, Missing: "jetbake-cudaprobe"}, err)
	require.Equal(t, "entrypoint folder "+half+" lacks jetbake-cudaprobe: cross-compile it for linux/arm64 into that folder", err.Error())
	require.NoError(t, os.WriteFile(filepath.Join(half, "jetbake-cudaprobe"), nil, 0o755))
	require.Equal(t, &EntrypointError{Dir: half, Missing: "jetbake-probe"}, checkEntrypointDir(half, ""))
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

// An entrypoint built from another commit than the jetbake that builds is refused.
// The binaries are built in a git repository of their own, made here: Go
// stamps vcs.revision only where .git is a folder, which it is not in a git
// worktree (.git is a file there), so the checkout's own commit cannot be
// relied on.
func TestCheckEntrypointRevision(t *testing.T) {
	dir := t.TempDir()
	commit := stampedBinaries(t, dir, "jetbake-entrypoint", "jetbake-cudaprobe", "jetbake-probe")
	require.Equal(t, commit, entrypointRevision(filepath.Join(dir, "jetbake-entrypoint")))
	require.NoError(t, checkEntrypointDir(dir, commit))
	require.NoError(t, checkEntrypointDir(dir, ""), "no revision to compare with")
	err := checkEntrypointDir(dir, "2222222222222222")
	require.Equal(t, &EntrypointError{Dir: dir, Binary: filepath.Join(dir, "jetbake-entrypoint"), BuiltFrom: commit, Tool: "2222222222222222"}, err)
	require.ErrorContains(t, err, "was built from jetbake commit "+commit[:12]+" but this jetbake is commit 222222222222: build the entrypoint binaries")
	require.NoError(t, checkEntrypointDir(dir, commit[:12]), "a pseudo-version's 12-digit commit")
}

// stampedBinaries builds a small Go program, committed to a new git
// repository, into dir under each name with Go's VCS stamp, and returns the
// commit the stamp names.
func stampedBinaries(t *testing.T, dir string, names ...string) string {
	t.Helper()
	repo := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/stamped\n\ngo 1.21\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	runIn := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %v: %s", name, args, out)
		return strings.TrimSpace(string(out))
	}
	runIn("git", "init", "-q")
	runIn("git", "add", ".")
	runIn("git", "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "stamped")
	commit := runIn("git", "rev-parse", "HEAD")
	for _, name := range names {
		runIn("go", "build", "-trimpath", "-buildvcs=true", "-o", filepath.Join(dir, name), ".")
	}
	return commit
}
