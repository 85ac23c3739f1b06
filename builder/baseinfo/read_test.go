package baseinfo

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/computecap"
)

// countBlobs counts the blob requests a registry serves.
func countBlobs(n *atomic.Int64) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/blobs/") {
				n.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	}
}

// A multi-platform tag is read at its linux/arm64 image, over plain HTTP to
// a loopback registry; Info.Digest is the index's, as a lock pins it.
func TestReadIndex(t *testing.T) {
	host := testregistry.New(t)
	arm := testImage(t, []string{"CUDA_VERSION=13.0.1"}, []entry{link("usr/local/cuda", "cuda-13.0"),
		dir("usr/local/cuda-13.0/targets/sbsa-linux"), file("usr/local/cuda-13.0/version.json", versionJSON("13.0.1"))})
	amd := testImage(t, []string{"CUDA_VERSION=12.2"}, []entry{link("usr/local/cuda", "cuda-12.2"),
		dir("usr/local/cuda-12.2/targets/x86_64-linux"), file("usr/local/cuda-12.2/version.json", versionJSON("12.2.0"))})
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}})
	ref := host + "/nvidia/cuda:13.0.1-devel-ubuntu24.04"
	dst, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(dst, idx))
	want, err := idx.Digest()
	require.NoError(t, err)

	got, err := New().Read(t.Context(), ref)
	require.NoError(t, err)
	require.Equal(t, want.String(), got.Digest)
	require.Equal(t, computecap.FlavourSBSA, got.Flavour)
	require.Equal(t, "13.0.1", got.CUDA)

	pinned, err := New().Read(t.Context(), ref+"@"+want.String())
	require.NoError(t, err)
	require.Equal(t, got, pinned)
}

// A read is kept by digest: the second read of the same digest fetches no
// blob, and a new digest under the same tag is read anew.
func TestReadCache(t *testing.T) {
	var blobs atomic.Int64
	host := testregistry.New(t, countBlobs(&blobs))
	push := func(v, target string) {
		img := testImage(t, nil, []entry{link("usr/local/cuda", "cuda-12.6"), dir("usr/local/cuda-12.6/targets/" + target),
			file("usr/local/cuda-12.6/version.json", versionJSON(v))})
		dst, err := name.ParseReference(host + "/nvidia/l4t-cuda:12.6.11-runtime")
		require.NoError(t, err)
		require.NoError(t, remote.Write(dst, img))
	}
	push("12.6.11", "aarch64-linux")
	cache := filepath.Join(t.TempDir(), "bases")
	r := New(WithCacheDir(cache))
	ref := host + "/nvidia/l4t-cuda:12.6.11-runtime"

	blobs.Store(0)
	first, err := r.Read(t.Context(), ref)
	require.NoError(t, err)
	require.Positive(t, blobs.Load())
	require.Equal(t, "Tegra CUDA 12.6.11", first.Describe())

	blobs.Store(0)
	again, err := New(WithCacheDir(cache)).Read(t.Context(), ref)
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Zero(t, blobs.Load(), "the digest was read before")

	push("12.6.11", "sbsa-linux")
	moved, err := r.Read(t.Context(), ref)
	require.NoError(t, err)
	require.NotEqual(t, first.Digest, moved.Digest)
	require.Equal(t, "SBSA CUDA 12.6.11", moved.Describe())

	entries, err := os.ReadDir(cache)
	require.NoError(t, err)
	require.Len(t, entries, 2)

	// A cache file that does not hold its digest's read is not used.
	d, err := v1.NewHash(first.Digest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(r.cacheFile(d), []byte(`{"digest": "sha256:other", "flavour": "sbsa"}`), 0o644))
	again, err = r.Read(t.Context(), ref+"@"+first.Digest)
	require.NoError(t, err)
	require.Equal(t, first, again)
}

func TestReadErrors(t *testing.T) {
	host := testregistry.New(t)
	_, err := New().Read(t.Context(), "Not A Ref")
	require.ErrorContains(t, err, "read base Not A Ref")
	_, err = New().Read(t.Context(), host+"/nvidia/missing:1")
	require.ErrorContains(t, err, "read base "+host+"/nvidia/missing:1")

	// An index without an arm64 image.
	amd := testImage(t, nil, []entry{file("bin/sh", "")})
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})
	dst, err := name.ParseReference(host + "/nvidia/cuda:amd64-only")
	require.NoError(t, err)
	require.NoError(t, remote.WriteIndex(dst, idx))
	_, err = New().Read(t.Context(), dst.String())
	require.ErrorContains(t, err, "its linux/arm64 image")
}
