package e2e

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/cli"
)

// TestCLIBuildCacheFrom exports a release's cache, empties the daemon's
// cache, and builds again from the export: the router's steps come from the
// imported cache, not from running again. jetbake converts the router's
// Dockerfile itself, so this checks that it still hands --cache-from to the solve.
func TestCLIBuildCacheFrom(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p := f.demoPlan(t, "matrix.json")
	_, err := f.env.PushStandins(p)
	require.NoError(t, err)
	matrixPath := filepath.Join(f.work, "matrix.json")
	cacheDir := filepath.Join(f.work, "cache")
	build := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		args = append([]string{"build", "--matrix", matrixPath, "--addr", f.env.Daemon.Addr, "--mirror", "nvcr.io=" + f.env.Registry,
			"--push", "--release", "jetpack6.2", "--entrypoint-dir", f.entrypointDir, "--progress", "plain"}, args...)
		code := cli.Run(ctx, args, &stdout, &stderr)
		require.Equal(t, 0, code, stderr.String())
		return stderr.String()
	}
	first := build("--cache-to", "type=local,mode=max,dest="+cacheDir)
	require.NotRegexp(t, `(?m)^#[0-9]+ \[jetpack6\.2\] \[[0-9]+/[0-9]+\] RUN [^\n]*\n#[0-9]+ CACHED`, first, "a first build runs the router's steps")

	require.NoError(t, f.env.Daemon.Client.Prune(ctx, nil, client.PruneAll))
	second := build("--cache-from", "type=local,src="+cacheDir)
	require.Regexp(t, `(?m)^#[0-9]+ \[jetpack6\.2\] \[[0-9]+/[0-9]+\] RUN [^\n]*\n#[0-9]+ CACHED`, second,
		"after a prune, the router's RUN step comes from the imported cache")
}
