package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
)

// TestCLIBuildCacheFrom exports a release's cache, empties the daemon's
// cache, and builds again from the export: the router's steps come from the
// imported cache, not from running again. jetbake converts the router's
// Dockerfile itself, so this checks that it still hands --cache-from to the solve.
func TestCLIBuildCacheFrom(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p := f.demoPlan(t, "matrix.json")
	_, err := f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	matrixPath := filepath.Join(f.work, "matrix.json")
	cacheDir := filepath.Join(f.work, "cache")
	build := func(args ...string) string {
		args = append([]string{"build", "--matrix", matrixPath, "--addr", f.env.Daemon.Addr, "--mirror", "nvcr.io=" + f.env.Registry,
			"--push", "--release", "jetpack6.2", "--entrypoint-dir", f.entrypointDir, "--progress", "plain"}, append(f.allow(), args...)...)
		code, _, stderr := jetbake(ctx, args...)
		require.Equal(t, 0, code, stderr)
		return stderr
	}
	first := build("--cache-to", "type=local,mode=max,dest="+cacheDir)
	require.NotRegexp(t, `(?m)^#[0-9]+ \[jetpack6\.2\] \[(?:[a-z0-9_.-]+ )?[0-9]+/[0-9]+\] RUN [^\n]*\n#[0-9]+ CACHED`, first, "a first build runs the router's steps")

	require.NoError(t, f.env.Daemon.Client.Prune(ctx, nil, client.PruneAll))
	metadata := filepath.Join(f.work, "build.json")
	second := build("--cache-from", "type=local,src="+cacheDir, "--metadata-file", metadata)
	require.Regexp(t, `(?m)^#[0-9]+ \[jetpack6\.2\] \[(?:[a-z0-9_.-]+ )?[0-9]+/[0-9]+\] RUN [^\n]*\n#[0-9]+ CACHED`, second,
		"after a prune, the router's RUN step comes from the imported cache")

	// The metadata names the daemon's version: `make deps` stamps the one go.mod pins.
	var report imagebuild.Report
	data, err := os.ReadFile(metadata)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &report))
	require.Len(t, report.Daemons, 1)
	require.Equal(t, buildkitModuleVersion(t, f.env.RepoRoot), report.Daemons[0].Version)
	require.NotNil(t, report.Timings)
	require.NotEmpty(t, report.Timings.Phases)
}

// buildkitModuleVersion is the BuildKit version go.mod pins.
func buildkitModuleVersion(t *testing.T, repoRoot string) string {
	data, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*github\.com/moby/buildkit (v\S+)`).FindSubmatch(data)
	require.NotNil(t, m, "go.mod requires github.com/moby/buildkit")
	return string(m[1])
}
