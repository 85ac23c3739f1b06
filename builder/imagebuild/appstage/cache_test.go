package appstage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/pydist"
	"github.com/jetbake/jetbake/computecap"
)

// countingWriter counts the bytes a registry sends.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return w.ResponseWriter.Write(p)
}

// The base is read in one walk over its layers (not one per reader), and
// a second build on the same digest reads nothing of it from the registry:
// its read comes from the cache, keyed by the digest. The figures are
// docs/speed.md's.
func TestAppBasesOneWalkAndCached(t *testing.T) {
	var blobBytes, requests atomic.Int64
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			w = countingWriter{ResponseWriter: w, n: &blobBytes}
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	// The framework layer, and 16 MiB of other files that do not compress.
	rest, err := random.Layer(16<<20, "application/vnd.oci.image.layer.v1.tar+gzip")
	require.NoError(t, err)
	img, err := mutate.AppendLayers(frameworkBase(t), rest)
	require.NoError(t, err)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/nvidia/pytorch:25.06-py3-igpu"
	tag, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.Write(tag, img))
	d, err := remote.Head(tag)
	require.NoError(t, err)
	pinned := ref + "@" + d.Digest.String()
	ctx := context.Background()

	// Before: each reader walked the layers itself.
	blobBytes.Store(0)
	remoteImg, err := remote.Image(tag)
	require.NoError(t, err)
	_, err = pydist.ReadImage(ctx, remoteImg)
	require.NoError(t, err)
	_, err = imageaudit.ScanImage(ctx, remoteImg)
	require.NoError(t, err)
	twoWalks := blobBytes.Load()

	dir := t.TempDir()
	read := func() (*Base, int64, int64) {
		blobBytes.Store(0)
		requests.Store(0)
		bases := NewBases(ctx, nil, progress.NewRecorder(), dir)
		defer bases.Close()
		b, err := bases.Wait(ctx, pinned)
		require.NoError(t, err)
		return b, blobBytes.Load(), requests.Load()
	}
	first, firstBytes, _ := read()
	second, secondBytes, secondRequests := read()
	t.Logf("bytes of the base read from the registry: two walks %d, one walk (first build) %d, second build %d in %d requests",
		twoWalks, firstBytes, secondBytes, secondRequests)
	require.Greater(t, firstBytes, int64(16<<20), "the first build reads every layer")
	require.Less(t, firstBytes, twoWalks*2/3, "one walk, not two")
	require.Zero(t, secondBytes, "the second build reads no layer")
	require.Zero(t, secondRequests, "nor the manifest: the digest is the key")
	require.Equal(t, first.Inv, second.Inv)
	require.Equal(t, first.Scan.Files, second.Scan.Files)
	require.Equal(t, torchLib, second.Scan.Files[0].Path)
	require.True(t, second.Inv.HasTorch())
	require.Equal(t, "12.9.0", first.Info.CUDA, "the CUDA marker files, from the same walk")
	require.Equal(t, computecap.FlavourTegra, first.Info.Flavour)
	require.Equal(t, first.Info, second.Info)

	// A reference that is not pinned is never taken from the cache.
	require.Empty(t, cache{dir: dir}.file(ref))
}
