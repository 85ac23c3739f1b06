package e2e

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// checkRememberedVerdicts builds jetpack6.2 of p (already built, so
// BuildKit has every step) four times with a store of verdicts: the first
// build runs the smoke run and the audit and remembers them; the second,
// the same, runs neither and says so; a build by another jetbake, and one
// on another runtime base, run them again. Asserted through the progress
// and the report, never through time.
func checkRememberedVerdicts(t *testing.T, f *fixture, p *plan.Plan) {
	ctx := t.Context()
	dir := t.TempDir()
	const release = "jetpack6.2"
	build := func(tool string, more ...imagebuild.Option) (imagebuild.ReleaseReport, string) {
		t.Helper()
		var out bytes.Buffer
		opts := append([]imagebuild.Option{imagebuild.WithReleases(release), imagebuild.WithPush(true),
			imagebuild.WithVerdicts(dir, tool), imagebuild.WithProgress("plain", &out)}, more...)
		rep, err := f.build(ctx, p, opts...)
		require.NoError(t, err, out.String())
		require.Len(t, rep.Releases, 1)
		return rep.Releases[0], out.String()
	}
	// The run's own step; the driver stub it needs ("smoke: the build
	// base's CUDA driver stub") builds beside the routers in any case.
	smokeStep := progress.SmokePrefix + p.Router.Name + " "
	ran := func(t *testing.T, rr imagebuild.ReleaseReport, out string) {
		t.Helper()
		require.Nil(t, rr.Remembered)
		require.Contains(t, out, smokeStep, "the smoke run was solved")
		require.NotContains(t, out, "smoke and audit: remembered")
	}

	first, out := build("jetbake v1")
	ran(t, first, out)
	require.Contains(t, out, "smoke: the verdict's key", "the daemon digested the routers and the runtime stage")
	require.Len(t, first.Binaries, len(first.Targets))
	require.NotEmpty(t, first.Binaries[0].Resolved, "the smoke run resolved the libraries")

	second, out := build("jetbake v1")
	require.NotNil(t, second.Remembered, out)
	require.Contains(t, out, "["+release+"] smoke and audit: remembered from ")
	require.Contains(t, out, second.Remembered.Key[:12])
	require.Equal(t, 1, strings.Count(out, "smoke and audit: remembered"), "said once")
	require.NotContains(t, out, smokeStep, "the smoke run was not even asked for")
	require.Equal(t, first.Digest, second.Digest, "the same image: the remembered audit annotation is the one the audit wrote")
	require.Equal(t, first.Binaries, second.Binaries, "the report has what the smoke run found")
	require.Equal(t, first.Audit, second.Audit)
	rep := second.Annotations
	require.Equal(t, first.Annotations, rep)

	third, out := build("jetbake v2")
	ran(t, third, out)

	// The same runtime base under another digest (one label more).
	rel, ok := p.Release(release)
	require.True(t, ok)
	mirrored, err := refs.Mirrors{"nvcr.io": f.env.Registry}.Rewrite(rel.RuntimeBase, "")
	require.NoError(t, err)
	ref, err := name.ParseReference(mirrored)
	require.NoError(t, err)
	img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	cfg = cfg.DeepCopy()
	if cfg.Config.Labels == nil {
		cfg.Config.Labels = map[string]string{}
	}
	cfg.Config.Labels["io.jetbake.test"] = "another runtime base"
	relabelled, err := mutate.ConfigFile(img, cfg)
	require.NoError(t, err)
	copyRef := ref.Context().Tag("verdict-test")
	require.NoError(t, remote.Write(copyRef, relabelled))
	dgst, err := relabelled.Digest()
	require.NoError(t, err)
	fourth, out := build("jetbake v1", imagebuild.WithLocks(map[string]string{rel.RuntimeBase: dgst.String()}))
	ran(t, fourth, out)
	require.Equal(t, dgst.String(), fourth.Bases[1].Digest, "built on the other runtime base")
}
