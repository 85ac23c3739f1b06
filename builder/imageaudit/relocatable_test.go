package imageaudit_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/computecap"
)

// TestAuditRelocatable: __nv_relfatbin holds copies of relocatable device
// code that the CUDA runtime never loads (real cuFFT keeps six fat
// binaries with sm_90 there, beside twelve in .nv_fatbin without it). They
// are not judged: a file runs on what its .nv_fatbin holds, and the copies
// are reported apart, in --explain and JSON; a file with only copies is no
// CUDA file.
func TestAuditRelocatable(t *testing.T) {
	c := fatbintest.Cubin
	lib := fatbintest.ELF(fatbintest.Fatbins(fatbin.SectionLoaded, []fatbintest.Code{c("8.7")}, []fatbintest.Code{c("8.7"), c("7.2")}),
		fatbintest.Fatbins(fatbin.SectionRelocatable, []fatbintest.Code{c("9.0"), fatbintest.PTX("9.0")}, []fatbintest.Code{c("7.5")}))
	rdcOnly := fatbintest.ELF(fatbintest.Fatbins(fatbin.SectionRelocatable, []fatbintest.Code{c("9.0")}))
	img := image(t, nil, layer(t, file{"usr/lib/libfft.so", lib}, file{"usr/lib/librdc.so", rdcOnly}))
	r, err := imageaudit.Audit(t.Context(), &imageaudit.Opened{Name: "rdc", Image: img}, cc("8.7"))
	require.NoError(t, err)
	require.True(t, r.OK, r.Sentence)
	require.Len(t, r.Files, 1)
	f := r.Files[0]
	require.Equal(t, 2, f.Modules)
	require.Equal(t, []string{"sm_72", "sm_87"}, f.Cubins)
	require.Empty(t, f.PTX)
	v, _ := f.Verdict(computecap.MustParse("8.7"))
	require.Equal(t, computecap.Runs, v.Verdict)
	require.Equal(t, &imageaudit.RelocatableCode{Modules: 2, Cubins: []string{"sm_75", "sm_90"}, PTX: []string{"compute_90"}}, f.Relocatable)
	require.Equal(t, []imageaudit.RelocatableCode{{Path: "/usr/lib/librdc.so", Modules: 1, Cubins: []string{"sm_90"}, PTX: []string{}}}, r.RelocatableOnly)
	require.Equal(t, "every CUDA file of rdc (1 file) runs on Jetson Orin, SM 8.7", r.Sentence)

	var explain, js bytes.Buffer
	require.NoError(t, r.WriteExplain(&explain))
	require.Contains(t, explain.String(), "/usr/lib/libfft.so: it holds sm_72, sm_87 cubins\n"+
		"  __nv_relfatbin, not judged: 2 fat binaries of relocatable device code (sm_75, sm_90 cubins and compute_90 PTX), "+
		"copies that nvlink reads to device-link against the file and the CUDA runtime never loads\n")
	require.Contains(t, explain.String(), "/usr/lib/librdc.so: not judged: 1 fat binary of relocatable device code (sm_90 cubins)")
	require.NoError(t, r.WriteJSON(&js))
	require.Contains(t, js.String(), `"relocatable": {`)
	require.Contains(t, js.String(), `"relocatable_only": [`)
}
