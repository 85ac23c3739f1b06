package e2e

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/imagebuild"
)

// cacheRun is one `jetbake build` of the cache tests: its report, what it
// printed (BuildKit's status as --progress rawjson) and its metadata file.
type cacheRun struct {
	report                   *imagebuild.Report
	stdout, stderr, metadata string
}

// rawBuild runs `jetbake build` of matrix on the daemon at addr, as a
// pipeline runs it, with --progress rawjson and a metadata file, and
// requires it to succeed.
func (f *fixture) rawBuild(t *testing.T, matrix, addr string, args ...string) cacheRun {
	t.Helper()
	metadata := filepath.Join(t.TempDir(), "build.json")
	code, stdout, stderr := jetbake(t.Context(), append([]string{"build", "-f", matrix, "--addr", addr, "--mirror", "nvcr.io=" + f.env.Registry,
		"--entrypoint-dir", f.entrypointDir, "--metadata-file", metadata, "--progress", "rawjson"}, append(f.allow(), args...)...)...)
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(metadata)
	require.NoError(t, err)
	var report imagebuild.Report
	require.NoError(t, json.Unmarshal(data, &report))
	return cacheRun{report: &report, stdout: stdout, stderr: stderr, metadata: string(data)}
}

// freshDaemon starts a buildkitd with an empty state, as a fresh runner
// has, and returns its address.
func (f *fixture) freshDaemon(t *testing.T) string {
	t.Helper()
	conn, err := daemon.Connect(t.Context(), daemon.WithBuildkitd(filepath.Join(f.env.BinDir(), "buildkitd")), daemon.WithStateDir(t.TempDir()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn.Addr
}

// buildkitS3 starts an S3 server (a Go one on 127.0.0.1) with the bucket
// jetbake-cache and returns it and BuildKit's cache attributes for it.
func buildkitS3(t *testing.T) (*s3mem.Backend, string) {
	t.Helper()
	bucket := s3mem.New()
	require.NoError(t, bucket.CreateBucket("jetbake-cache"))
	srv := httptest.NewServer(gofakes3.New(bucket).Server())
	t.Cleanup(srv.Close)
	return bucket, "type=s3,bucket=jetbake-cache,region=us-east-1,endpoint_url=" + srv.URL +
		",use_path_style=true,access_key_id=jetbake,secret_access_key=jetbake-test-key"
}

// oneLineChange writes a copy of the TEI-shaped source with one more line
// in router/src/main.rs, which Dockerfile-jetson copies, and a demo matrix
// of the releases that builds it, and returns the matrix's path and the
// copy's folder.
func (f *fixture) oneLineChange(t *testing.T, file string, releases ...string) (string, string) {
	t.Helper()
	changed := t.TempDir()
	require.NoError(t, os.CopyFS(changed, os.DirFS(filepath.Join(f.env.RepoRoot, TEISource))))
	mainRS := filepath.Join(changed, "router", "src", "main.rs")
	src, err := os.ReadFile(mainRS)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mainRS, append(src, []byte("// one line\n")...), 0o644))
	return f.demoPlanFile(t, file, func(m map[string]any) {
		keepReleases(m, releases...)
		m["router"].(map[string]any)["context"] = changed
	}), changed
}
