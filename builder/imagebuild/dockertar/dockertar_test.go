package dockertar

import (
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
)

// testRepo is the repository the images are tagged in.
const testRepo = "ghcr.io/jetbake/text-embeddings-router"

// platformImage is a small random image whose config names arch.
func platformImage(t *testing.T, arch string) v1.Image {
	t.Helper()
	img, err := random.Image(128, 2)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	return img
}

// ociLayout writes a layout the way BuildKit's OCI exporter does: index.json
// pointing at an image index that holds the per-platform images.
func ociLayout(t *testing.T, images ...v1.Image) string {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, img := range images {
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: cf.OS, Architecture: cf.Architecture},
		}})
	}
	dir := filepath.Join(t.TempDir(), "layout")
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendIndex(idx))
	return dir
}

func TestWriteDockerTarball(t *testing.T) {
	amd := platformImage(t, "amd64")
	arm := platformImage(t, "arm64")
	dir := ociLayout(t, amd, arm)
	dest := filepath.Join(t.TempDir(), "tei.tar")
	tags := []string{testRepo + ":1.8.0-jetpack6.2", testRepo + ":jetpack6"}
	require.NoError(t, Write(dir, dest, tags))

	wantConfig, err := arm.ConfigName()
	require.NoError(t, err)
	wantLayers, err := arm.Layers()
	require.NoError(t, err)
	for _, tagStr := range tags {
		tag, err := name.NewTag(tagStr)
		require.NoError(t, err)
		loaded, err := tarball.ImageFromPath(dest, &tag)
		require.NoError(t, err, tagStr)
		gotConfig, err := loaded.ConfigName()
		require.NoError(t, err)
		require.Equal(t, wantConfig, gotConfig, "the arm64 image is written under %s", tagStr)
		cf, err := loaded.ConfigFile()
		require.NoError(t, err)
		require.Equal(t, "arm64", cf.Architecture)
		layers, err := loaded.Layers()
		require.NoError(t, err)
		require.Len(t, layers, len(wantLayers))
	}

	other, err := name.NewTag(testRepo + ":not-written")
	require.NoError(t, err)
	_, err = tarball.ImageFromPath(dest, &other)
	require.Error(t, err)
}

// An image straight in index.json, without a platform, is taken as it is.
func TestWriteDockerTarballTopLevelImage(t *testing.T) {
	arm := platformImage(t, "arm64")
	dir := filepath.Join(t.TempDir(), "layout")
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	require.NoError(t, p.AppendImage(arm))
	dest := filepath.Join(t.TempDir(), "tei.tar")
	require.NoError(t, Write(dir, dest, []string{"127.0.0.1:5000/jetbake/tei:jetpack6"}))
	tag, err := name.NewTag("127.0.0.1:5000/jetbake/tei:jetpack6")
	require.NoError(t, err)
	loaded, err := tarball.ImageFromPath(dest, &tag)
	require.NoError(t, err)
	want, err := arm.ConfigName()
	require.NoError(t, err)
	got, err := loaded.ConfigName()
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestWriteDockerTarballErrors(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "tei.tar")

	err := Write(filepath.Join(t.TempDir(), "none"), dest, []string{testRepo + ":x"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "read OCI layout")

	amdOnly := ociLayout(t, platformImage(t, "amd64"))
	err = Write(amdOnly, dest, []string{testRepo + ":x"})
	require.EqualError(t, err, "no linux/arm64 image in the OCI layout")

	armLayout := ociLayout(t, platformImage(t, "arm64"))
	err = Write(armLayout, dest, []string{"Bad Tag"})
	require.Error(t, err)
	require.Contains(t, err.Error(), `tag "Bad Tag"`)

	err = Write(armLayout, filepath.Join(t.TempDir(), "missing", "tei.tar"), []string{testRepo + ":x"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "write docker tarball")
}
