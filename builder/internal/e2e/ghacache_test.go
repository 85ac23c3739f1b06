package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/cacheserver"
)

// TestCLIBuildGHACacheRoundTrip is a pipeline on GitHub's ephemeral
// runners with BuildKit's own GitHub Actions cache (type=gha) on a
// stand-in of the cache service on 127.0.0.1, which BuildKit's real client
// (go-actions-cache and the Azure SDK, inside buildkitd) reaches as it
// reaches GitHub's: jetbake fills the url and token from the workflow's
// ACTIONS_RESULTS_URL, ACTIONS_RUNTIME_TOKEN and ACTIONS_CACHE_SERVICE_V2
// as buildx does. The first runner exports the cache (twirp calls in JSON,
// the layers as Azure block blobs, the index as a mutable entry, #1), and
// its cargo step's sccache writes to the same service in protobuf; a fresh
// runner imports the index (found by prefix) and compiles no router step
// again. A token the service did not issue is refused: an import with it
// fails its step and the build goes on, an export with it fails the build,
// as BuildKit does without ignore-error.
func TestCLIBuildGHACacheRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	token := cacheserver.RuntimeToken("refs/heads/main", time.Hour)
	gha := cacheserver.NewGHA(token)
	t.Cleanup(gha.Close)
	t.Setenv("ACTIONS_RESULTS_URL", gha.URL)
	t.Setenv("ACTIONS_RUNTIME_TOKEN", token)
	t.Setenv("ACTIONS_CACHE_SERVICE_V2", "true")

	matrixPath := f.demoPlanFile(t, "matrix.json", func(m map[string]any) { keepReleases(m, "jetpack6.2") })
	p, err := LoadPlan(matrixPath, AllowStandin(f.env.RepoRoot))
	require.NoError(t, err)
	_, err = f.env.PushStandins(ctx, p)
	require.NoError(t, err)

	first := f.rawBuild(t, matrixPath, f.env.Daemon.Addr, append(secretFlags("actions_results_url", "actions_runtime_token"),
		"--cache-to", "type=gha,mode=max")...)
	rt := first.report.Timings.Releases[0]
	require.Less(t, rt.RouterCached, rt.RouterSteps, "the first runner compiles")
	exported := gha.Calls()
	seen := map[string]int{}
	for _, c := range exported {
		require.Less(t, c.Status, 400, "%+v", c)
		seen[c.Op+" "+c.Encoding]++
	}
	t.Logf("first runner: %d of %d router steps cached; the service answered %v", rt.RouterCached, rt.RouterSteps, seen)
	for _, op := range []string{"CreateCacheEntry json", "FinalizeCacheEntryUpload json", "GetCacheEntryDownloadURL json", "Put Block ", "Put Block List ",
		"CreateCacheEntry protobuf", "FinalizeCacheEntryUpload protobuf", "Put Blob "} {
		require.Positive(t, seen[op], "%s: BuildKit's calls in JSON and Azure blocks, sccache's in protobuf and Put Blob", op)
	}
	var blobs, indexes, sccacheEntries int
	for _, key := range gha.Entries() {
		switch {
		case strings.HasPrefix(key, "buildkit-blob-1-sha256:"):
			blobs++
		case strings.HasPrefix(key, "index-jetpack6.2-1-"):
			require.True(t, strings.HasSuffix(key, "#1"), "the release's index, first version: %s", key)
			indexes++
		case strings.HasPrefix(key, "sccache/"):
			sccacheEntries++
		default:
			t.Fatalf("unexpected entry %s", key)
		}
	}
	require.Positive(t, blobs)
	require.Equal(t, 1, indexes, "one index, scoped to the release")
	require.Equal(t, 1+len(workspaceLibraries), sccacheEntries, "sccache's check entry and its libraries")
	for _, tok := range gha.Tokens() {
		require.Equal(t, token, tok, "the runner's token reached the service from BuildKit and sccache")
	}

	fresh := f.freshDaemon(t)
	second := f.rawBuild(t, matrixPath, fresh, "--cache-from", "type=gha")
	rt = second.report.Timings.Releases[0]
	t.Logf("fresh runner: %d of %d router steps cached", rt.RouterCached, rt.RouterSteps)
	require.Positive(t, rt.RouterSteps)
	require.Equal(t, rt.RouterSteps, rt.RouterCached, "a fresh runner compiles no router step again")
	vertices := routerRuns(t, second.stderr)["jetpack6.2"]
	require.Positive(t, vertices.runs)
	require.Equal(t, vertices.runs, vertices.cached, "every RUN step of the router stage is CACHED in BuildKit's status")
	imported := gha.Calls()[len(exported):]
	var matched, reads int
	for _, c := range imported {
		require.Less(t, c.Status, 400, "%+v", c)
		require.NotContains(t, c.Op, "Put", "an import writes nothing")
		if c.Op == "GetCacheEntryDownloadURL" && strings.HasPrefix(c.Key, "index-jetpack6.2-1-") && !strings.Contains(c.Key, "#") {
			matched++
		}
		if c.Op == "Get Blob" {
			reads++
		}
	}
	require.Positive(t, matched, "the index looked up by its key without #N, a restore-key prefix")
	require.Positive(t, reads, "the index and layers read from Azure")
	t.Logf("fresh runner: the service answered %d calls, %d Get Blob", len(imported), reads)

	// A token the service did not issue, on the fresh runner, which has
	// every step now.
	wrong := "token=" + cacheserver.RuntimeToken("refs/heads/main", time.Hour)
	run := f.rawBuild(t, matrixPath, fresh, "--cache-from", "type=gha,"+wrong)
	failed := importErrors(t, run.stderr)
	require.Contains(t, failed, "unauthenticated", "the import step fails, the build goes on")
	t.Logf("wrong token, import: the build passes; %s", failed)
	before := len(gha.Entries())
	code, _, stderr := jetbake(ctx, append([]string{"build", "-f", matrixPath, "--addr", fresh, "--mirror", "nvcr.io=" + f.env.Registry,
		"--entrypoint-dir", f.entrypointDir, "--metadata-file", filepath.Join(t.TempDir(), "build.json"), "--progress", "plain"},
		append(f.allow(), "--cache-to", "type=gha,mode=max,"+wrong)...)...)
	require.NotEqual(t, 0, code, "a cache export that fails fails the build")
	require.Contains(t, stderr, "unauthenticated", stderr)
	require.NotContains(t, stderr, strings.TrimPrefix(wrong, "token="), "the token is not printed")
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "unauthenticated") {
			t.Logf("wrong token, export: exit %d: %s", code, line)
		}
	}
	require.Len(t, gha.Entries(), before, "nothing written with the wrong token")
}

// importErrors returns the errors of the gha cache import steps in a
// --progress rawjson stream (BuildKit's SolveStatus, one JSON object a
// line, each step's name after its release's), one a line.
func importErrors(t *testing.T, stream string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(stream, "\n") {
		var st struct {
			Vertexes []struct{ Name, Error string }
		}
		if !strings.HasPrefix(line, "{") {
			continue // jetbake's summary lines
		}
		require.NoError(t, json.Unmarshal([]byte(line), &st), line)
		for _, v := range st.Vertexes {
			if strings.Contains(v.Name, "importing cache manifest from gha:") && v.Error != "" {
				out = append(out, v.Name+": "+v.Error)
			}
		}
	}
	return strings.Join(out, "\n")
}
