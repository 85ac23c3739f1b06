package imageaudit_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/computecap"
)

func cc(s ...string) []computecap.Capability {
	out := make([]computecap.Capability, len(s))
	for i, x := range s {
		out[i] = computecap.MustParse(x)
	}
	return out
}

func elf(codes ...fatbintest.Code) []byte { return fatbintest.ELF(fatbintest.NVCC(codes...)...) }

// bnb is bitsandbytes' PyPI aarch64 library: sm_75, sm_80 and sm_90
// cubins and PTX for the newest only.
func bnb() []byte {
	return elf(fatbintest.Cubin("7.5"), fatbintest.Cubin("8.0"), fatbintest.Cubin("9.0"), fatbintest.PTX("9.0"))
}

// TestAuditLayers: whiteouts and later layers count, non-ELF files and
// ELF files without GPU code are not CUDA files, and each verdict shows.
func TestAuditLayers(t *testing.T) {
	img := image(t, nil,
		layer(t, file{"usr/lib/libgone.so", elf(fatbintest.Cubin("7.5"))},
			file{"usr/lib/libreplaced.so", elf(fatbintest.Cubin("7.5"))},
			file{"usr/bin/plain", fatbintest.ELF(fatbintest.Filler(4096))},
			file{"etc/config.txt", bytes.Repeat([]byte("x"), 100)}),
		layer(t, file{"usr/lib/.wh.libgone.so", nil},
			file{"usr/lib/libreplaced.so", elf(fatbintest.Cubin("8.7"), fatbintest.Cubin("11.0"))},
			file{"usr/lib/python3/site-packages/bitsandbytes/libbitsandbytes_cuda.so", bnb()},
			file{"usr/lib/libjit.so", elf(fatbintest.PTX("8.0"))}))
	scan, err := imageaudit.ScanImage(t.Context(), img)
	require.NoError(t, err)
	require.Equal(t, 4, scan.ELFs)
	r := imageaudit.Judge("test-image", scan, cc("8.7", "11.0"))
	require.False(t, r.OK)
	var paths []string
	for _, f := range r.Files {
		paths = append(paths, f.Path)
	}
	require.Equal(t, []string{"/usr/lib/libjit.so", "/usr/lib/libreplaced.so", "/usr/lib/python3/site-packages/bitsandbytes/libbitsandbytes_cuda.so"}, paths)
	verdict := func(path, gpu string) computecap.Verdict {
		for _, f := range r.Files {
			if f.Path == path {
				v, ok := f.Verdict(computecap.MustParse(gpu))
				require.True(t, ok)
				return v.Verdict
			}
		}
		t.Fatalf("no %s", path)
		return 0
	}
	require.Equal(t, computecap.Runs, verdict("/usr/lib/libreplaced.so", "8.7"))
	require.Equal(t, computecap.JIT, verdict("/usr/lib/libjit.so", "11.0"))
	require.Equal(t, computecap.NoCode, verdict("/usr/lib/python3/site-packages/bitsandbytes/libbitsandbytes_cuda.so", "8.7"))
	require.Equal(t, computecap.JIT, verdict("/usr/lib/python3/site-packages/bitsandbytes/libbitsandbytes_cuda.so", "11.0"))
	require.False(t, r.Covers(computecap.MustParse("8.7")))
	require.True(t, r.Covers(computecap.MustParse("11.0")))

	var text, explain bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	require.Contains(t, text.String(), "FILE")
	require.Contains(t, text.String(), "/usr/lib/python3/site-packages/bitsandbytes/libbitsandbytes_cuda.so  sm_75,sm_80,sm_90  compute_90  no code  JIT")
	require.Contains(t, text.String(), "test-image cannot run everywhere it should: Jetson Orin, SM 8.7: 1 file without code for it, "+
		"such as /usr/lib/python3/site-packages/bitsandbytes/libbitsandbytes_cuda.so (it holds sm_75, sm_80, sm_90 cubins and compute_90 PTX); fix: ")
	require.NoError(t, r.WriteExplain(&explain))
	require.Contains(t, explain.String(), "its sm_80 cubin (bitsandbytes issue 1939) was reported to work on SM 8.7, but NVIDIA does not promise it")
}

// TestAuditOK: the last sentence when every GPU runs every CUDA file, and
// when no file holds CUDA code.
func TestAuditOK(t *testing.T) {
	img := image(t, nil, layer(t, file{"usr/bin/router-87", elf(fatbintest.Cubin("8.7"))}, file{"usr/lib/libk.so", elf(fatbintest.PTX("8.7"))}))
	r, err := imageaudit.Audit(t.Context(), &imageaudit.Opened{Name: "ok", Image: img}, cc("8.7"))
	require.NoError(t, err)
	require.True(t, r.OK)
	require.Equal(t, "every CUDA file of ok (2 files) runs on Jetson Orin, SM 8.7; 1 verdict rely on PTX compiled when loaded (JIT): a slower first start", r.Sentence)

	img = image(t, nil, layer(t, file{"usr/bin/ls", fatbintest.ELF(fatbintest.Filler(100))}))
	r, err = imageaudit.Audit(t.Context(), &imageaudit.Opened{Name: "plain", Image: img}, cc("8.7"))
	require.NoError(t, err)
	require.True(t, r.OK)
	require.Equal(t, "no ELF file of plain holds CUDA code (1 ELF file read): nothing there needs a GPU", r.Sentence)
}

// TestAuditLyingFile: a file whose fat binary lies about its sizes is a
// CUDA file that no GPU runs, with one sentence; large files are spooled.
func TestAuditLyingFile(t *testing.T) {
	bad := elf(fatbintest.Cubin("8.7"))
	i := bytes.Index(bad, []byte{0x50, 0xed, 0x55, 0xba})
	bad[i+8] = 0xff
	bad[i+12] = 0x7f
	img := image(t, nil, layer(t, file{"usr/lib/liblie.so", bad}))
	for _, mem := range []int64{16 << 20, 100} {
		r, err := imageaudit.Audit(t.Context(), &imageaudit.Opened{Name: "lie", Image: img}, cc("8.7"),
			imageaudit.WithMemoryLimit(mem), imageaudit.WithTempDir(t.TempDir()))
		require.NoError(t, err)
		require.False(t, r.OK)
		require.Len(t, r.Files, 1)
		require.Contains(t, r.Files[0].Error, "/usr/lib/liblie.so: its .nv_fatbin section is not a valid CUDA fat binary: at offset 0, the fat binary says its entries take")
	}
}

// TestAuditPerModule: a library with two fat binaries (modules), one with
// an sm_87 cubin and one with sm_75, sm_80 and sm_90: the driver loads each
// module as a whole, and a module without code for the GPU does not stop
// the file from loading, only its kernels fail when launched. So the file
// is partial on both SM 8.7 and SM 9.0: it does not fail the audit, which
// names the module without code and warns; on SM 7.2 no module has code,
// and the reason names no module. The build judges the same way (package
// buildaudit).
func TestAuditPerModule(t *testing.T) {
	lib := fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin",
		[]fatbintest.Code{fatbintest.Cubin("8.7")},
		[]fatbintest.Code{fatbintest.Cubin("7.5"), fatbintest.Cubin("8.0"), fatbintest.Cubin("9.0")}))
	img := image(t, nil, layer(t, file{"usr/lib/libtwo.so", lib}))
	r, err := imageaudit.Audit(t.Context(), &imageaudit.Opened{Name: "two", Image: img}, cc("8.7", "9.0"))
	require.NoError(t, err)
	require.True(t, r.OK)
	require.True(t, r.Partial)
	require.Len(t, r.Files, 1)
	f := r.Files[0]
	require.Equal(t, 2, f.Modules)
	v, ok := f.Verdict(computecap.MustParse("8.7"))
	require.True(t, ok)
	require.Equal(t, computecap.Partial, v.Verdict)
	require.Equal(t, 2, v.Module)
	require.Equal(t, 1, v.ModulesWithCode)
	require.Equal(t, []string{"sm_75", "sm_80", "sm_90"}, v.ModuleCubins)
	require.True(t, r.Covers(computecap.MustParse("8.7")))
	v, _ = f.Verdict(computecap.MustParse("9.0"))
	require.Equal(t, computecap.Partial, v.Verdict, "the first module has no code for SM 9.0")
	require.Equal(t, 1, v.Module)
	require.Equal(t, []string{"/usr/lib/libtwo.so"}, r.PerGPU[0].Partial)

	var text, js bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	require.Contains(t, text.String(), "/usr/lib/libtwo.so  sm_75,sm_80,sm_87,sm_90  -    partial (1 of 2 fatbins)")
	require.Equal(t, "every CUDA file of two (1 file) holds code for Jetson Orin, SM 8.7 and GPU with SM 9.0, but not in all its fat binaries: "+
		"Jetson Orin, SM 8.7: 1 file, such as /usr/lib/libtwo.so (1 of 2 fat binaries hold code for Jetson Orin, SM 8.7 (sm_87); "+
		"1 hold only sm_75, sm_80 and sm_90 kernels, which fail if launched on this GPU (\"no kernel image is available for execution on the device\")); "+
		"GPU with SM 9.0: 1 file, such as /usr/lib/libtwo.so (1 of 2 fat binaries hold code for GPU with SM 9.0 (sm_90); 1 hold only sm_87 kernels, "+
		"which fail if launched on this GPU (\"no kernel image is available for execution on the device\")); "+
		"the image loads, and those kernels fail if launched (jetbake audit --strict fails on it)", r.Sentence)
	require.NoError(t, r.WriteJSON(&js))
	require.Contains(t, js.String(), `"module": 2`)
	require.Contains(t, js.String(), `"verdict": "partial"`)
	require.Contains(t, js.String(), `"partial": true`)

	// No module holds code for SM 7.2: no code, and no module is named.
	r, err = imageaudit.Audit(t.Context(), &imageaudit.Opened{Name: "two", Image: img}, cc("7.2"))
	require.NoError(t, err)
	require.False(t, r.OK)
	v, _ = r.Files[0].Verdict(computecap.MustParse("7.2"))
	require.Equal(t, computecap.NoCode, v.Verdict)
	require.Zero(t, v.Module)
	require.Contains(t, v.Reason, "none of its 2 fat binaries holds code for it")
	require.Contains(t, r.Sentence, "such as /usr/lib/libtwo.so (it holds sm_75, sm_80, sm_87, sm_90 cubins)")
	text.Reset()
	require.NoError(t, r.WriteText(&text))
	require.NotContains(t, text.String(), "fatbin 1 of 2")
}

// TestAuditJetsonModules: the synthetic library, a module with
// sm_72 and sm_87 cubins and one with sm_72 only, is partial on an Orin
// (not refused) and runs on a Xavier.
func TestAuditJetsonModules(t *testing.T) {
	lib := fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin",
		[]fatbintest.Code{fatbintest.Cubin("7.2"), fatbintest.Cubin("8.7")}, []fatbintest.Code{fatbintest.Cubin("7.2")}))
	img := image(t, nil, layer(t, file{"usr/lib/libjetson.so", lib}))
	r, err := imageaudit.Audit(t.Context(), &imageaudit.Opened{Name: "jetson", Image: img}, cc("8.7", "7.2"))
	require.NoError(t, err)
	require.True(t, r.OK, r.Sentence)
	require.Equal(t, computecap.Partial, r.PerGPU[0].Verdict)
	require.Equal(t, computecap.Runs, r.PerGPU[1].Verdict)
}
