package nvreal_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/builder/internal/standin"
)

// parts finds NVIDIA's parts in this checkout's bin/deps, or fails: the
// oracle is never skipped.
func parts(t *testing.T) nvreal.Parts {
	t.Helper()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	p, err := nvreal.Find(root)
	require.NoError(t, err, "run 'make deps'")
	return p
}

// compare holds jetbake's reading of file to cuobjdump's and logs the
// per-file result.
func compare(t *testing.T, p nvreal.Parts, file string) nvreal.Comparison {
	t.Helper()
	c, err := p.Compare(context.Background(), file, t.TempDir())
	require.NoError(t, err)
	t.Logf("%s: jetbake %d modules, %d cubins, %d PTX; cuobjdump %d cubins, %d PTX; with __nv_relfatbin: jetbake %d modules, %d cubins, %d PTX; cuobjdump --all-fatbin %d cubins, %d PTX",
		filepath.Base(file), c.Modules, c.Jetbake.Cubins(), c.Jetbake.PTX(), c.Cuobjdump.Cubins(), c.Cuobjdump.PTX(),
		c.ModulesAll, c.JetbakeAll.Cubins(), c.JetbakeAll.PTX(), c.CuobjdumpAll.Cubins(), c.CuobjdumpAll.PTX())
	require.Equal(t, c.Cuobjdump, c.Jetbake, "%s: the executable fat binaries", file)
	require.Equal(t, c.CuobjdumpAll, c.JetbakeAll, "%s: every fat binary", file)
	require.Empty(t, c.ModuleFaults, "%s: the modules", file)
	return c
}

// TestOracleRealLibraries: jetbake reads every NVIDIA library `make deps`
// fetched as cuobjdump lists it.
func TestOracleRealLibraries(t *testing.T) {
	p := parts(t)
	libs, err := p.Libraries()
	require.NoError(t, err)
	// cuBLAS 11.8's 225 fat binaries; cuFFT's 12 in .nv_fatbin, which the
	// CUDA runtime loads, and 6 more relocatable ones in __nv_relfatbin.
	modules := map[string][2]int{"libcublas.so.11.11.3.6": {225, 225}, "libcufft.so.10.9.0.58": {12, 18}, "libcudart.so.11.8.89": {0, 0}}
	for _, lib := range libs {
		c := compare(t, p, lib)
		if want, ok := modules[filepath.Base(lib)]; ok {
			require.Equal(t, want, [2]int{c.Modules, c.ModulesAll}, lib)
			delete(modules, filepath.Base(lib))
		}
	}
	require.Empty(t, modules, "libraries make deps did not fetch")
}

// TestOracleRealFatbins: jetbake reads the fat binaries NVIDIA's ptxas and
// fatbinary make (sm_72, sm_87, PTX, --compress-all) as cuobjdump lists
// them: each alone, and all of them as the modules of one aarch64 shared
// object's .nv_fatbin, built with Debian's cross compiler as the
// stand-ins are.
func TestOracleRealFatbins(t *testing.T) {
	p := parts(t)
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	var all [][]byte
	for _, spec := range nvreal.AllSpecs() {
		data, err := p.Fatbin(t.Context(), spec)
		require.NoError(t, err)
		all = append(all, data)
		listed, err := p.List(t.Context(), p.FatbinPath(spec), false)
		require.NoError(t, err)
		require.Len(t, listed, len(spec.Images), spec.Name)
		lib, err := standin.BuildFatbinLibrary(t.Context(), filepath.Join(root, "bin", "standin"), standin.ARM64, "libjetbake_"+strings.ReplaceAll(spec.Name, "-", "_")+".so", data)
		require.NoError(t, err)
		compare(t, p, lib)
	}
	lib, err := standin.BuildFatbinLibrary(t.Context(), filepath.Join(root, "bin", "standin"), standin.ARM64, "libjetbake_nvidia_modules.so", all...)
	require.NoError(t, err)
	c := compare(t, p, lib)
	require.Equal(t, len(all), c.Modules)
}
