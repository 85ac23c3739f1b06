package standin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
	"github.com/jetbake/jetbake/computecap"
)

// agree holds jetbake's reading of file to cuobjdump's (package nvreal):
// the same cubins and PTX in the same order, every module alone alike.
func agree(t *testing.T, p nvreal.Parts, file string) {
	t.Helper()
	c, err := p.Compare(t.Context(), file, t.TempDir())
	require.NoError(t, err, file)
	require.Equal(t, c.Cuobjdump, c.Jetbake, "%s: the executable fat binaries", file)
	require.Equal(t, c.CuobjdumpAll, c.JetbakeAll, "%s: every fat binary", file)
	require.Empty(t, c.ModuleFaults, "%s: the modules", file)
	require.NotZero(t, c.Modules, "%s holds no fat binary", file)
	t.Logf("%s: %d modules, %d cubins, %d PTX, as cuobjdump lists them", filepath.Base(file), c.Modules, c.Cuobjdump.Cubins(), c.Cuobjdump.PTX())
}

// TestOracleStandins: every fat binary the test bed writes reads in
// jetbake as NVIDIA's cuobjdump lists it: the writer's (package
// fatbintest), the stand-in CUDA libraries of every CUDA release of the
// facts table, the router templates (flash attention for the placeholder
// SM, then for the build's: the writer's for sm_110, NVIDIA's real one
// for sm_72 and sm_87) and the stand-in torch of each line.
func TestOracleStandins(t *testing.T) {
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	p, err := nvreal.Find(root)
	require.NoError(t, err, "run 'make deps'")
	k := Kit{Cache: filepath.Join(root, "bin", "standin"), Source: root}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		return path
	}

	// The writer's own files, as the fat-binary reader's tests use them.
	cubins := []fatbintest.Code{}
	for _, sm := range []string{"3.5", "5.0", "6.0", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0"} {
		cubins = append(cubins, fatbintest.Cubin(sm))
	}
	wide := fatbintest.Code{Kind: fatbin.KindCubin, SM: computecap.MustParse("8.7"), Size: 3000, HeaderSize: 80}
	agree(t, p, write("writer-nvcc.so", fatbintest.ELF(fatbintest.NVCC(append(cubins, fatbintest.PTX("9.0"))...)...)))
	agree(t, p, write("writer-modules.so", fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin",
		[]fatbintest.Code{fatbintest.Cubin("7.2"), fatbintest.Cubin("8.7")}, []fatbintest.Code{fatbintest.PTX("7.2")}, []fatbintest.Code{wide}))))
	agree(t, p, write("writer-thor.so", fatbintest.ELF(fatbintest.NVCC(fatbintest.Cubin("11.0"), fatbintest.Cubin("12.1"), fatbintest.PTX("12.1"))...)))

	// The stand-in CUDA libraries of every CUDA release the bases carry.
	for _, cuda := range []string{"11.4", "12.2", "12.6", "13.0"} {
		code, err := LibraryKernels(cuda)
		require.NoError(t, err)
		lib, err := BuildCUDALibrary(t.Context(), k.Cache, ARM64, "libcublas.so.12", code, code)
		require.NoError(t, err)
		agree(t, p, lib)
	}

	// The router templates, and the router the stand-in cargo writes of
	// each for the Jetsons' SMs.
	b := Base{CUDA: "12.6", Ubuntu: "22.04"}
	for _, kind := range []tei.TemplateKind{{Linking: tei.LinkStatic, FlashAttn: true}, {Linking: tei.LinkDynamic}} {
		path, err := k.routerTemplate(t.Context(), b, kind)
		require.NoError(t, err)
		agree(t, p, path)
		template, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, sm := range []int{72, 87, 110, 121} {
			var real []byte
			if sm < 100 {
				real, err = p.Fatbin(t.Context(), nvreal.FlashAttn(sm))
				require.NoError(t, err)
			}
			router := append([]byte(nil), template...)
			_, err := tei.SetKernels(router, sm, real)
			require.NoError(t, err)
			agree(t, p, write("router-"+kind.Name()+"-"+computecap.MustParse(itoaSM(sm)).SM(), router))
		}
	}

	// The stand-in torch of each line.
	for _, line := range pytorchLines() {
		fatbins, err := k.fatbins(t.Context(), line.Modules)
		require.NoError(t, err)
		lib, err := BuildFatbinLibrary(t.Context(), k.Cache, ARM64, "libtorch_cuda.so", fatbins...)
		require.NoError(t, err)
		agree(t, p, lib)
	}
}

// itoaSM is "8.7" of 87.
func itoaSM(sm int) string {
	return computecap.Capability{Major: sm / 10, Minor: sm % 10}.String()
}
