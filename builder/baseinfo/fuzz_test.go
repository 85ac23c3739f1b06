package baseinfo

import (
	"archive/tar"
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

func FuzzParseVersionJSON(f *testing.F) {
	for _, seed := range []string{versionJSON("12.6.68"), versionJSON("13.0"), `{"cuda": {"version": "12"}}`,
		`{"cuda": null}`, `[]`, ``, `{"cuda": {"version": 12.6}}`, `{"cuda": {"version": "12.6.3"}} trailing`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		full, v, err := ParseVersionJSON(data)
		if err != nil {
			require.Empty(t, full)
			require.Equal(t, computecap.CUDAVersion{}, v)
			return
		}
		back, err := computecap.ParseCUDAVersion(full)
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}

func FuzzParseTegraRelease(f *testing.F) {
	for _, seed := range []string{tegraLine, "# R38 (release), REVISION: 2.0\n", "# R36", "", "R36, REVISION: 4.3"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseTegraRelease(data)
		if err != nil {
			require.True(t, v.IsZero())
			return
		}
		require.Positive(t, v.Major)
	})
}

// Any bytes as a flattened file system: the scan fails or finds a
// consistent answer, and never panics. (The scan reads mutate.Extract's
// stream in ReadImage; here it reads the bytes directly, so that coverage
// does not depend on the extracting goroutine.)
func FuzzScan(f *testing.F) {
	f.Add(tarBytes(f, link("usr/local/cuda", "cuda-12.6"), dir("usr/local/cuda-12.6/targets/aarch64-linux"),
		file("usr/local/cuda-12.6/version.json", versionJSON("12.6.68")), file("etc/nv_tegra_release", tegraLine)))
	f.Add(tarBytes(f, link("usr/local/cuda", "/etc/alternatives/cuda"), link("etc/alternatives/cuda", "../../usr/local/cuda-13.0"),
		dir("usr/local/cuda-13.0/targets/sbsa-linux")))
	f.Add(tarBytes(f, dir("usr/local/cuda/"), file("usr/local/cuda/version.json", versionJSON("13.2.0"))))
	f.Add([]byte("not a tar stream"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newScanner()
		tr := tar.NewReader(bytes.NewReader(data))
		for !s.complete() && s.read <= 1<<20 {
			hdr, err := tr.Next()
			if err != nil {
				break
			}
			if s.add(hdr, tr) != nil {
				return
			}
		}
		info, err := s.info([]string{"CUDA_VERSION=12.6"})
		if err != nil {
			return
		}
		_, ok := info.CUDAVersion()
		require.True(t, ok, "%q", info.CUDA)
		require.Contains(t, []computecap.Flavour{"", computecap.FlavourTegra, computecap.FlavourSBSA}, info.Flavour)
		require.LessOrEqual(t, len(info.From), 4)
	})
}
