package e2e

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/refs"
)

// TestCluster builds the matrix across two buildkitd daemons, then kills one
// mid-build and checks that every release still completes on the other with
// the digests of the clean run.
func TestCluster(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	stateB := filepath.Join(f.work, "buildkitd-b")
	second, err := daemon.Connect(ctx, daemon.WithBuildkitd(filepath.Join(f.env.BinDir(), "buildkitd")),
		daemon.WithStateDir(stateB))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = second.Close()
		// The daemon is killed mid-build below: its step mounts stay behind.
		require.NoError(t, UnmountUnder(stateB))
	})
	p := f.demoPlan(t, "matrix.json")
	_, err = f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	nodes := []imagebuild.Node{{Name: "node-a", Client: f.env.Daemon.Client}, {Name: "node-b", Client: second.Client}}
	releases := []string{"jetpack6.1", "jetpack6.2", "jetpack7.0", "jetpack7.2"}
	build := func(opts ...imagebuild.Option) (*imagebuild.Report, error) {
		base := []imagebuild.Option{
			imagebuild.WithMirrors(refs.Mirrors{"nvcr.io": f.env.Registry}), imagebuild.WithEntrypointDir(f.entrypointDir),
			imagebuild.WithSource("0123456789abcdef0123456789abcdef01234567", testEpoch),
			imagebuild.WithParallel(1), imagebuild.WithPush(true), imagebuild.WithReleases(releases...),
		}
		return imagebuild.NewCluster(nodes, append(base, opts...)...).Build(ctx, p)
	}

	clean, err := build()
	require.NoError(t, err)
	used := map[string]bool{}
	digests := map[string]string{}
	for _, rr := range clean.Releases {
		require.Equal(t, imagebuild.Succeeded, rr.Outcome, rr.Error)
		used[rr.Node] = true
		digests[rr.Name] = rr.Digest
	}
	require.Equal(t, map[string]bool{"node-a": true, "node-b": true}, used, "the metadata shows both nodes used")

	again, err := build()
	require.NoError(t, err)
	for i, rr := range again.Releases {
		require.Equal(t, clean.Releases[i].Node, rr.Node, "%s sticks to its node", rr.Name)
	}

	var once sync.Once
	killed := make(chan struct{})
	failover, err := build(imagebuild.WithAttemptHook(func(node, release string) {
		if node != "node-b" {
			return
		}
		once.Do(func() {
			// The build has started on node-b; kill its daemon while it runs.
			time.AfterFunc(100*time.Millisecond, func() { _ = second.Kill(); close(killed) })
		})
	}))
	require.NoError(t, err)
	<-killed
	retried := 0
	for _, rr := range failover.Releases {
		require.Equal(t, imagebuild.Succeeded, rr.Outcome, rr.Error)
		if digests[rr.Name] != rr.Digest {
			dumpDiff(t, rr.Repository+"@"+digests[rr.Name], rr.Repository+"@"+rr.Digest)
		}
		require.Equal(t, digests[rr.Name], rr.Digest, "%s has the digest of the clean run", rr.Name)
		if len(rr.Retries) > 0 {
			require.Equal(t, "node-a", rr.Node, "%s was retried on the surviving node", rr.Name)
			require.Equal(t, "node-b", rr.Retries[0].Node)
			require.NotEmpty(t, rr.Retries[0].Reason)
			retried++
		}
	}
	require.Positive(t, retried, "at least the release that was building on node-b was retried")
	for _, rr := range failover.Releases {
		require.NotEmpty(t, rr.Tags, "%s is tagged once every release succeeded", rr.Name)
	}
}

// dumpDiff logs the manifests and configs of two images that should be equal.
func dumpDiff(t *testing.T, a, b string) {
	t.Helper()
	for _, r := range []string{a, b} {
		img := pullArm64(t, r)
		m, _ := img.RawManifest()
		c, _ := img.RawConfigFile()
		t.Logf("%s\nMANIFEST %s\nCONFIG %s", r, m, c)
	}
}
