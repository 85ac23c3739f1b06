package tei

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The failure knobs of the serving router, set in its environment as the
// stand-in libcuda's FAKE_CUDA_* are: what only a real model on a real GPU
// would do.
const (
	// KnobLoadMillis delays the model's load (weights onto the GPU, warm
	// up) by that many milliseconds before the router listens: a slow load.
	KnobLoadMillis = "FAKE_TEI_LOAD_MS"
	// KnobEmbed set to "nan" or "inf" makes one value of every vector NaN
	// or infinite, as broken weights or an fp16 overflow do; TEI's JSON
	// (serde_json) writes either as null.
	KnobEmbed = "FAKE_TEI_EMBED"
)

// Defaults of TEI's router flags (router/src/main.rs, v1.9.3).
const (
	defaultHostname         = "0.0.0.0"
	defaultPort             = "3000"
	maxBatchTokens          = 16384
	maxConcurrentRequests   = 512
	maxClientBatchSize      = 32
	defaultTokenizerWorkers = 4
)

// serveArgs are the router flags the serving stand-in reads, each also
// from the environment variable clap gives it (MODEL_ID, PORT, HOSTNAME,
// JSON_OUTPUT), the flag first.
type serveArgs struct {
	modelID, hostname, port string
	jsonOutput              bool
}

// readServeArgs reads the flags as clap does: "--flag value" or
// "--flag=value" (-p for the port), then the environment, then TEI's
// defaults. HOSTNAME is the container's name under Docker, which TEI reads
// too (and then listens on 0.0.0.0, as it is no address).
func readServeArgs(e RouterEnv) serveArgs {
	a := serveArgs{modelID: e.Getenv("MODEL_ID"), hostname: e.Getenv("HOSTNAME"), port: e.Getenv("PORT"),
		jsonOutput: e.Getenv("JSON_OUTPUT") == "true"}
	for i := 0; i < len(e.Args); i++ {
		name, value, inline := strings.Cut(e.Args[i], "=")
		take := func() string {
			if inline {
				return value
			}
			if i+1 < len(e.Args) {
				i++
				return e.Args[i]
			}
			return ""
		}
		switch name {
		case "--model-id":
			a.modelID = take()
		case "--hostname":
			a.hostname = take()
		case "--port", "-p":
			a.port = take()
		case "--json-output":
			a.jsonOutput = true
		}
	}
	if a.hostname == "" {
		a.hostname = defaultHostname
	}
	if a.port == "" {
		a.port = defaultPort
	}
	return a
}

// localModel reports whether the model id names a folder, which TEI loads
// instead of downloading from the Hub (router/src/lib.rs: model_id_path
// exists and is a directory).
func localModel(id string) bool {
	st, err := os.Stat(id)
	return id != "" && err == nil && st.IsDir()
}

// model is what the router read of a local model folder.
type model struct {
	id, dtype, pooling string
	modelType          string
	hidden             int
	maxInput           int
}

// startError is a failure of TEI's start: main returns it, and Rust prints
// "Error: " and anyhow's chain to stderr and exits 1 (101 for a panic).
type startError struct {
	text string
	code int
}

func (e *startError) Error() string { return e.text }

// anyhowError writes an anyhow error with its context as main prints it.
func anyhowError(context string, causes ...string) *startError {
	var b strings.Builder
	b.WriteString("Error: " + context + "\n")
	if len(causes) > 0 {
		b.WriteString("\nCaused by:\n")
		for i, c := range causes {
			fmt.Fprintf(&b, "%*s%s\n", 4*(i+1), "", strings.ReplaceAll(c, "\n", "\n"+strings.Repeat(" ", 4*(i+1))))
		}
	}
	return &startError{text: b.String(), code: 1}
}

// loadModel reads the folder as TEI's router and candle backend do, in
// their order: config.json (the router's ModelConfig), the pooling,
// tokenizer.json, then in the backend the weights and the model's own
// config (hidden_size). The compute-cap gate comes after it, in the
// backend (RunRouter).
func loadModel(dir string, log *logger) (*model, error) {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, anyhowError("`config.json` not found", osError(err))
	}
	var cfg struct {
		Architectures []string `json:"architectures"`
		ModelType     *string  `json:"model_type"`
		MaxPosition   *int     `json:"max_position_embeddings"`
		NPositions    *int     `json:"n_positions"`
		HiddenSize    *int     `json:"hidden_size"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, anyhowError("Failed to parse `config.json`", err.Error())
	}
	if cfg.MaxPosition == nil {
		cfg.MaxPosition = cfg.NPositions
	}
	for field, missing := range map[string]bool{"architectures": cfg.Architectures == nil, "model_type": cfg.ModelType == nil,
		"max_position_embeddings": cfg.MaxPosition == nil} {
		if missing {
			return nil, anyhowError("Failed to parse `config.json`", "missing field `"+field+"` at "+endOf(data))
		}
	}
	m := &model{id: dir, modelType: *cfg.ModelType, pooling: "cls", maxInput: min(*cfg.MaxPosition, maxBatchTokens)}
	if pool, err := os.ReadFile(filepath.Join(dir, "1_Pooling", "config.json")); err == nil && strings.Contains(string(pool), `"pooling_mode_mean_tokens": true`) {
		m.pooling = "mean"
	} else if err != nil {
		log.warn("text_embeddings_router", "The `--pooling` arg is not set and we could not find a pooling configuration (`1_Pooling/config.json`) for this model but the model is a BERT variant. Defaulting to `CLS` pooling.")
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		return nil, &startError{code: 101, text: "thread 'main' panicked at router/src/lib.rs:145:10:\n" +
			"tokenizer.json not found. text-embeddings-inference only supports fast tokenizers: " + osError(err) + "\n" +
			"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"}
	}
	log.info("text_embeddings_router", "Maximum number of tokens per request: "+strconv.Itoa(m.maxInput))
	log.info("text_embeddings_router", "Starting model backend")
	if !anyFile(dir, "model.safetensors", "pytorch_model.bin") {
		_, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json"))
		return nil, anyhowError("Could not create backend", "Could not start backend: "+osError(err))
	}
	if cfg.HiddenSize == nil || *cfg.HiddenSize <= 0 {
		return nil, anyhowError("Could not create backend", "Could not start backend: Model is not supported\n\nCaused by:\n    missing field `hidden_size` at "+endOf(data))
	}
	m.hidden = *cfg.HiddenSize
	return m, nil
}

// osError writes an I/O error as Rust's std::io::Error displays it.
func osError(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory (os error 2)"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied (os error 13)"
	case err == nil:
		return "unknown error"
	}
	return err.Error()
}

// anyFile reports whether one of the files is in dir.
func anyFile(dir string, names ...string) bool {
	for _, n := range names {
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

// endOf is where serde_json reports a missing field: after the object's
// closing brace, as "line L column C".
func endOf(data []byte) string {
	end := strings.LastIndexByte(string(data), '}') + 1
	line := strings.Count(string(data[:end]), "\n") + 1
	col := end - (strings.LastIndexByte(string(data[:end]), '\n') + 1)
	return "line " + strconv.Itoa(line) + " column " + strconv.Itoa(col)
}

// serveModel is TEI's start with a local model and its HTTP server: the
// model read, the backend's compute-cap gate, the load, then the routes on
// hostname:port until the context ends (SIGTERM or Ctrl-C, TEI's
// shutdown_signal). It returns the exit status.
func serveModel(f BuildFacts, e RouterEnv, a serveArgs) int {
	log := &logger{w: e.Stdout, json: a.jsonOutput}
	m, err := loadModel(a.modelID, log)
	var se *startError
	if errors.As(err, &se) {
		fmt.Fprint(e.Stderr, se.text)
		return se.code
	}
	m.dtype = "float32"
	runtime := 0
	if f.CUDA {
		gpu, _, ok := computeCapGate(f, e)
		if !ok {
			return 1
		}
		if gpu > 0 {
			m.dtype, runtime = "float16", gpu // TEI's default dtype on the candle CUDA backend
		}
	}
	if se := startModel(f, e, m, runtime, log); se != nil {
		fmt.Fprint(e.Stderr, se.text)
		return se.code
	}
	if ms, _ := strconv.Atoi(e.Getenv(KnobLoadMillis)); ms > 0 {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-e.context().Done():
			return 0
		}
	}
	log.info("text_embeddings_router", "Warming up model")
	addr := listenAddr(a, log)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprint(e.Stderr, anyhowError("Could not bind TCP Listener on "+addr, bindError(err)).text)
		return 1
	}
	log.info("text_embeddings_router::http::server", "Starting HTTP server: "+addr)
	log.info("text_embeddings_router::http::server", "Ready")
	srv := &http.Server{Handler: routes(f, m, e.Getenv(KnobEmbed)), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprint(e.Stderr, anyhowError("HTTP server failed", err.Error()).text)
		return 1
	case <-e.context().Done():
	}
	log.info("text_embeddings_router::shutdown", "signal received, starting graceful shutdown")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	return 0
}

// listenAddr is hostname:port as TEI builds its SocketAddr: a hostname
// that is not an IP address is warned about and replaced by 0.0.0.0.
func listenAddr(a serveArgs, log *logger) string {
	ip := net.ParseIP(a.hostname)
	if ip == nil {
		log.warn("text_embeddings_router", "Invalid hostname, defaulting to 0.0.0.0")
		ip = net.IPv4zero
	}
	return net.JoinHostPort(ip.String(), a.port)
}

// bindError writes a bind failure as Rust's io::Error does for the common
// cases.
func bindError(err error) string {
	switch {
	case strings.Contains(err.Error(), "address already in use"):
		return "Address already in use (os error 98)"
	case strings.Contains(err.Error(), "permission denied"):
		return "Permission denied (os error 13)"
	case strings.Contains(err.Error(), "cannot assign requested address"):
		return "Cannot assign requested address (os error 99)"
	}
	return err.Error()
}

// logger writes TEI's log lines on stdout, as tracing_subscriber's text
// or, with --json-output, JSON format.
type logger struct {
	w    interface{ Write([]byte) (int, error) }
	json bool
}

func (l *logger) info(target, msg string) { l.line("INFO", target, msg) }
func (l *logger) warn(target, msg string) { l.line("WARN", target, msg) }

func (l *logger) line(level, target, msg string) {
	ts := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	if l.json {
		data, _ := json.Marshal(struct {
			Timestamp string `json:"timestamp"`
			Level     string `json:"level"`
			Message   string `json:"message"`
			Target    string `json:"target"`
		}{ts, level, msg, target})
		fmt.Fprintf(l.w, "%s\n", data)
		return
	}
	fmt.Fprintf(l.w, "%s %5s %s: %s\n", ts, level, target, msg)
}
