package ci

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fleet/labellerimage"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// pushReleaseLabeller pushes the labeller image of the release in src's
// dist/ as the release workflow does (its step "Publish the labeller
// image", with a local buildkitd for buildx's and a registry on 127.0.0.1
// for ghcr.io), and checks what the registry holds: make release's two
// binaries, each the one layer of its platform's image, stamped with the
// tag's commit time, which make release linked in.
func pushReleaseLabeller(t *testing.T, src string) {
	t.Helper()
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	start := time.Now()
	reg := testregistry.New(t)
	ref := reg + "/jetbake-labeller:v0.1.0"
	cmd := exec.CommandContext(t.Context(), filepath.Join("dist", "jetbake-linux-"+runtime.GOARCH), "fleet", "--push-labeller", ref,
		"--labeller-binaries", "dist", "--buildkitd", filepath.Join(abs, "bin", "buildkitd"), "--state-dir", filepath.Join(t.TempDir(), "buildkitd"),
		"--progress", "plain", "--format", "json")
	cmd.Dir = src
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SOURCE_DATE_EPOCH=") })
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.String())
	var res labellerimage.Result
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	require.Equal(t, ref+"@"+res.Digest, res.Pinned)
	require.Contains(t, stderr.String(), "jetbake: pushed the labeller image "+ref)
	t.Logf("pushed the release's labeller image in %s", time.Since(start))

	sec, err := strconv.ParseInt(git(t, src, "log", "-1", "--format=%ct"), 10, 64)
	require.NoError(t, err)
	require.Equal(t, sec, res.SourceDateEpoch, "the tag's commit time")
	pinned, err := name.ParseReference(res.Pinned)
	require.NoError(t, err)
	idx, err := remote.Index(pinned, remote.WithContext(t.Context()))
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 2)
	for i, arch := range labellerimage.Arches() {
		desc := im.Manifests[i]
		require.Equal(t, "linux/"+arch, desc.Platform.String())
		img, err := idx.Image(desc.Digest)
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		require.Equal(t, time.Unix(sec, 0).UTC(), cf.Created.UTC())
		require.Equal(t, []string{labellerimage.Entrypoint}, cf.Config.Entrypoint)
		layers, err := img.Layers()
		require.NoError(t, err)
		require.Len(t, layers, 1)
		want, err := os.ReadFile(filepath.Join(src, "dist", labellerimage.FileName(arch)))
		require.NoError(t, err)
		got := extractFile(t, img, strings.TrimPrefix(labellerimage.Entrypoint, "/"))
		require.True(t, bytes.Equal(want, got), "the %s image holds make release's %s", arch, labellerimage.FileName(arch))
	}
}

// extractFile returns the file at p in img's file system.
func extractFile(t *testing.T, img v1.Image, p string) []byte {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		require.NoError(t, err, "no %s in the image", p)
		if h.Name == p {
			data, err := io.ReadAll(tr)
			require.NoError(t, err)
			return data
		}
	}
}
