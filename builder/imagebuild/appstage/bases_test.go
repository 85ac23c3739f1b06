package appstage

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// frameworkBase is a framework container's one layer: torch's metadata,
// the constraint file and torch's CUDA library with sm_87 code.
func frameworkBase(t *testing.T) v1.Image {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	elf := fatbintest.ELF(fatbintest.Fatbins(".nv_fatbin", []fatbintest.Code{fatbintest.Cubin("8.7")}))
	for name, data := range map[string][]byte{
		strings.TrimPrefix(sitePackages, "/") + "/torch-2.8.0a0+5228986c39.nv25.06.dist-info/METADATA": []byte("Name: torch\nVersion: 2.8.0a0+5228986c39.nv25.06\n"),
		"etc/pip/constraint.txt":                                        []byte("torch==2.8.0a0+5228986c39.nv25.06\n"),
		"usr/local/cuda-12.9/version.json":                              []byte(`{"cuda": {"name": "CUDA SDK", "version": "12.9.0"}}`),
		"usr/local/cuda-12.9/targets/aarch64-linux/lib/libcudart.so.12": []byte("not read"),
		strings.TrimPrefix(torchLib, "/"):                               elf,
	} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	data := b.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	require.NoError(t, err)
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "arm64"})
	require.NoError(t, err)
	img, err = mutate.AppendLayers(img, l)
	require.NoError(t, err)
	return img
}

// A framework container is read from its registry once per build, its
// Python distributions and its CUDA files, however many releases wait
// for it; a base that cannot be read is an error naming it.
func TestAppBasesReadOnce(t *testing.T) {
	var blobs atomic.Int32
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			blobs.Add(1)
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref := host + "/nvidia/pytorch:25.06-py3-igpu"
	tag, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.Write(tag, frameworkBase(t)))
	d, err := remote.Head(tag)
	require.NoError(t, err)
	pinned := ref + "@" + d.Digest.String()

	ctx := context.Background()
	bases := NewBases(ctx, nil, progress.NewRecorder(), "")
	defer bases.Close()
	blobs.Store(0)
	read, err := bases.Wait(ctx, pinned)
	require.NoError(t, err)
	require.Len(t, read.Inv.Find("torch", ""), 1)
	require.Equal(t, "torch==2.8.0a0+5228986c39.nv25.06", read.Inv.Constraints[0].Spec)
	require.Len(t, read.Scan.Files, 1)
	require.Equal(t, torchLib, read.Scan.Files[0].Path)
	fetched := blobs.Load()
	require.Positive(t, fetched)
	again, err := bases.Wait(ctx, pinned)
	require.NoError(t, err)
	require.Same(t, read, again)
	require.Equal(t, fetched, blobs.Load(), "read once")

	_, err = bases.Wait(ctx, host+"/nvidia/pytorch:nope")
	require.ErrorContains(t, err, "read base "+host+"/nvidia/pytorch:nope")
}
