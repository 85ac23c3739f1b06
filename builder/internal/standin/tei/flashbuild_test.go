package tei

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// candle-flash-attn's build script in a build image whose compiler writes
// no object (the stand-in gcc of the native stand-in bases): an object
// an earlier build left in OUT_DIR (cargo's target folder is a cache mount
// every build of the SM and CUDA shares, one of them with NVIDIA's real
// nvcc) is no object of this build, so nothing is archived or linked
// (seen in make test: the stand-in nvcc's --lib then ran on the stale
// objects). The crate's source is checked out for nvcc, which compiles
// each kernel file in the crate's folder with bindgen_cuda's arguments.
func TestFlashAttnBuildScript(t *testing.T) {
	src := copySource(t)
	h := buildImage(t, map[string]string{"CUDA_COMPUTE_CAP": "87", "CARGO_HOME": "/usr/local/cargo"})
	type run struct {
		dir  string
		args []string
	}
	var runs []run
	h.Run = func(dir, name string, args ...string) ([]byte, error) {
		runs = append(runs, run{dir, append([]string{name}, args...)})
		return nil, nil
	}
	p := &BuildPlan{Output: filepath.Join(src, "target", "release", "text-embeddings-router"), Facts: BuildFacts{ComputeCap: 87}}
	outDir := filepath.Join(src, "target", "release", "build", "candle-flash-attn-2b7d0e", "out")
	require.NoError(t, os.MkdirAll(outDir, 0o755))
	stale := filepath.Join(outDir, "flash_api-f00983a446cebd9f.o")
	require.NoError(t, os.WriteFile(stale, []byte("an earlier build's object"), 0o644))

	b, err := buildFlashAttn(src, p, h)
	require.NoError(t, err)
	require.False(t, b.Archive, "no object of this build: nothing to archive")
	require.Nil(t, b.linkArgs())
	require.NoFileExists(t, stale)
	require.Len(t, runs, len(flashAttnKernels), "one nvcc run a kernel file, and no nvcc --lib")
	crate := "/usr/local/cargo/git/checkouts/candle-flash-attn/candle-flash-attn"
	for i, r := range runs {
		require.Equal(t, crate, r.dir)
		require.Equal(t, []string{"nvcc", "--gpu-architecture=sm_87", "-c", "-o"}, r.args[:4])
		require.Equal(t, flashAttnKernels[i], r.args[len(r.args)-1])
		require.FileExists(t, filepath.Join(h.Root, crate, flashAttnKernels[i]), "the crate's source, checked out")
		require.False(t, slices.Contains(r.args, "-ccbin"), "no NVCC_CCBIN, no -ccbin")
	}
	require.FileExists(t, filepath.Join(h.Root, crate, "kernels", "kernels.h"))
}
