package standin

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
)

// modules reads the fat binaries of the ELF file at path, one list of
// entries (as cuobjdump names them) per fat binary.
func modules(t *testing.T, data []byte) [][]string {
	t.Helper()
	entries, err := fatbin.ReadELF(bytes.NewReader(data), fatbin.Limits{})
	require.NoError(t, err)
	var out [][]string
	for _, m := range fatbin.Modules(entries) {
		var names []string
		for _, e := range m {
			names = append(names, e.String())
		}
		out = append(out, names)
	}
	return out
}

// CUDA's libraries that ship kernels hold a cubin for every SM of their
// release and PTX of the newest; the router templates hold the kernels of
// CUDA's static libraries (static linking) and candle-flash-attn's for
// the placeholder SM, which the stand-in cargo turns into the build's.
func TestStandinKernels(t *testing.T) {
	cache := t.TempDir()
	code, err := LibraryKernels("12.6.11")
	require.NoError(t, err)
	path, err := BuildCUDALibrary(t.Context(), cache, ARM64, "libcublas.so.12", code)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	name, _ := soname(t, data)
	require.Equal(t, "libcublas.so.12", name)
	cuda126 := []string{"sm_50 cubin", "sm_52 cubin", "sm_53 cubin", "sm_60 cubin", "sm_61 cubin", "sm_62 cubin", "sm_70 cubin",
		"sm_72 cubin", "sm_75 cubin", "sm_80 cubin", "sm_86 cubin", "sm_87 cubin", "sm_89 cubin", "sm_90 cubin", "compute_90 PTX"}
	require.Equal(t, [][]string{cuda126}, modules(t, data))
	code13, err := LibraryKernels("13.0")
	require.NoError(t, err)
	last := code13[len(code13)-1]
	require.Equal(t, fatbin.KindPTX, last.Kind)
	require.Equal(t, "12.1", last.SM.String(), "CUDA 13.0's newest SM")
	_, err = LibraryKernels("x")
	require.Error(t, err)

	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	k := Kit{Cache: cache, Source: root}
	b := Base{CUDA: "12.6", Ubuntu: "22.04"}
	flash := []string{"compute_30 PTX", "sm_30 cubin"}
	for kind, want := range map[tei.TemplateKind][][]string{
		{Linking: tei.LinkStatic, FlashAttn: true}: {flash, cuda126, cuda126, cuda126},
		{Linking: tei.LinkDynamic}:                 {flash},
		{}:                                         nil,
	} {
		path, err := k.routerTemplate(t.Context(), b, kind)
		require.NoError(t, err)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, want, modules(t, data), kind.Name())
		if want == nil {
			continue
		}
		n, err := tei.SetKernelSM(data, 87)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, []string{"compute_87 PTX", "sm_87 cubin"}, modules(t, data)[0], kind.Name())
	}
}
