package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/moby/buildkit/client"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/cacheserver"
	"github.com/jetbake/jetbake/builder/internal/standin/tei/sccache"
)

// sccacheSecrets are Dockerfile-jetson's secrets for sccache's remote
// caches, each given from the environment variable of the same name.
var sccacheSecrets = []string{"sccache_bucket", "sccache_region", "sccache_endpoint", "aws_access_key_id", "aws_secret_access_key",
	"aws_session_token", "actions_results_url", "actions_runtime_token"}

// secretFlags are --secret flags for ids, each from the variable named
// as the id in capitals.
func secretFlags(ids ...string) []string {
	var out []string
	for _, id := range ids {
		out = append(out, "--secret", "id="+id+",env="+strings.ToUpper(id))
	}
	return out
}

// workspaceLibraries are the TEI-shaped source's libraries a router build
// compiles, as the stand-in sccache names them ("CRATE KIND").
var workspaceLibraries = []string{"text_embeddings_backend_core lib", "text_embeddings_backend_candle lib",
	"text_embeddings_backend lib", "text_embeddings_core lib"}

// sccacheReports reads, from a --progress rawjson stream, what `sccache
// --show-stats` printed in each router's cargo step, by "RELEASE smNN".
func sccacheReports(t *testing.T, stream string) map[string]sccache.Reported {
	t.Helper()
	step := regexp.MustCompile(`^\[([^\]]+)\] \[router [0-9]+/[0-9]+\] RUN .*id=sccache-[a-z0-9]+-sm([0-9]+)-cuda`)
	names := map[string]string{}
	logs := map[string]*bytes.Buffer{}
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var st client.SolveStatus
		require.NoError(t, json.Unmarshal(sc.Bytes(), &st))
		for _, v := range st.Vertexes {
			if m := step.FindStringSubmatch(v.Name); m != nil {
				names[v.Digest.String()] = m[1] + " sm" + m[2]
			}
		}
		for _, l := range st.Logs {
			if logs[l.Vertex.String()] == nil {
				logs[l.Vertex.String()] = &bytes.Buffer{}
			}
			logs[l.Vertex.String()].Write(l.Data)
		}
	}
	out := map[string]sccache.Reported{}
	for dgst, name := range names {
		if logs[dgst] != nil {
			out[name] = sccache.ReadStats(logs[dgst].String())
		}
	}
	return out
}

// requireCompiles checks that every workspace library had result, and
// that the router's binary was compiled, which sccache never caches.
func requireCompiles(t *testing.T, r sccache.Reported, result, what string) {
	t.Helper()
	for _, lib := range workspaceLibraries {
		require.Equal(t, result, r.Compiles[lib], "%s: %s", what, lib)
	}
	require.Equal(t, "not cacheable (crate-type)", r.Compiles["text_embeddings_router bin"], what)
}

// TestCLIBuildSccacheRemote is Dockerfile-jetson's compile cache on
// ephemeral runners. With sccache's S3 secrets (an S3 server on 127.0.0.1
// that checks every request's signature against planted credentials) the
// first runner's cargo step writes each library of the TEI-shaped source
// to the bucket, under the release's key prefix; a fresh runner with no
// BuildKit cache runs the cargo step again and sccache reads every library
// back; a fresh runner with BuildKit's S3 cache and a one-line change in
// router/src/main.rs runs the steps from the change on, and again only the
// router's binary compiles. With the GitHub Actions secrets (a stand-in of
// the cache service on 127.0.0.1) the runtime token reaches the service.
// No secret's value reaches anything jetbake writes or pushes, and only
// the cargo step mounts them (the provenance's build definition).
func TestCLIBuildSccacheRemote(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	planted := map[string]string{
		"SCCACHE_BUCKET":        "jetbake-sccache",
		"SCCACHE_REGION":        "eu-west-1",
		"AWS_ACCESS_KEY_ID":     "AKIA" + strings.ToUpper(randomHex(t)),
		"AWS_SECRET_ACCESS_KEY": "jetbake-planted-s3-secret-" + randomHex(t),
		"AWS_SESSION_TOKEN":     "",
		"ACTIONS_RUNTIME_TOKEN": "jetbake-planted-runtime-token-" + randomHex(t),
	}
	store, err := cacheserver.NewS3(planted["SCCACHE_REGION"], planted["AWS_ACCESS_KEY_ID"], planted["AWS_SECRET_ACCESS_KEY"], planted["SCCACHE_BUCKET"])
	require.NoError(t, err)
	t.Cleanup(store.Close)
	gha := cacheserver.NewGHA(planted["ACTIONS_RUNTIME_TOKEN"])
	t.Cleanup(gha.Close)
	planted["SCCACHE_ENDPOINT"] = store.URL
	planted["ACTIONS_RESULTS_URL"] = gha.URL
	for k, v := range planted {
		t.Setenv(k, v)
	}
	// BuildKit's own cache, on a server of its own.
	bk, bkCache := buildkitS3(t)

	matrixPath := f.demoPlanFile(t, "matrix.json", func(m map[string]any) { keepReleases(m, "jetpack6.2") })
	p, err := LoadPlan(matrixPath, AllowStandin(f.env.RepoRoot))
	require.NoError(t, err)
	_, err = f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	var written []string // everything jetbake printed or wrote
	build := func(matrix, addr string, args ...string) (*imagebuild.Report, sccache.Reported) {
		t.Helper()
		run := f.rawBuild(t, matrix, addr, args...)
		written = append(written, run.stdout, run.stderr, run.metadata)
		reports := sccacheReports(t, run.stderr)
		require.Contains(t, reports, "jetpack6.2 sm87", "the cargo step printed sccache's stats")
		return run.report, reports["jetpack6.2 sm87"]
	}
	s3Secrets := secretFlags("sccache_bucket", "sccache_region", "sccache_endpoint", "aws_access_key_id", "aws_secret_access_key", "aws_session_token")
	const prefix = "sccache/arm64-sm87-cuda12.6/"

	first, stats := build(matrixPath, f.env.Daemon.Addr, append(s3Secrets, "--cache-to", bkCache+",mode=max", "--push", "--provenance", "mode=max")...)
	require.Equal(t, "s3, name: jetbake-sccache, prefix: /"+prefix, stats.Location)
	requireCompiles(t, stats, "miss", "first runner")
	keys, err := store.Keys("jetbake-sccache", prefix)
	require.NoError(t, err)
	require.Len(t, keys, 1+len(workspaceLibraries), "sccache's check object and one entry per library: %v", keys)
	for _, r := range store.Requests() {
		require.NotEqual(t, 403, r.Status, "every request is signed with the planted key: %+v", r)
	}
	t.Logf("first runner: %d of %d router steps cached; sccache on S3: %d libraries compiled and stored, the router binary compiled",
		first.Timings.Releases[0].RouterCached, first.Timings.Releases[0].RouterSteps, len(workspaceLibraries))

	second, stats := build(matrixPath, f.freshDaemon(t), s3Secrets...)
	rt := second.Timings.Releases[0]
	require.Less(t, rt.RouterCached, rt.RouterSteps, "no BuildKit cache: the cargo step runs again")
	requireCompiles(t, stats, "hit", "fresh runner, no BuildKit cache")
	t.Logf("fresh runner, no change, no BuildKit cache: %d of %d router steps cached; sccache: %d of %d libraries from S3, the router binary compiled",
		rt.RouterCached, rt.RouterSteps, len(workspaceLibraries), len(workspaceLibraries))

	changedMatrix, changed := f.oneLineChange(t, "changed.json", "jetpack6.2")
	third, stats := build(changedMatrix, f.freshDaemon(t), append(s3Secrets, "--cache-from", bkCache, "--allow", "fs.read="+changed)...)
	rt = third.Timings.Releases[0]
	require.Positive(t, rt.RouterCached, "the steps before the change come from BuildKit's cache")
	require.Less(t, rt.RouterCached, rt.RouterSteps, "the steps from COPY router on run again")
	requireCompiles(t, stats, "hit", "fresh runner, one-line change")
	t.Logf("fresh runner, one-line change in router/src/main.rs, BuildKit's S3 cache: %d of %d router steps cached; sccache: %d of %d libraries from S3, the router binary compiled",
		rt.RouterCached, rt.RouterSteps, len(workspaceLibraries), len(workspaceLibraries))

	// The GitHub Actions cache, as TEI's pipeline hands it over.
	_, stats = build(matrixPath, f.env.Daemon.Addr, append(secretFlags("actions_results_url", "actions_runtime_token"), "--no-cache")...)
	require.Regexp(t, `^ghac, name: [0-9a-f]{64}, prefix: /sccache/$`, stats.Location)
	require.Equal(t, sccache.GHAVersion("0.10.0", "arm64-sm87-cuda12.6", true), strings.Fields(stats.Location)[2][:64],
		"the version is sccache's and the release's scope")
	requireCompiles(t, stats, "miss", "GitHub Actions cache, first run")
	require.Len(t, gha.Entries(), 1+len(workspaceLibraries))
	require.NotEmpty(t, gha.Tokens())
	for _, tok := range gha.Tokens() {
		require.Equal(t, planted["ACTIONS_RUNTIME_TOKEN"], tok, "the runner's token reached the cache service")
	}

	t.Run("no secret anywhere jetbake wrote or pushed", func(t *testing.T) {
		values := map[string]string{}
		for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "ACTIONS_RUNTIME_TOKEN", "SCCACHE_ENDPOINT", "ACTIONS_RESULTS_URL"} {
			values[k] = strings.TrimSuffix(planted[k], "/")
		}
		contents := registryContents(t, f.env.Registry)
		for name, data := range bucketContents(t, bk, "jetbake-cache") {
			contents["BuildKit's S3 cache "+name] = data
		}
		for _, key := range keys {
			data, err := store.Object("jetbake-sccache", key)
			require.NoError(t, err)
			contents["sccache's S3 cache "+key] = data
		}
		for i, text := range written {
			contents["output "+string(rune('A'+i))] = []byte(text)
		}
		for k, v := range values {
			require.Empty(t, whereFound(contents, v), "%s", k)
		}
		require.NotEmpty(t, whereFound(contents, "text_embeddings_backend_core"), "the search reaches the logs")
	})

	t.Run("only the cargo step mounts them", func(t *testing.T) {
		rel, _ := p.Release("jetpack6.2")
		var mounted []string
		for _, op := range provenanceOps(t, rel.Tags[0]) {
			var ids []string
			for _, s := range op.Op.Op.Exec.SecretEnv {
				ids = append(ids, s.ID)
			}
			if len(ids) > 0 {
				require.ElementsMatch(t, sccacheSecrets, ids)
				mounted = append(mounted, strings.Join(op.Op.Op.Exec.Meta.Args, " "))
			}
		}
		require.Len(t, mounted, 1, "one step: %v", mounted)
		require.Contains(t, mounted[0], "cargo build --release --bin text-embeddings-router")
	})
}

// bucketContents reads every object of a gofakes3 bucket, gzip blobs also
// uncompressed.
func bucketContents(t *testing.T, b *s3mem.Backend, bucket string) map[string][]byte {
	t.Helper()
	list, err := b.ListBucket(bucket, nil, gofakes3.ListBucketPage{})
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, c := range list.Contents {
		obj, err := b.GetObject(bucket, c.Key, nil)
		require.NoError(t, err)
		data, err := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		require.NoError(t, err)
		out[c.Key] = data
		if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			require.NoError(t, err)
			plain, err := io.ReadAll(zr)
			require.NoError(t, err)
			out[c.Key+" (uncompressed)"] = plain
		}
	}
	return out
}

// llbOp is the part of a provenance's llbDefinition entry the test reads:
// an exec operation (BuildKit's pb.Op as solver/pb/json.go writes it).
type llbOp struct {
	Op struct {
		Op struct {
			Exec struct {
				Meta struct {
					Args []string `json:"args"`
				} `json:"meta"`
				SecretEnv []struct {
					ID   string `json:"ID"`
					Name string `json:"name"`
				} `json:"secretenv"`
			} `json:"exec"`
		} `json:"Op"`
	} `json:"op"`
}

// provenanceOps reads the build definition of the image's SLSA provenance
// (mode=max): the LLB operations BuildKit ran.
func provenanceOps(t *testing.T, tag string) []llbOp {
	t.Helper()
	for kind, stmts := range attestations(t, mustRef(t, tag)) {
		if !strings.HasPrefix(kind, "https://slsa.dev/provenance/") {
			continue
		}
		for _, dt := range stmts {
			var stmt struct {
				Predicate struct {
					BuildConfig struct {
						LLB []llbOp `json:"llbDefinition"`
					} `json:"buildConfig"`
					BuildDefinition struct {
						InternalParameters struct {
							BuildConfig struct {
								LLB []llbOp `json:"llbDefinition"`
							} `json:"buildConfig"`
						} `json:"internalParameters"`
					} `json:"buildDefinition"`
				} `json:"predicate"`
			}
			require.NoError(t, json.Unmarshal(dt, &stmt))
			ops := append(stmt.Predicate.BuildConfig.LLB, stmt.Predicate.BuildDefinition.InternalParameters.BuildConfig.LLB...)
			require.NotEmpty(t, ops, "mode=max records the build definition")
			return ops
		}
	}
	require.Fail(t, "no SLSA provenance in "+tag)
	return nil
}
