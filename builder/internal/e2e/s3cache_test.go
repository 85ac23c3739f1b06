package e2e

import (
	"bufio"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
)

// TestCLIBuildS3CacheRoundTrip is a pipeline on ephemeral runners with an
// S3 cache (a Go S3 server on 127.0.0.1): one build exports its cache, a
// build on a fresh buildkitd with an empty state imports it and compiles no
// router again, which BuildKit's cached-step records (the solve status
// vertices' Cached flag, per release in the metadata's timings) show. A
// third fresh runner, after a one-line change in the router's source,
// recompiles the steps from the change on, and, without sccache's remote
// cache (see TestCLIBuildSccacheRemote), every crate: sccache's local
// cache is a cache mount, which the fresh daemon does not have. Each
// release has its own cache name in the bucket.
func TestCLIBuildS3CacheRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	bucket, s3 := buildkitS3(t)
	releases := []string{"jetpack6.2", "jetpack7.2"}
	matrixPath := f.demoPlanFile(t, "matrix.json", func(m map[string]any) { keepReleases(m, releases...) })
	p, err := LoadPlan(matrixPath, AllowStandin(f.env.RepoRoot))
	require.NoError(t, err)
	_, err = f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	var logs string // the last build's progress
	build := func(matrix, addr string, args ...string) (*imagebuild.Report, map[string]vertexCount) {
		t.Helper()
		run := f.rawBuild(t, matrix, addr, args...)
		require.Len(t, run.report.Timings.Releases, len(releases))
		logs = run.stderr
		return run.report, routerRuns(t, run.stderr)
	}

	first, _ := build(matrixPath, f.env.Daemon.Addr, "--cache-to", s3+",mode=max")
	for _, rt := range first.Timings.Releases {
		require.Less(t, rt.RouterCached, rt.RouterSteps, "%s: the first build compiles", rt.Name)
		t.Logf("first runner, empty cache: %s: %d of %d router steps cached", rt.Name, rt.RouterCached, rt.RouterSteps)
	}
	for _, r := range releases {
		_, err := bucket.HeadObject("jetbake-cache", "manifests/"+r)
		require.NoError(t, err, "the cache of %s under a name of its own", r)
	}
	stats := sccacheReports(t, logs)
	require.Len(t, stats, 3, "a cargo step per SM target: %v", stats)
	for name, st := range stats {
		require.Equal(t, `Local disk: "/sccache"`, st.Location, "%s: no secrets, the cache mount", name)
		requireCompiles(t, st, "miss", name)
	}

	// jetpack6.2 has one SM target: a fresh runner must compile none of its
	// router steps again. jetpack7.2 has two, whose router stages share
	// their first steps; BuildKit (v0.34, mode=max) sometimes writes one of
	// those keys twice in the exported cache manifest, and the import then
	// misses the last steps of one SM target (12 of 14 cached, about one run
	// in four, with images that are byte for byte right). So for a
	// multi-target release the test asserts what is deterministic: the
	// import saved more than half of the steps.
	second, vertices := build(matrixPath, f.freshDaemon(t), "--cache-from", s3)
	strict := map[string]bool{"jetpack6.2": true}
	for _, rt := range second.Timings.Releases {
		require.Positive(t, rt.RouterSteps, rt.Name)
		t.Logf("fresh runner, no change: %s: %d of %d router steps cached", rt.Name, rt.RouterCached, rt.RouterSteps)
		if strict[rt.Name] {
			require.Equal(t, rt.RouterSteps, rt.RouterCached, "%s: a fresh runner compiles no router step again", rt.Name)
			continue
		}
		require.Greater(t, 2*rt.RouterCached, rt.RouterSteps, "%s: a fresh runner imports most router steps", rt.Name)
	}
	for _, r := range releases {
		require.Positive(t, vertices[r].runs, "%s: the status stream has its RUN steps", r)
		if strict[r] {
			require.Equal(t, vertices[r].runs, vertices[r].cached, "%s: every RUN step of the router stage is CACHED in BuildKit's status", r)
		}
	}

	// A one-line change in the router's source.
	changedMatrix, changed := f.oneLineChange(t, "changed.json", releases...)
	third, _ := build(changedMatrix, f.freshDaemon(t), "--cache-from", s3, "--allow", "fs.read="+changed)
	for _, rt := range third.Timings.Releases {
		require.Less(t, rt.RouterCached, rt.RouterSteps, "%s: the changed source compiles again", rt.Name)
		t.Logf("fresh runner, one-line change: %s: %d of %d router steps cached", rt.Name, rt.RouterCached, rt.RouterSteps)
	}
	for name, st := range sccacheReports(t, logs) {
		requireCompiles(t, st, "miss", name+", fresh runner, one-line change, no sccache secrets")
	}
}

// vertexCount counts a release's router RUN steps in a status stream.
type vertexCount struct{ runs, cached int }

// routerStep matches a router stage's RUN step as the progress names it.
var routerStep = regexp.MustCompile(`^\[([^\]]+)\] \[[^\]]*[0-9]+/[0-9]+\] RUN `)

// routerRuns reads a --progress rawjson stream (BuildKit's SolveStatus, one
// JSON object a line) and counts, per release, the router's RUN steps that
// completed and how many of them BuildKit took from its cache.
func routerRuns(t *testing.T, stream string) map[string]vertexCount {
	t.Helper()
	done := map[string]bool{} // release and vertex digest, by cached
	cached := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "{") {
			continue // jetbake's summary lines
		}
		var st client.SolveStatus
		require.NoError(t, json.Unmarshal([]byte(line), &st), line)
		for _, v := range st.Vertexes {
			m := routerStep.FindStringSubmatch(v.Name)
			if m == nil || v.Completed == nil {
				continue
			}
			key := m[1] + "\x00" + v.Digest.String()
			done[key] = true
			cached[key] = cached[key] || v.Cached
		}
	}
	out := map[string]vertexCount{}
	for key := range done {
		release, _, _ := strings.Cut(key, "\x00")
		c := out[release]
		c.runs++
		if cached[key] {
			c.cached++
		}
		out[release] = c
	}
	return out
}
