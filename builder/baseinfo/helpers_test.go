package baseinfo

import (
	"archive/tar"
	"bytes"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
)

// entry is one tar entry of a test layer: a file (body), a folder (dir) or
// a symbolic link (link).
type entry struct {
	name, body, link string
	dir              bool
}

func file(name, body string) entry { return entry{name: name, body: body} }
func dir(name string) entry        { return entry{name: name, dir: true} }
func link(name, target string) entry {
	return entry{name: name, link: target}
}

// versionJSON is CUDA's version.json for version v, shaped like the real one.
func versionJSON(v string) string {
	return `{
   "cuda" : {"name" : "CUDA SDK", "version" : "` + v + `"},
   "cuda_cudart" : {"name" : "CUDA Runtime (cudart)", "version" : "` + v + `"}
}`
}

// tegraLine is the first line of nv_tegra_release of L4T R36.4.0.
const tegraLine = "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, DATE: Fri Sep 13 04:36:44 UTC 2024\n"

// tarBytes writes entries as a tar stream.
func tarBytes(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		switch {
		case e.dir:
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeDir, 0o755, 0
		case e.link != "":
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.link, 0
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if hdr.Size > 0 {
			_, err := tw.Write([]byte(e.body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// rawLayer is an uncompressed layer of the given bytes.
func rawLayer(t testing.TB, data []byte) v1.Layer {
	t.Helper()
	return static.NewLayer(data, types.OCIUncompressedLayer)
}

// testImage is an image of layers, bottom first, with env in its config.
func testImage(t testing.TB, env []string, layers ...[]entry) v1.Image {
	t.Helper()
	var ls []v1.Layer
	for _, entries := range layers {
		ls = append(ls, rawLayer(t, tarBytes(t, entries...)))
	}
	return imageOf(t, env, ls...)
}

// imageOf is an arm64 image of the given layers, bottom first.
func imageOf(t testing.TB, env []string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config.Env = "linux", "arm64", env
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	return img
}
