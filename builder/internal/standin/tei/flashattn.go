package tei

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// FlashGate is the runtime compute caps for which TEI's
// backends/candle/src/flash_attn.rs runs flash-attention v2: the terms of
// the condition of its "else if" on runtime_compute_cap, each a Range.
type FlashGate []Range

// Accepts reports whether flash-attention v2 runs on a GPU of runtime
// capability (110), as flash_attn_varlen decides.
func (g FlashGate) Accepts(runtime int) bool {
	return slices.ContainsFunc(g, func(r Range) bool { return r.matches(runtime) })
}

// flashFn is the function whose gate is read.
const flashFn = "fn flash_attn_varlen("

// ParseFlashGate reads the flash-attention v2 gate of flash_attn.rs: the
// first "else if" on runtime_compute_cap in fn flash_attn_varlen, up to
// the "{" that ends its condition, with terms
// "(80..90).contains(&runtime_compute_cap)" (the end excluded, as in Rust)
// and "runtime_compute_cap == 90" joined by "||", as TEI v1.8.0 to main
// write it (on one line, or a term a line). A hand-written reader rather
// than a Rust parser, as ParseComputeCapTable: the stand-in only needs the
// terms, and a gate it cannot read fails the build naming the term, as
// rustc would fail on code it cannot compile.
func ParseFlashGate(source string) (FlashGate, error) {
	start := strings.Index(source, flashFn)
	if start < 0 {
		return nil, fmt.Errorf("no %s...) in the source", strings.TrimSpace(flashFn))
	}
	var cond strings.Builder
	inGate, closed := false, false
	for _, line := range strings.Split(source[start:], "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if !inGate {
			_, after, ok := strings.Cut(line, "else if")
			if !ok || !strings.Contains(after, "runtime_compute_cap") {
				continue
			}
			inGate, line = true, after
		}
		if body, ok := strings.CutSuffix(line, "{"); ok {
			cond.WriteString(" " + body)
			closed = true
			break
		}
		cond.WriteString(" " + line)
	}
	if !closed {
		return nil, fmt.Errorf("%s) has no \"else if\" on runtime_compute_cap ending in {", strings.TrimSpace(flashFn))
	}
	var gate FlashGate
	for _, term := range strings.Split(cond.String(), "||") {
		r, err := parseFlashTerm(strings.Join(strings.Fields(term), " "))
		if err != nil {
			return nil, err
		}
		gate = append(gate, r)
	}
	return gate, nil
}

// parseFlashTerm reads "(80..90).contains(&runtime_compute_cap)" or
// "runtime_compute_cap == 90".
func parseFlashTerm(term string) (Range, error) {
	if n, ok := strings.CutPrefix(term, "runtime_compute_cap == "); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return Range{}, fmt.Errorf("flash gate term %q: %q is not a number", term, n)
		}
		return Range{Lo: v, Hi: v}, nil
	}
	if r, ok := strings.CutSuffix(term, ").contains(&runtime_compute_cap)"); ok && strings.HasPrefix(r, "(") {
		lo, hi, ok := strings.Cut(strings.TrimPrefix(r, "("), "..")
		l, err1 := strconv.Atoi(lo)
		h, err2 := strconv.Atoi(hi)
		if ok && err1 == nil && err2 == nil && l >= 0 && l < h {
			return Range{Lo: l, Hi: h - 1}, nil
		}
	}
	return Range{}, fmt.Errorf("flash gate term %q is not (A..B).contains(&runtime_compute_cap) or runtime_compute_cap == N", term)
}

// compileFlashAttn is candle-flash-attn in the candle backend (its
// flash-attn feature): flash_attn.rs's gate becomes the router's, and
// candle-flash-attn's build script links libcudart and libstdc++
// dynamically, whatever cudarc's linking (see RouterNeeds).
func compileFlashAttn(candle *Manifest, p *BuildPlan) error {
	src := filepath.Join(filepath.Dir(candle.Path), "src", "flash_attn.rs")
	data, err := os.ReadFile(src)
	if err != nil {
		return &CompileError{Crate: candle.Package.Name, Kind: "lib", Message: fmt.Sprintf("error: couldn't read `%s`: %v", src, err)}
	}
	gate, err := ParseFlashGate(string(data))
	if err != nil {
		return &CompileError{Crate: candle.Package.Name, Kind: "lib", Message: fmt.Sprintf("error: %s: %v (the stand-in cargo reads the gate of flash_attn_varlen)", src, err)}
	}
	p.Facts.FlashAttn, p.Facts.FlashGate = true, gate
	return nil
}

// flashModels are the model types (config.json's model_type) for which
// TEI's candle backend (backends/candle/src/lib.rs, v1.8.0 to main) starts
// a Flash* model when flash attention v2 is usable and the dtype is fp16,
// with that model's name.
var flashModels = map[string]string{
	"bert": "FlashBert", "xlm-roberta": "FlashBert", "camembert": "FlashBert", "roberta": "FlashBert",
	"distilbert": "FlashDistilBert", "gte": "FlashGTE", "new": "FlashGTE", "mistral": "FlashMistral",
	"modernbert": "FlashModernBert", "nomic_bert": "FlashNomicBert", "qwen2": "FlashQwen2", "qwen3": "FlashQwen3",
}

// flashOnly are the model types TEI runs on CUDA only with flash attention
// v2, and the sentence it refuses them with otherwise.
var flashOnly = map[string]string{
	"mistral": "Mistral is only supported on Cuda devices in fp16 with flash attention v2 enabled",
	"qwen2":   "Qwen2 is only supported on Cuda devices in fp16 with flash attention v2 enabled",
}

// useFlashAttn is TEI's use_flash_attn(&[FlashAttn::V2]): USE_FLASH_ATTENTION
// (default true) on, candle-flash-attn compiled in, a runtime cap of 80 or more.
func useFlashAttn(f BuildFacts, e RouterEnv, runtime int) bool {
	v := e.Getenv("USE_FLASH_ATTENTION")
	if v == "" {
		v = "True"
	}
	return strings.ToLower(v) == "true" && f.FlashAttn && runtime >= 80
}

// startModel is the candle backend's model start on the device, then the
// router's health check, which runs the model's forward on a test batch
// (router/src/lib.rs: backend.health() before the server starts).
// runtime is the GPU's compute cap, 0 on the CPU. A Flash* model whose
// gate refuses the GPU fails there with TEI's words.
func startModel(f BuildFacts, e RouterEnv, m *model, runtime int, log *logger) *startError {
	device := "Cpu"
	if runtime > 0 {
		device = "Cuda(CudaDevice(DeviceId(1)))"
	}
	name, flash := flashModels[m.modelType]
	if !(flash && runtime > 0 && m.dtype == "float16" && useFlashAttn(f, e, runtime)) {
		if msg, ok := flashOnly[m.modelType]; ok && runtime > 0 {
			return anyhowError("Could not create backend", "Could not start backend: "+msg)
		}
		log.info("text_embeddings_backend_candle", "Starting Bert model on "+device)
		return nil
	}
	log.info("text_embeddings_backend_candle", "Starting "+name+" model on "+device)
	if !f.FlashGate.Accepts(runtime) {
		return anyhowError("Model backend is not healthy", "GPU with CUDA capability "+strconv.Itoa(runtime)+" is not supported")
	}
	return nil
}
