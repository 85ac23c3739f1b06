package labellerimage_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/daemon"
	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/fleet/labellerimage"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// TestPushLabellerImage makes the labeller image on a real buildkitd,
// pushes it to a registry on 127.0.0.1, reads it back and runs the
// binary of this machine's platform from the pulled layer. This machine's
// binary is jetbake; the other platform's is the entrypoint, a small static
// binary of that machine, since cross-compiling all of jetbake costs minutes
// on a cold cache (the release workflow pushes make release's two jetbakes).
func TestPushLabellerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("needs buildkitd (make deps)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	root, err := e2e.FindRepoRoot()
	require.NoError(t, err)
	buildkitd := filepath.Join(root, "bin", "buildkitd")
	_, err = os.Stat(buildkitd)
	require.NoError(t, err, "run 'make deps': it builds bin/buildkitd")

	start := time.Now()
	dir := t.TempDir()
	own, other := runtime.GOARCH, "arm64"
	if own == "arm64" {
		other = "amd64"
	}
	for pkg, arch := range map[string]string{"./builder/cmd/jetbake": own, "./entrypoint": other} {
		require.NoError(t, e2e.GoBuild(ctx, root, pkg, arch, filepath.Join(dir, labellerimage.FileName(arch)), "-buildvcs=false", "-ldflags=-s -w -buildid="))
	}
	t.Logf("built the binaries: %s", time.Since(start))
	bins, err := labellerimage.Find(dir, "")
	require.NoError(t, err)
	bins, err = labellerimage.Check(bins)
	require.NoError(t, err)

	conn, err := daemon.Connect(ctx, daemon.WithBuildkitd(buildkitd), daemon.WithStateDir(filepath.Join(dir, "buildkitd")))
	require.NoError(t, err)
	defer conn.Close()
	reg := testregistry.New(t)

	epoch := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	opts := []labellerimage.Option{labellerimage.WithEpoch(epoch), labellerimage.WithVersion("v0.3.0", "0123abc")}
	first, err := labellerimage.Push(ctx, conn.Client, reg+"/jetbake-labeller:v0.3.0", bins, opts...)
	require.NoError(t, err)
	require.Equal(t, epoch.Unix(), first.SourceDateEpoch)
	t.Logf("started buildkitd and pushed: %s", time.Since(start))

	// Reproducible: the layers built anew, without the cache, give the same digest.
	again, err := labellerimage.Push(ctx, conn.Client, reg+"/jetbake-labeller:again", bins, append(opts, labellerimage.WithNoCache(true))...)
	require.NoError(t, err)
	require.Equal(t, first.Digest, again.Digest, "two pushes of the same binaries at the same epoch")

	t.Logf("pushed again without the cache: %s", time.Since(start))
	ref, err := name.ParseReference(first.Pinned)
	require.NoError(t, err)
	idx, err := remote.Index(ref, remote.WithContext(ctx))
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Len(t, im.Manifests, 2)
	require.Equal(t, "v0.3.0", im.Annotations["org.opencontainers.image.version"])
	for i, desc := range im.Manifests {
		b := bins[i]
		require.Equal(t, &v1.Platform{OS: "linux", Architecture: b.Arch}, desc.Platform)
		img, err := idx.Image(desc.Digest)
		require.NoError(t, err)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		require.Equal(t, []string{labellerimage.Entrypoint}, cf.Config.Entrypoint)
		require.Equal(t, labellerimage.Cmd(), cf.Config.Cmd)
		require.Equal(t, epoch, cf.Created.UTC())
		require.Equal(t, b.Arch, cf.Architecture)
		layers, err := img.Layers()
		require.NoError(t, err)
		require.Len(t, layers, 1, "one layer: the binary")
		want, err := os.ReadFile(b.Path)
		require.NoError(t, err)
		got := layerFile(t, layers[0], epoch)
		require.True(t, bytes.Equal(want, got), "the layer holds %s as it is", b.Path)
		if b.Arch == own {
			runPulled(ctx, t, got, cf.Config.Entrypoint[0])
		}
	}
}

// layerFile returns the binary of the layer at Entrypoint, and checks
// that the layer holds only it and its folders, each owned by root and
// stamped with epoch.
func layerFile(t *testing.T, l v1.Layer, epoch time.Time) []byte {
	t.Helper()
	rc, err := l.Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	var data []byte
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		require.Equal(t, epoch, h.ModTime.UTC(), h.Name)
		require.Zero(t, h.Uid, h.Name)
		require.Zero(t, h.Gid, h.Name)
		if h.Typeflag == tar.TypeReg {
			require.Equal(t, strings.TrimPrefix(labellerimage.Entrypoint, "/"), h.Name)
			require.Equal(t, int64(0o755), h.Mode&0o7777)
			data, err = io.ReadAll(tr)
			require.NoError(t, err)
		}
	}
	require.Equal(t, []string{"usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/jetbake"}, names)
	return data
}

// runPulled runs jetbake from the pulled layer as the image runs it: the
// default command on a host root that is not a Jetson, then the labelling
// DaemonSet's arguments outside a pod, which doctor refuses only for the
// missing service account.
func runPulled(ctx context.Context, t *testing.T, data []byte, entrypoint string) {
	t.Helper()
	exe := filepath.Join(t.TempDir(), filepath.Base(entrypoint))
	require.NoError(t, os.WriteFile(exe, data, 0o755))
	hostRoot := t.TempDir()
	args := labellerimage.Cmd()
	require.Equal(t, []string{"doctor", "--sysroot", "/host", "--node-labels", "-"}, args)
	args[2] = hostRoot
	cmd := exec.CommandContext(ctx, exe, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	require.Contains(t, string(out), "jetbake.feature.node.kubernetes.io/jetson=false\n")
	require.Contains(t, stderr.String(), "this host is not a Jetson")

	args = fleet.LabellerArgs()
	require.Equal(t, "/host", args[2])
	args[2] = hostRoot
	cmd = exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), "NODE_NAME=orin-1", "KUBERNETES_SERVICE_HOST=", "KUBERNETES_SERVICE_PORT=")
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "not in a Kubernetes pod with a service account", "the DaemonSet's arguments reach doctor's --label-node")
}
