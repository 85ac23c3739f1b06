package testregistry

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"path"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
)

// CUDAImage is a small linux/arm64 image with NVIDIA's CUDA layout:
// /usr/local/cuda linking to cuda-X.Y, its version.json naming cuda, and
// the flavour's targets folder (targetDir, "targets/aarch64-linux" or
// "targets/sbsa-linux"), plus a random file so that every image has its
// own digest. For the tests of what reads a base's CUDA; the stand-ins
// that builds run on are package standin's.
func CUDAImage(t testing.TB, targetDir, cuda string) v1.Image {
	t.Helper()
	tree := "usr/local/cuda-" + cuda
	if i := strings.LastIndexByte(cuda, '.'); strings.Count(cuda, ".") == 2 {
		tree = "usr/local/cuda-" + cuda[:i]
	}
	nonce := make([]byte, 16)
	_, err := rand.Read(nonce)
	require.NoError(t, err)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	write := func(hdr *tar.Header, body []byte) {
		hdr.Size = int64(len(body))
		require.NoError(t, tw.WriteHeader(hdr))
		_, err := tw.Write(body)
		require.NoError(t, err)
	}
	write(&tar.Header{Name: "etc/nonce", Mode: 0o644, Typeflag: tar.TypeReg}, nonce)
	write(&tar.Header{Name: tree + "/" + targetDir + "/lib", Mode: 0o755, Typeflag: tar.TypeDir}, nil)
	write(&tar.Header{Name: tree + "/version.json", Mode: 0o644, Typeflag: tar.TypeReg},
		[]byte(`{"cuda": {"name": "CUDA SDK", "version": "`+cuda+`"}}`))
	write(&tar.Header{Name: "usr/local/cuda", Typeflag: tar.TypeSymlink, Linkname: path.Base(tree)}, nil)
	require.NoError(t, tw.Close())
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer))
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "arm64"
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	return img
}

// Push pushes img to host under ref's repository and tag (its registry
// replaced, as `--mirror REGISTRY=host` rewrites it) and returns its digest.
func Push(t testing.TB, host, ref string, img v1.Image) string {
	t.Helper()
	src, err := name.ParseReference(ref)
	require.NoError(t, err)
	dst, err := name.ParseReference(host+"/"+src.Context().RepositoryStr()+":"+src.Identifier(), name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(dst, img))
	d, err := img.Digest()
	require.NoError(t, err)
	return d.String()
}
