package tei

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeModel writes the files of a small BERT embedding model, leaving
// out those named in skip.
func writeModel(t *testing.T, hidden int, skip ...string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"config.json": `{"architectures": ["BertModel"], "model_type": "bert", "hidden_size": ` + strconv.Itoa(hidden) +
			`, "max_position_embeddings": 512}`,
		"tokenizer.json":    `{"version": "1.0"}`,
		"model.safetensors": "weights",
	}
	for _, s := range skip {
		delete(files, s)
	}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	return dir
}

// freePort is a port on 127.0.0.1 nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// syncBuffer is a bytes.Buffer safe for the router's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// served is a router serving in the test's process.
type served struct {
	base           string
	stdout, stderr *syncBuffer
	stop           context.CancelFunc
	code           chan int
}

// serve starts RunRouter with args and env in a goroutine.
func serve(t *testing.T, f BuildFacts, d Driver, env map[string]string, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &served{stdout: &syncBuffer{}, stderr: &syncBuffer{}, stop: cancel, code: make(chan int, 1)}
	for i, a := range args {
		if a == "--port" {
			s.base = "http://127.0.0.1:" + args[i+1]
		}
	}
	go func() {
		s.code <- RunRouter(f, RouterEnv{Args: args, Getenv: func(k string) string { return env[k] }, Driver: d,
			Stdout: s.stdout, Stderr: s.stderr, Context: ctx})
	}()
	t.Cleanup(cancel)
	return s
}

// waitHealthy polls the health route for up to 10 s.
func (s *served) waitHealthy(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := http.Get(s.base + "/health")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond, "stdout: %s\nstderr: %s", s.stdout, s.stderr)
}

// exit waits up to 10 s for the router's exit status.
func (s *served) exit(t *testing.T) int {
	t.Helper()
	select {
	case c := <-s.code:
		return c
	case <-time.After(10 * time.Second):
		require.Fail(t, "the router did not exit", "stdout: %s", s.stdout)
		return -1
	}
}

func post(t *testing.T, url, contentType, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, contentType, strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

func orinFacts() BuildFacts {
	patched := Table{{Runtime: Range{Lo: 87, Hi: 87}, Compile: Range{Lo: 87, Hi: 87}, Result: true}, {Runtime: Range{Any: true}, Compile: Range{Any: true}}}
	return BuildFacts{Package: "text-embeddings-router", Version: "1.9.3", CUDA: true, ComputeCap: 87, Table: patched, GitSHA: "06670157fb6c1523482219bdb2d1660277d38088"}
}

// TestServe serves TEI's routes from a local model folder: the health
// route, the model info, vectors of the config's hidden_size, TEI's
// errors, and a graceful stop.
func TestServe(t *testing.T) {
	dir := writeModel(t, 384)
	port := freePort(t)
	s := serve(t, orinFacts(), fakeDriver{major: 8, minor: 7}, map[string]string{"PORT": "80", "HOSTNAME": "c0ffee"},
		"--model-id", dir, "--hostname", "127.0.0.1", "--port", port)
	s.waitHealthy(t)
	require.Contains(t, s.stdout.String(), "Starting HTTP server: 127.0.0.1:"+port+"\n", "--port and --hostname win over PORT and HOSTNAME")
	require.Contains(t, s.stdout.String(), "Ready\n")

	resp, err := http.Get(s.base + "/info")
	require.NoError(t, err)
	var info map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	resp.Body.Close()
	require.Equal(t, dir, info["model_id"], "TEI reports a local model by its path")
	require.Equal(t, "float16", info["model_dtype"], "the CUDA backend's default")
	require.Equal(t, "1.9.3", info["version"])
	require.Equal(t, "06670157fb6c1523482219bdb2d1660277d38088", info["sha"])
	require.Equal(t, map[string]any{"embedding": map[string]any{"pooling": "cls"}}, info["model_type"])
	require.Nil(t, info["model_sha"])
	require.InDelta(t, 512, info["max_input_length"], 0)

	code, body := post(t, s.base+"/embed", "application/json", `{"inputs": ["a", "b"]}`)
	require.Equal(t, http.StatusOK, code, body)
	var vecs [][]float64
	require.NoError(t, json.Unmarshal([]byte(body), &vecs))
	require.Len(t, vecs, 2)
	var norm float64
	for _, v := range vecs[0] {
		norm += v * v
	}
	require.Len(t, vecs[0], 384)
	require.InDelta(t, 1, norm, 1e-4, "normalised, as TEI does by default")
	require.NotEqual(t, vecs[0], vecs[1])
	_, again := post(t, s.base+"/embed", "application/json", `{"inputs": "a"}`)
	var one [][]float64
	require.NoError(t, json.Unmarshal([]byte(again), &one))
	require.Equal(t, vecs[0], one[0], "the same text gives the same vector")

	for _, tt := range []struct {
		contentType, body string
		code              int
		want              string
	}{
		{"text/plain", `{"inputs": "a"}`, 415, "Expected request with `Content-Type: application/json`"},
		{"application/json", `{"inputs": []}`, 400, `{"error":"` + "`inputs` cannot be empty" + `","error_type":"empty"}`},
		{"application/json", `{"inputs": 3}`, 422, "Failed to deserialize the JSON body"},
		{"application/json", `{"inputs": [` + strings.Repeat(`"x",`, 32) + `"x"]}`, 413, "batch size 33 > maximum allowed batch size 32"},
	} {
		code, body := post(t, s.base+"/embed", tt.contentType, tt.body)
		require.Equal(t, tt.code, code, body)
		require.Contains(t, body, tt.want)
	}
	resp, err = http.Get(s.base + "/nope")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	s.stop()
	require.Equal(t, 0, s.exit(t), "a graceful stop on SIGTERM")
	require.Contains(t, s.stdout.String(), "signal received, starting graceful shutdown")
}

// TestServeFailures are TEI's ways of not serving, each with TEI's text.
func TestServeFailures(t *testing.T) {
	orin := fakeDriver{major: 8, minor: 7}
	tests := []struct {
		name   string
		facts  func(BuildFacts) BuildFacts
		dir    func(t *testing.T) string
		code   int
		stderr string
	}{
		{name: "no config.json", dir: func(t *testing.T) string { return writeModel(t, 384, "config.json") }, code: 1,
			stderr: "Error: `config.json` not found\n\nCaused by:\n    No such file or directory (os error 2)\n"},
		{name: "a config.json without max_position_embeddings", code: 1, dir: func(t *testing.T) string {
			d := writeModel(t, 384)
			require.NoError(t, os.WriteFile(filepath.Join(d, "config.json"), []byte(`{"architectures": ["BertModel"],
  "model_type": "bert"}`), 0o644))
			return d
		}, stderr: "Error: Failed to parse `config.json`\n\nCaused by:\n    missing field `max_position_embeddings` at line 2 column 23\n"},
		{name: "no tokenizer.json", dir: func(t *testing.T) string { return writeModel(t, 384, "tokenizer.json") }, code: 101,
			stderr: "tokenizer.json not found. text-embeddings-inference only supports fast tokenizers"},
		{name: "no weights", dir: func(t *testing.T) string { return writeModel(t, 384, "model.safetensors") }, code: 1,
			stderr: "Error: Could not create backend\n\nCaused by:\n    Could not start backend: No such file or directory (os error 2)\n"},
		{name: "no hidden_size", dir: func(t *testing.T) string { return writeModel(t, 0) }, code: 1,
			stderr: "Could not start backend: Model is not supported"},
		{name: "the compute-cap refusal, before it listens", dir: func(t *testing.T) string { return writeModel(t, 384) }, code: 1,
			facts: func(f BuildFacts) BuildFacts {
				f.Table = Table{{Runtime: Range{Lo: 80, Hi: 89}, Compile: Range{Lo: 80, Hi: 80}, Result: true}}
				return f
			},
			stderr: "Error: Could not create backend\n\nCaused by:\n    Could not start backend: Runtime compute cap 87 is not compatible with compile time compute cap 87\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := orinFacts()
			if tt.facts != nil {
				f = tt.facts(f)
			}
			port := freePort(t)
			s := serve(t, f, orin, nil, "--model-id", tt.dir(t), "--hostname", "127.0.0.1", "--port", port)
			require.Equal(t, tt.code, s.exit(t))
			require.Contains(t, s.stderr.String(), tt.stderr)
			require.NotContains(t, s.stdout.String(), "Ready")
		})
	}
}

// TestServeKnobs: a slow load listens only after it, and FAKE_TEI_EMBED
// breaks a value, which TEI's JSON writes as null.
func TestServeKnobs(t *testing.T) {
	port := freePort(t)
	start := time.Now()
	s := serve(t, orinFacts(), fakeDriver{major: 8, minor: 7}, map[string]string{KnobLoadMillis: "300", KnobEmbed: "nan"},
		"--model-id", writeModel(t, 8), "--hostname", "127.0.0.1", "--port", port, "--json-output")
	s.waitHealthy(t)
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	code, body := post(t, s.base+"/embed", "application/json; charset=utf-8", `{"inputs": "a"}`)
	require.Equal(t, 200, code)
	require.Contains(t, body, ",null,")
	var line map[string]any
	first, _, _ := strings.Cut(s.stdout.String(), "\n")
	require.NoError(t, json.Unmarshal([]byte(first), &line), "--json-output: %s", first)
	require.Equal(t, "WARN", line["level"], "the pooling warning comes first")
	require.Equal(t, "text_embeddings_router", line["target"])

	// A hostname that is no address: TEI warns and listens on 0.0.0.0.
	port = freePort(t)
	s = serve(t, orinFacts(), fakeDriver{init: 100}, map[string]string{"HOSTNAME": "c0ffee", "PORT": port}, "--model-id", writeModel(t, 8))
	s.base = "http://127.0.0.1:" + port
	s.waitHealthy(t)
	require.Contains(t, s.stdout.String(), "Invalid hostname, defaulting to 0.0.0.0")
	require.Contains(t, s.stdout.String(), "Starting HTTP server: 0.0.0.0:"+port, "PORT without --port")
	resp, err := http.Get(s.base + "/info")
	require.NoError(t, err)
	var info map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	resp.Body.Close()
	require.Equal(t, "float32", info["model_dtype"], "cuInit failed: on the CPU")
}

func TestEmbeddingIsFiniteAndStable(t *testing.T) {
	for _, text := range []string{"", "a", strings.Repeat("long ", 1000)} {
		v := Embedding(text, 1024)
		require.Len(t, v, 1024)
		for _, x := range v {
			require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0))
		}
		require.Equal(t, v, Embedding(text, 1024))
	}
}
