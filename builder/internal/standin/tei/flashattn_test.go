package tei

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// thorFacts is a router built for Thor with candle-cuda: the compute-cap
// arm added, flash-attention v2 compiled in with gate.
func thorFacts(gate FlashGate) BuildFacts {
	f := orinFacts()
	f.ComputeCap = 110
	f.Table = Table{{Runtime: Range{Lo: 110, Hi: 110}, Compile: Range{Lo: 110, Hi: 110}, Result: true}, {Runtime: Range{Any: true}, Compile: Range{Any: true}}}
	f.FlashAttn, f.FlashGate = true, gate
	return f
}

func TestParseFlashGate(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(teiSource, "backends", "candle", "src", "flash_attn.rs"))
	require.NoError(t, err)
	gate, err := ParseFlashGate(string(data))
	require.NoError(t, err)
	require.Equal(t, FlashGate{{Lo: 80, Hi: 89}, {Lo: 90, Hi: 90}, {Lo: 100, Hi: 100}, {Lo: 120, Hi: 120}}, gate, "v1.9.3's gate; (80..90) leaves 90 out, as Rust's ranges do")
	for cap, want := range map[int]bool{80: true, 87: true, 89: true, 90: true, 100: true, 120: true, 75: false, 101: false, 110: false, 121: false} {
		require.Equal(t, want, gate.Accepts(cap), "cap %d", cap)
	}

	oneLine := "fn flash_attn_varlen(q: usize) {\n    if runtime_compute_cap == 75 {\n    } else if (80..90).contains(&runtime_compute_cap) || runtime_compute_cap == 90 || runtime_compute_cap == 110 { // Jetson\n"
	gate, err = ParseFlashGate(oneLine)
	require.NoError(t, err)
	require.True(t, gate.Accepts(110))

	for name, src := range map[string]string{
		"no function":  "fn other() {}",
		"no gate":      "fn flash_attn_varlen() {\n    if runtime_compute_cap == 75 {\n",
		"unknown term": "fn flash_attn_varlen() {\n} else if runtime_compute_cap >= 80 {\n",
		"bad range":    "fn flash_attn_varlen() {\n} else if (90..80).contains(&runtime_compute_cap) {\n",
	} {
		_, err := ParseFlashGate(src)
		require.Error(t, err, name)
	}
}

// The shipped script's edit, read back by the stand-in cargo's reader:
// on the test data's TEI tree and on the script's fixtures of the v1.8.x
// and main layouts, exactly the Thor cap is added, and 87 (already in
// 80..90) is not.
func TestScriptEditOpensTheGateForExactlyTheSM(t *testing.T) {
	fixtures := "../../../../dockerfiles/testdata"
	for name, tree := range map[string]string{"test data": teiSource, "v1.8 layout": fixtures + "/oneline", "main layout": fixtures + "/upstream"} {
		t.Run(name, func(t *testing.T) {
			src := copySource(t)
			file := filepath.Join(src, "backends", "candle", "src", "flash_attn.rs")
			before, err := os.ReadFile(filepath.Join(tree, "backends", "candle", "src", "flash_attn.rs"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(file, before, 0o644))
			gateBefore, err := ParseFlashGate(string(before))
			require.NoError(t, err)
			out, err := exec.Command("sh", "../../../../dockerfiles/jetson-compute-cap.sh", src, "87", "110").CombinedOutput()
			require.NoError(t, err, string(out))
			after, err := os.ReadFile(file)
			require.NoError(t, err)
			gate, err := ParseFlashGate(string(after))
			require.NoError(t, err)
			require.Equal(t, append(gateBefore, Range{Lo: 110, Hi: 110}), gate)
			for cap := 60; cap < 130; cap++ {
				require.Equal(t, gateBefore.Accepts(cap) || cap == 110, gate.Accepts(cap), "cap %d", cap)
			}
		})
	}
}

// A Thor router whose flash gate refuses 110 fails at start, in the
// backend's health check, with TEI's words; the gate that lists 110
// serves; without flash attention the Bert model serves and Mistral is
// refused, as TEI does.
func TestFlashGateOnThor(t *testing.T) {
	thor := fakeDriver{major: 11, minor: 0}
	upstream := FlashGate{{Lo: 80, Hi: 89}, {Lo: 90, Hi: 90}, {Lo: 100, Hi: 100}, {Lo: 120, Hi: 120}}

	s := serve(t, thorFacts(upstream), thor, nil, "--model-id", writeModel(t, 384), "--hostname", "127.0.0.1", "--port", freePort(t))
	require.Equal(t, 1, s.exit(t))
	require.Equal(t, "Error: Model backend is not healthy\n\nCaused by:\n    GPU with CUDA capability 110 is not supported\n", s.stderr.String())
	require.Contains(t, s.stdout.String(), "Starting FlashBert model on Cuda(CudaDevice(DeviceId(1)))")
	require.NotContains(t, s.stdout.String(), "Ready")

	s = serve(t, thorFacts(append(upstream, Range{Lo: 110, Hi: 110})), thor, nil, "--model-id", writeModel(t, 384), "--hostname", "127.0.0.1", "--port", freePort(t))
	s.waitHealthy(t)
	code, body := post(t, s.base+"/embed", "application/json", `{"inputs": "a"}`)
	require.Equal(t, 200, code, body)
	s.stop()
	require.Equal(t, 0, s.exit(t))

	s = serve(t, thorFacts(upstream), thor, map[string]string{"USE_FLASH_ATTENTION": "false"}, "--model-id", writeModel(t, 384), "--hostname", "127.0.0.1", "--port", freePort(t))
	s.waitHealthy(t)
	require.Contains(t, s.stdout.String(), "Starting Bert model on Cuda")
	s.stop()
	require.Equal(t, 0, s.exit(t))

	mistral := writeModel(t, 384)
	require.NoError(t, os.WriteFile(filepath.Join(mistral, "config.json"), []byte(`{"architectures": ["MistralModel"], "model_type": "mistral", "hidden_size": 384, "max_position_embeddings": 512}`), 0o644))
	s = serve(t, thorFacts(upstream), thor, map[string]string{"USE_FLASH_ATTENTION": "false"}, "--model-id", mistral, "--hostname", "127.0.0.1", "--port", freePort(t))
	require.Equal(t, 1, s.exit(t))
	require.Contains(t, s.stderr.String(), "Could not start backend: Mistral is only supported on Cuda devices in fp16 with flash attention v2 enabled")

	// An Orin (87) is inside every gate; Xavier's router has no flash attention.
	s = serve(t, orinFacts(), fakeDriver{major: 8, minor: 7}, nil, "--model-id", writeModel(t, 384), "--hostname", "127.0.0.1", "--port", freePort(t))
	s.waitHealthy(t)
	s.stop()
	require.Equal(t, 0, s.exit(t))
}

func TestBuildCompilesTheFlashGate(t *testing.T) {
	src := copySource(t)
	h := buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": "110"})
	p, err := Build(src, args(t, "--release", "--bin", "text-embeddings-router", "-F", "candle-cuda", "-F", "static-linking", "-F", "http", "--no-default-features"), h)
	require.NoError(t, err)
	require.True(t, p.Facts.FlashAttn)
	require.False(t, p.Facts.FlashGate.Accepts(110), "upstream's gate, not yet edited")

	p, err = Build(src, args(t, "--release", "--bin", "text-embeddings-router", "-F", "candle-cuda-volta", "-F", "static-linking", "-F", "http", "--no-default-features"), h)
	require.NoError(t, err)
	require.False(t, p.Facts.FlashAttn, "candle-cuda-volta has no flash attention")

	require.NoError(t, os.WriteFile(filepath.Join(src, "backends", "candle", "src", "flash_attn.rs"), []byte("fn flash_attn_varlen() {}\n"), 0o644))
	_, err = Build(src, args(t, "--release", "--bin", "text-embeddings-router", "-F", "candle-cuda", "-F", "static-linking", "-F", "http", "--no-default-features"), h)
	var ce *CompileError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Error(), "flash_attn.rs")
}

// bindgen_cuda's check in candle's kernel crates: CUDA_COMPUTE_CAP must be
// among the architectures the build image's nvcc lists, which come from
// the facts table per CUDA release as the stand-in bases' nvcc lists them.
func TestBuildFailsOnAnSMNvccDoesNotList(t *testing.T) {
	nvccList := func(cuda string) string {
		v, err := computecap.ParseCUDAVersion(cuda)
		require.NoError(t, err)
		var b strings.Builder
		for _, c := range computecap.GPUCodes(v) {
			b.WriteString(c.SM() + "\n")
		}
		return b.String()
	}
	a := args(t, "--release", "--bin", "text-embeddings-router", "-F", "candle-cuda", "-F", "static-linking", "-F", "http", "--no-default-features")
	for _, tt := range []struct {
		cuda, cap string
		want      string
	}{
		{"12.6", "110", "nvcc cannot target gpu arch 110. Available nvcc targets are [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90]."},
		{"12.9", "110", "nvcc cannot target gpu arch 110."},
		{"13.0", "101", "nvcc cannot target gpu arch 101."},
		{"13.0", "72", "nvcc cannot target gpu arch 72. Available nvcc targets are [75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121]."},
	} {
		h := buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": tt.cap})
		h.Output = nvccOf(nvccList(tt.cuda))
		_, err := Build(copySource(t), a, h)
		var be *BuildScriptError
		require.ErrorAs(t, err, &be, "sm_%s on CUDA %s", tt.cap, tt.cuda)
		require.Contains(t, be.Error(), "failed to run custom build command for `candle-kernels v0.8.4 (https://github.com/huggingface/candle?rev=")
		require.Contains(t, be.Error(), "bindgen_cuda-0.1.5/src/lib.rs")
		require.Contains(t, be.Error(), tt.want)
	}
	for cuda, cap := range map[string]string{"12.6": "87", "12.9": "101", "13.0": "110", "13.2": "87", "11.4": "72"} {
		h := buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": cap})
		h.Output = nvccOf(nvccList(cuda))
		_, err := Build(copySource(t), a, h)
		require.NoError(t, err, "sm_%s on CUDA %s", cap, cuda)
	}

	h := buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": "87"})
	h.LookPath = func(name string) (string, error) {
		if name == "nvcc" {
			return "", errors.New("not found")
		}
		return "/usr/bin/" + name, nil
	}
	_, err := Build(copySource(t), a, h)
	require.ErrorContains(t, err, "`nvcc` failed. Ensure that you have CUDA installed and that `nvcc` is in your PATH.")
}
