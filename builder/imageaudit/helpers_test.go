package imageaudit_test

import (
	"archive/tar"
	"bytes"
	"io"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"
)

// file is one tar entry of a test layer; a nil data with a name starting
// ".wh." in its base is a whiteout.
type file struct {
	name string
	data []byte
}

func layer(t *testing.T, files ...file) v1.Layer {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(f.data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	data := b.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	require.NoError(t, err)
	return l
}

func image(t *testing.T, annotations map[string]string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "arm64", Config: v1.Config{Labels: annotations}})
	require.NoError(t, err)
	img, err = mutate.AppendLayers(img, layers...)
	require.NoError(t, err)
	if annotations != nil {
		img = mutate.Annotations(img, annotations).(v1.Image)
	}
	return img
}
