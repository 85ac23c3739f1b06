package tei

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"mime"
	"net/http"
	"runtime"
	"strconv"
	"strings"
)

// routes are the TEI routes the stand-in serves (router/src/http/server.rs):
// GET /health (and GET /, as TEI routes it), GET /info, POST /embed.
// Methods and paths TEI does not route answer 405 and 404, as axum does.
func routes(f BuildFacts, m *model, knob string) http.Handler {
	mux := http.NewServeMux()
	health := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }
	mux.HandleFunc("GET /health", health)
	mux.HandleFunc("GET /{$}", health)
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, infoOf(f, m)) })
	mux.HandleFunc("POST /embed", func(w http.ResponseWriter, r *http.Request) { embed(w, r, m, knob) })
	return mux
}

// info is TEI's Info (router/src/lib.rs), the answer of GET /info, field
// for field in its order.
type info struct {
	ModelID               string         `json:"model_id"`
	ModelSHA              *string        `json:"model_sha"`
	ModelDType            string         `json:"model_dtype"`
	ServedModelName       string         `json:"served_model_name"`
	ModelType             map[string]any `json:"model_type"`
	MaxConcurrentRequests int            `json:"max_concurrent_requests"`
	MaxInputLength        int            `json:"max_input_length"`
	MaxBatchTokens        int            `json:"max_batch_tokens"`
	MaxBatchRequests      *int           `json:"max_batch_requests"`
	MaxClientBatchSize    int            `json:"max_client_batch_size"`
	AutoTruncate          bool           `json:"auto_truncate"`
	TokenizationWorkers   int            `json:"tokenization_workers"`
	Version               string         `json:"version"`
	SHA                   *string        `json:"sha"`
	DockerLabel           *string        `json:"docker_label"`
}

// infoOf is the model info TEI reports for a local model: its path as the
// id, no sha, the dtype the backend runs in.
func infoOf(f BuildFacts, m *model) info {
	var sha *string
	if f.GitSHA != "" {
		sha = &f.GitSHA
	}
	return info{ModelID: m.id, ModelDType: m.dtype, ServedModelName: m.id,
		ModelType:             map[string]any{"embedding": map[string]string{"pooling": m.pooling}},
		MaxConcurrentRequests: maxConcurrentRequests, MaxInputLength: m.maxInput, MaxBatchTokens: maxBatchTokens,
		MaxClientBatchSize: maxClientBatchSize, AutoTruncate: true, TokenizationWorkers: min(runtime.NumCPU(), defaultTokenizerWorkers),
		Version: f.Version, SHA: sha}
}

// errorResponse is TEI's ErrorResponse.
type errorResponse struct {
	Error     string `json:"error"`
	ErrorType string `json:"error_type"`
}

// embed answers POST /embed {"inputs": "text" | ["text", ...]} with one
// vector per input, as TEI's embed handler: the body must be JSON (axum's
// Json extractor: 415 without the content type, 400 for bad syntax, 422
// for another shape), a batch must not be empty (400) or larger than
// max_client_batch_size (413).
func embed(w http.ResponseWriter, r *http.Request, m *model, knob string) {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		http.Error(w, "Expected request with `Content-Type: application/json`", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 2<<20))
	if err != nil {
		writeJSON(w, http.StatusRequestEntityTooLarge, errorResponse{Error: "payload too large", ErrorType: "validation"})
		return
	}
	var req struct {
		Inputs json.RawMessage `json:"inputs"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "Failed to parse the request body as JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	inputs, ok := readInputs(req.Inputs)
	switch {
	case !ok:
		http.Error(w, "Failed to deserialize the JSON body into the target type: inputs: data did not match any variant of untagged enum Input", http.StatusUnprocessableEntity)
		return
	case len(inputs) == 0:
		writeJSON(w, http.StatusBadRequest, errorResponse{Error: "`inputs` cannot be empty", ErrorType: "empty"})
		return
	case len(inputs) > maxClientBatchSize:
		writeJSON(w, http.StatusRequestEntityTooLarge, errorResponse{
			Error:     "batch size " + strconv.Itoa(len(inputs)) + " > maximum allowed batch size " + strconv.Itoa(maxClientBatchSize),
			ErrorType: "validation"})
		return
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, in := range inputs {
		if i > 0 {
			b.WriteByte(',')
		}
		writeVector(&b, Embedding(in, m.hidden), knob)
	}
	b.WriteByte(']')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-compute-type", map[string]string{"float16": "gpu", "float32": "cpu"}[m.dtype])
	w.Header().Set("x-compute-characters", strconv.Itoa(chars(inputs)))
	_, _ = io.WriteString(w, b.String())
}

// readInputs reads TEI's Input: one string, or a list of strings.
func readInputs(raw json.RawMessage) ([]string, bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil && many != nil {
		return many, true
	}
	return nil, false
}

func chars(inputs []string) int {
	n := 0
	for _, s := range inputs {
		n += len([]rune(s))
	}
	return n
}

// Embedding is the stand-in model's vector for text: dims values from a
// hash of the text, normalised to length 1 as TEI normalises by default.
// The same text always gives the same vector, and every value is finite.
func Embedding(text string, dims int) []float32 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, text)
	state := h.Sum64()
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		state = splitmix64(state)
		x := float64(state>>11)/(1<<53)*2 - 1
		v[i] = float32(x)
		norm += x * x
	}
	if norm > 0 {
		scale := 1 / math.Sqrt(norm)
		for i := range v {
			v[i] = float32(float64(v[i]) * scale)
		}
	}
	return v
}

// splitmix64 is one step of the SplitMix64 generator.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	z := x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// writeVector writes v as serde_json writes a Vec<f32>: the shortest
// decimal of each value, and null for NaN and the infinities. With the
// knob "nan" or "inf", the middle value is broken first.
func writeVector(b *strings.Builder, v []float32, knob string) {
	if len(v) > 0 {
		switch knob {
		case "nan":
			v[len(v)/2] = float32(math.NaN())
		case "inf":
			v[len(v)/2] = float32(math.Inf(1))
		}
	}
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			b.WriteString("null")
			continue
		}
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
	}
	b.WriteByte(']')
}

// writeJSON writes v as the body, with TEI's status and content type.
// serde_json does not escape <, > and &.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, strings.TrimSuffix(b.String(), "\n"))
}
