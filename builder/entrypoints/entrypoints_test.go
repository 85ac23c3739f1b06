package entrypoints

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/version"
)

func TestDirEmbedded(t *testing.T) {
	cache := t.TempDir()
	fsys := fstest.MapFS{Entrypoint: {Data: []byte("ep")}, CUDAProbe: {Data: []byte("cudaprobe")}, Probe: {Data: []byte("probe")}}
	opt := func(o *options) { o.embedded = fsys }
	dir, source, err := Dir(t.Context(), opt, WithCacheDir(cache), WithExeDir(""))
	require.NoError(t, err)
	require.Equal(t, "embedded in jetbake", source)
	data, err := os.ReadFile(filepath.Join(dir, Entrypoint))
	require.NoError(t, err)
	require.Equal(t, "ep", string(data))
	again, _, err := Dir(t.Context(), opt, WithCacheDir(cache))
	require.NoError(t, err)
	require.Equal(t, dir, again, "extracted once, by content")

	_, _, err = Dir(t.Context(), func(o *options) { o.embedded = fstest.MapFS{Entrypoint: {Data: []byte("ep")}} }, WithCacheDir(cache))
	require.ErrorContains(t, err, "embedded entrypoints lack jetbake-cudaprobe")
	_, _, err = Dir(t.Context(), func(o *options) {
		o.embedded = fstest.MapFS{Entrypoint: {Data: []byte("ep")}, CUDAProbe: {Data: []byte("cudaprobe")}}
	}, WithCacheDir(cache))
	require.ErrorContains(t, err, "embedded entrypoints lack jetbake-probe")
}

func TestDirNextToJetbake(t *testing.T) {
	exe := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(exe, "linux-arm64"), 0o755))
	for _, n := range []string{Entrypoint, CUDAProbe, Probe} {
		require.NoError(t, os.WriteFile(filepath.Join(exe, "linux-arm64", n), []byte(n), 0o755))
	}
	dir, source, err := Dir(t.Context(), WithExeDir(exe), WithCacheDir(t.TempDir()), WithVersion(version.Info{Version: "(devel)"}))
	require.NoError(t, err)
	require.Equal(t, "next to jetbake", source)
	require.Equal(t, filepath.Join(exe, "linux-arm64"), dir)
}

func TestDirNone(t *testing.T) {
	_, _, err := Dir(t.Context(), WithExeDir(t.TempDir()), WithCacheDir(t.TempDir()), WithVersion(version.Info{Version: "(devel)"}))
	require.ErrorContains(t, err, "jetbake (devel) has no linux/arm64 entrypoint binaries")
	require.ErrorContains(t, err, "run 'make build' in a checkout, or use a folder of linux/arm64 entrypoint binaries of your own")
	var missing *MissingError
	require.ErrorAs(t, err, &missing)
	require.True(t, strings.HasSuffix(missing.Problem, "run 'make build' in a checkout"), missing.Problem)
}

// Without a user cache folder there is nowhere to put the binaries.
func TestDirNoCacheFolder(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	_, _, err := Dir(t.Context(), WithExeDir(t.TempDir()))
	var missing *MissingError
	require.ErrorAs(t, err, &missing)
	require.Error(t, missing.Err)
	require.Contains(t, missing.Problem, "find a folder for the entrypoint binaries: ")
	require.Contains(t, missing.Problem, ": set XDG_CACHE_HOME or HOME")
}

// A go-installed jetbake whose version is not in the module cache says so.
func TestDirModuleSourceMissing(t *testing.T) {
	t.Setenv("GOMODCACHE", t.TempDir())
	_, _, err := Dir(t.Context(), WithExeDir(t.TempDir()), WithCacheDir(t.TempDir()),
		WithVersion(version.Info{Version: "v9.9.9", FromModule: true}))
	require.ErrorContains(t, err, "the source of jetbake v9.9.9 is not in the module cache")
	var missing *MissingError
	require.ErrorAs(t, err, &missing)
}
