package imagebuild

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
)

func TestNewDefaults(t *testing.T) {
	b := New(nil)
	require.Equal(t, DefaultParallel, b.opts.parallel)
	require.Equal(t, 2, b.opts.retries)
	require.Len(t, b.nodes, 1)
	require.Equal(t, "quiet", b.opts.progressMode)
	require.NotNil(t, b.opts.mirrors)

	for _, n := range []int{0, -3} {
		require.Equal(t, 1, New(nil, WithParallel(n)).opts.parallel)
	}
	b = New(nil, WithParallel(5), WithReleases("a", "b"), WithSource("rev", 42), WithPush(true),
		WithContinueOnError(true), WithEntrypointDir("ep"), WithBaseDir("base"),
		WithLocks(map[string]string{"x": "sha256:y"}), WithOutputs(localoutput.Output{Type: "oci", Dest: "out"}))
	require.Equal(t, 5, b.opts.parallel)
	require.Equal(t, []string{"a", "b"}, b.opts.releases)
	require.Equal(t, "rev", b.opts.revision)
	require.Equal(t, int64(42), b.opts.epoch)
	require.True(t, b.opts.push)
	require.True(t, b.opts.continueOnError)
	require.Equal(t, "ep", b.opts.entrypointDir)
	require.Equal(t, "base", b.opts.baseDir)
	require.Equal(t, map[string]string{"x": "sha256:y"}, b.opts.locks)
	require.Equal(t, []localoutput.Output{{Type: "oci", Dest: "out"}}, b.opts.outputs)
}
