package imageaudit_test

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/computecap"
)

// fileLayer is a layer of the files at paths, each under usr/lib/, read
// from disk as the layer is read (NVIDIA's libraries are hundreds of MB).
func fileLayer(t *testing.T, paths ...string) v1.Layer {
	t.Helper()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			tw := tar.NewWriter(pw)
			for _, p := range paths {
				if err := copyInto(tw, p); err != nil {
					pw.CloseWithError(err)
					return
				}
			}
			pw.CloseWithError(tw.Close())
		}()
		return pr, nil
	})
	require.NoError(t, err)
	return l
}

func copyInto(tw *tar.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "usr/lib/" + filepath.Base(path), Mode: 0o644, Size: st.Size(), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// TestAuditNVIDIALibraries audits an image of NVIDIA's real arm64 (SBSA)
// CUDA 11.8 libraries, from Debian's non-free component, for Xavier (7.2),
// Orin (8.7), an RTX 30 (8.6) and a Hopper (9.0). NVIDIA ships per-GPU
// modules: cuBLAS has 225 fat binaries, of which 188 hold sm_90 and sm_80,
// and 37 hold only older SMs' kernels. So cuBLAS is partial on 9.0 and 8.6,
// not refused; an SBSA build holds no sm_87 or sm_72 in any module, so it
// is no code on a Jetson; libcudart holds no GPU code and is no CUDA file;
// cuFFT reads as the 12 fat binaries cuobjdump lists, its six relocatable
// copies (with sm_90) apart.
func TestAuditNVIDIALibraries(t *testing.T) {
	parts, err := nvreal.Find(filepath.Join("..", ".."))
	require.NoError(t, err)
	libs, err := parts.Libraries()
	require.NoError(t, err)
	img := image(t, nil, fileLayer(t, libs...))
	gpus := cc("7.2", "8.7", "8.6", "9.0")
	r, err := imageaudit.Audit(t.Context(), &imageaudit.Opened{Name: "nvidia-cuda-11.8-sbsa", Image: img}, gpus, imageaudit.WithTempDir(t.TempDir()))
	require.NoError(t, err)
	got := map[string]string{}
	for _, f := range r.Files {
		require.Empty(t, f.Error, f.Path)
		row := []string{itoa(f.Modules)}
		for _, g := range gpus {
			v, ok := f.Verdict(g)
			require.True(t, ok)
			row = append(row, v.Verdict.String())
			if v.Verdict == computecap.Partial {
				row[len(row)-1] += " " + itoa(v.ModulesWithCode)
			}
			t.Logf("%s SM %s: %s: %s", filepath.Base(f.Path), g, v.Verdict, v.Reason)
		}
		if f.Relocatable != nil {
			row = append(row, "relocatable "+itoa(f.Relocatable.Modules))
		}
		got[filepath.Base(f.Path)] = strings.Join(row, ", ")
	}
	// Fat binaries, then the verdicts for 7.2, 8.7, 8.6 and 9.0 (partial
	// with how many fat binaries hold code), then __nv_relfatbin's.
	require.Equal(t, map[string]string{
		"libcublas.so.11.11.3.6":   "225, no code, no code, partial 188, partial 188",
		"libcublasLt.so.11.11.3.6": "544, no code, no code, partial 486, partial 458",
		"libcufft.so.10.9.0.58":    "12, no code, no code, runs, partial 11, relocatable 6",
		"libcurand.so.10.3.0.86":   "10, no code, no code, runs, runs",
	}, got)
	require.Equal(t, 5, r.ELFs, "libcudart is read, and holds no GPU code")
	cublas, _ := r.Files[0].Verdict(computecap.MustParse("9.0"))
	require.Equal(t, "188 of 225 fat binaries hold code for GPU with SM 9.0 (sm_90); 37 hold only sm_35, sm_50, sm_60 and sm_61 kernels, "+
		`which fail if launched on this GPU ("no kernel image is available for execution on the device")`, cublas.Reason)
	orin, _ := r.Files[0].Verdict(computecap.MustParse("8.7"))
	require.Zero(t, orin.Module, "no fat binary is named when none holds code")
	require.True(t, strings.HasPrefix(orin.Reason, "none of its 225 fat binaries holds code for it: no code for Jetson Orin, SM 8.7"), orin.Reason)
	require.False(t, r.OK, "no code on a Jetson")
	for _, g := range r.PerGPU[2:] {
		require.Empty(t, g.NoCode, "SM %s", g.GPU)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
