package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// standinRouter is the stand-in text-embeddings-router built for this
// machine, linked against the stand-in libcuda (soname libcuda.so.1, in
// dir), as the e2e images hold it for arm64; the template still lacks its
// build facts.
type standinRouter struct {
	dir, template string
}

var (
	routerOnce  sync.Once
	routerBuilt standinRouter
	routerErr   error
)

// buildRouter builds the stand-in router once per test binary.
func buildRouter(t *testing.T) standinRouter {
	t.Helper()
	routerOnce.Do(func() {
		dir := filepath.Join(eptest.Build(t).Dir, "router")
		if routerErr = os.MkdirAll(dir, 0o755); routerErr != nil {
			return
		}
		lib := filepath.Join(dir, host.LibcudaName)
		routerBuilt = standinRouter{dir: dir, template: filepath.Join(dir, "router-template")}
		steps := [][]string{
			{"gcc", "-shared", "-fPIC", "-Wl,-soname," + host.LibcudaName, "-o", lib, eptest.RepoPath("builder", "internal", "standin", "cuda", "libcuda.c")},
			{"go", "build", "-tags", "netgo,cuda", "-o", routerBuilt.template, "github.com/jetbake/jetbake/builder/internal/standin/tei/cmd/router"},
		}
		routerErr = eptest.RunSteps(steps, "CGO_ENABLED=1", "CGO_LDFLAGS="+lib)
	})
	require.NoError(t, routerErr)
	return routerBuilt
}

// installRouter writes the stand-in router as the image's router-87 under
// root, with the build facts the stand-in cargo appends (for SM 8.7, with
// jetson-compute-cap.sh's (87, 87) arm or, withArm false, upstream's
// table, which refuses an Orin), and returns the environment that lets it
// find the stand-in driver. The facts are written in the layout of
// tei.AppendFacts (builder/internal/standin/tei/facts.go), which this
// package may not import: JSON, its length as 8 little-endian bytes, the
// magic. A router that cannot read them exits 70, which fails every test.
func installRouter(t *testing.T, root string, withArm bool) []string {
	t.Helper()
	r := buildRouter(t)
	template, err := os.ReadFile(r.template)
	require.NoError(t, err)
	table := `{"runtime": {"lo": 80, "hi": 89}, "compile": {"lo": 80, "hi": 80}, "result": true}`
	if withArm {
		table = `{"runtime": {"lo": 87, "hi": 87}, "compile": {"lo": 87, "hi": 87}, "result": true}, ` + table
	}
	facts := `{"package": "text-embeddings-router", "version": "1.9.3", "cuda": true, "compute_cap": 87, "table": [` + table +
		`], "target_cpu": "generic"}`
	var b bytes.Buffer
	b.Write(template)
	b.WriteString(facts)
	b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(facts))))
	b.WriteString("JBTEI\x00\x01\n")
	eptest.WriteFile(t, root, "/usr/local/bin/router-87", b.String(), 0o755)
	return []string{"LD_LIBRARY_PATH=" + r.dir}
}

// writeModel writes a small embedding model's folder: config.json with
// hidden_size, tokenizer.json and a stand-in for the weights, less skip.
func writeModel(t *testing.T, hidden int, skip ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "model")
	files := map[string]string{
		"config.json": `{"architectures": ["BertModel"], "model_type": "bert", "hidden_size": ` + strconv.Itoa(hidden) +
			`, "max_position_embeddings": 512}`,
		"tokenizer.json":    `{"version": "1.0", "model": {"type": "WordPiece"}}`,
		"model.safetensors": "stand-in weights",
	}
	for _, s := range skip {
		delete(files, s)
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	return dir
}

// serveCheckOf returns the serve check, which comes last.
func serveCheckOf(t *testing.T, ev *evidencespec.Evidence) evidencespec.Check {
	t.Helper()
	last := ev.Result.Checks[len(ev.Result.Checks)-1]
	require.Equal(t, evidencespec.CheckServe, last.Name, "the serve check comes after the smoke run")
	return last
}

func TestProbeServePass(t *testing.T) {
	root := orinRoot(t)
	env := installRouter(t, root, true)
	model := writeModel(t, 384)
	r := runProbeIn(t, root, "arm64", []string{"--kernel", "--smoke", "--serve", model},
		append(env, "JETBAKE_IMAGE_DIGEST="+testDigest, "FAKE_TEI_LOAD_MS=300")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, r.ev.Result.Pass)
	c := serveCheckOf(t, &r.ev)
	require.Equal(t, evidencespec.Passed, c.Status)
	require.Regexp(t, `^20 requests to the embed route gave finite vectors of 384 values \(load [0-9]+\.[0-9]{3} ms, p50 [0-9]+\.[0-9]{3} ms, p95 [0-9]+\.[0-9]{3} ms\)$`, c.Detail)
	s := r.ev.Result.Serve
	require.NotNil(t, s)
	require.Equal(t, 384, s.Dimensions)
	require.Equal(t, "float16", s.DType, "the router ran on the GPU the stand-in driver reports")
	require.Equal(t, 20, s.Requests)
	require.Empty(t, s.Step+s.ModelID, "a local folder's path is never kept")
	require.GreaterOrEqual(t, s.LoadMillis, 300.0, "the slow load is in the load time")
	require.GreaterOrEqual(t, s.P95Millis, s.P50Millis)
	require.NotContains(t, r.stdout, model)
	require.NotContains(t, r.stdout, "/tmp")
	require.Contains(t, r.stderr, "Starting HTTP server: 127.0.0.1:", "the router's own log, on 127.0.0.1")
	require.Contains(t, r.stderr, "signal received, starting graceful shutdown", "stopped by SIGTERM")
	require.True(t, strings.HasSuffix(r.stderr, "jetbake-probe: pass: all 13 checks passed\n"), r.stderr)
}

// TestProbeServeFailures runs the serve check on each way the router, or
// its model, fails: the check fails (or is skipped when it cannot run) at
// its step with its phrase, and the router's own words reach stderr.
func TestProbeServeFailures(t *testing.T) {
	tests := []struct {
		name       string
		noArm      bool
		model      func(t *testing.T) string
		args, env  []string
		status     evidencespec.Status
		detail     string
		step       string
		wantStderr string
	}{
		{name: "the compute-cap refusal, before it listens", noArm: true, model: func(t *testing.T) string { return writeModel(t, 384) },
			status: evidencespec.Failed, step: "start", detail: "the router exited 1 before its health route answered",
			wantStderr: "Runtime compute cap 87 is not compatible with compile time compute cap 87"},
		{name: "a model folder without config.json", model: func(t *testing.T) string { return writeModel(t, 384, "config.json") },
			status: evidencespec.Failed, step: "start", detail: "the router exited 1 before its health route answered",
			wantStderr: "Error: `config.json` not found\n\nCaused by:\n    No such file or directory (os error 2)\n"},
		{name: "a load slower than the bound", model: func(t *testing.T) string { return writeModel(t, 384) },
			args: []string{"--load-timeout", "1s"}, env: []string{"FAKE_TEI_LOAD_MS=5000"},
			status: evidencespec.Failed, step: "health", detail: "the router's health route did not answer within 1s",
			wantStderr: "Starting model backend"},
		{name: "NaN in the vectors", model: func(t *testing.T) string { return writeModel(t, 384) }, env: []string{"FAKE_TEI_EMBED=nan"},
			status: evidencespec.Failed, step: "finite", detail: "the embed route gave 1 values that are not finite (NaN or infinite, null in TEI's JSON)"},
		{name: "an infinity in the vectors", model: func(t *testing.T) string { return writeModel(t, 16) }, env: []string{"FAKE_TEI_EMBED=inf"},
			status: evidencespec.Failed, step: "finite", detail: "the embed route gave 1 values that are not finite (NaN or infinite, null in TEI's JSON)"},
		{name: "a Hub id without --allow-download", model: func(*testing.T) string { return "BAAI/bge-small-en-v1.5" },
			status: evidencespec.Skipped, detail: evidencespec.DetailServeNoDownload},
		{name: "a folder that is not there", model: func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") },
			status: evidencespec.Skipped, detail: evidencespec.DetailServeNoModel},
		{name: "a Hub id the router cannot download here", model: func(*testing.T) string { return "BAAI/bge-small-en-v1.5" },
			args: []string{"--allow-download"}, status: evidencespec.Failed, step: "start", detail: "the router exited 0 before its health route answered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := orinRoot(t)
			env := installRouter(t, root, !tt.noArm)
			args := append([]string{"--smoke", "--serve", tt.model(t)}, tt.args...)
			r := runProbeIn(t, root, "arm64", args, append(append(env, "JETBAKE_IMAGE_DIGEST="+testDigest), tt.env...)...)
			require.Equal(t, 1, r.code, r.stderr)
			c := serveCheckOf(t, &r.ev)
			require.Equal(t, tt.status, c.Status, c.Detail)
			require.Equal(t, tt.detail, c.Detail)
			require.Contains(t, r.stderr, tt.wantStderr)
			if tt.status == evidencespec.Skipped {
				require.Nil(t, r.ev.Result.Serve)
				return
			}
			require.NotNil(t, r.ev.Result.Serve)
			require.Equal(t, tt.step, r.ev.Result.Serve.Step)
			if strings.Contains(tt.name, "Hub id") {
				require.Equal(t, "BAAI/bge-small-en-v1.5", r.ev.Result.Serve.ModelID, "a Hub id is a safe token")
			}
		})
	}
}

// TestProbeServeNoBinary: without a chosen binary the check does not run.
func TestProbeServeNoBinary(t *testing.T) {
	root := eptest.NewSysroot(t, "no-runtime", "jetpack6")
	r := runProbeIn(t, root, "arm64", []string{"--serve", writeModel(t, 8)})
	c := serveCheckOf(t, &r.ev)
	require.Equal(t, evidencespec.Check{Name: "serve", Status: evidencespec.Skipped, Detail: evidencespec.DetailServeNoBinary}, c)
}

func TestPercentile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	require.Equal(t, 5.0, percentile(v, 50))
	require.Equal(t, 10.0, percentile(v, 95))
	require.Equal(t, 5.0, percentile(v[:1], 95))
	require.Equal(t, 0.0, percentile(nil, 50))
}

func TestHubID(t *testing.T) {
	for _, ok := range []string{"BAAI/bge-small-en-v1.5", "sentence-transformers/all-MiniLM-L6-v2", "gpt2"} {
		require.True(t, hubID(ok), ok)
	}
	for _, bad := range []string{"/model", "a/b/c", "../x", "org/..", "a b/c", "", "org/"} {
		require.False(t, hubID(bad), bad)
	}
}
