package fatbin_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
)

// TestSplit: the runtime loads .nv_fatbin; __nv_relfatbin's copies of
// relocatable device code are told apart, each side in its order.
func TestSplit(t *testing.T) {
	c := fatbintest.Cubin
	elf := fatbintest.ELF(fatbintest.Fatbins(fatbin.SectionLoaded, []fatbintest.Code{c("8.7")}, []fatbintest.Code{c("7.2")}),
		fatbintest.Fatbins(fatbin.SectionRelocatable, []fatbintest.Code{c("9.0")}))
	entries, err := fatbin.ReadELF(bytes.NewReader(elf), fatbin.Limits{})
	require.NoError(t, err)
	loaded, relocatable := fatbin.Split(entries)
	require.Equal(t, []string{"sm_87 cubin", "sm_72 cubin"}, names(loaded))
	require.Equal(t, []string{"sm_90 cubin"}, names(relocatable))
	require.Len(t, fatbin.Modules(loaded), 2)
	require.True(t, loaded[0].Loaded())
	require.False(t, relocatable[0].Loaded())
}

// TestRealCuFFTLoaded holds the reader against NVIDIA's real cuFFT 10.9
// (CUDA 11.8, arm64): `cuobjdump --list-elf` lists 12 fat binaries of seven
// cubins each (sm_35 to sm_89) with compute_89 PTX and no sm_90; the six
// fat binaries with sm_90 are in __nv_relfatbin, which only --all-fatbin
// lists. The hundreds of one-entry fat binaries the library keeps in .data
// are not read, as cuobjdump does not list them.
func TestRealCuFFTLoaded(t *testing.T) {
	parts, err := nvreal.Find(filepath.Join("..", ".."))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(parts.LibDir(), "libcufft.so.10.9.0.58"))
	require.NoError(t, err)
	entries, err := fatbin.ReadELF(bytes.NewReader(data), fatbin.Limits{})
	require.NoError(t, err)
	loaded, relocatable := fatbin.Split(entries)
	modules := fatbin.Modules(loaded)
	require.Len(t, modules, 12)
	cubins := 0
	for _, m := range modules {
		var got []string
		for _, e := range m {
			if e.Kind == fatbin.KindCubin {
				got = append(got, e.SM.SM())
				cubins++
			}
			require.NotEqual(t, "9.0", e.SM.String(), "no loaded module holds sm_90")
		}
		require.Equal(t, []string{"sm_35", "sm_50", "sm_60", "sm_61", "sm_70", "sm_80", "sm_89"}, got)
	}
	require.Equal(t, 84, cubins, "cuobjdump --list-elf lists 84 cubins")
	require.Len(t, fatbin.Modules(relocatable), 6)
	hasSM90 := false
	for _, e := range relocatable {
		hasSM90 = hasSM90 || e.SM.String() == "9.0"
	}
	require.True(t, hasSM90, "the relocatable copies hold sm_90")
	// The fat binaries outside the two sections (in .data) exist, and are
	// not read.
	magic := binary.LittleEndian.AppendUint32(nil, fatbin.Magic)
	require.Greater(t, bytes.Count(data, magic), 12+6+100)
}
