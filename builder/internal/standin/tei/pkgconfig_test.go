package tei

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// pkg-config's search: PKG_CONFIG_PATH first, then the machine's own
// folders (not the target's), or PKG_CONFIG_LIBDIR instead of them; the
// answer is the .pc's libdir, else the folder above pkgconfig.
func TestPkgConfigLibDir(t *testing.T) {
	pc := func(root, dir, text string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, dir, "openssl.pc"), []byte(text), 0o644))
	}
	host := func(root, arch string, env map[string]string) Host {
		return Host{Root: root, Arch: arch, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	}
	cross := map[string]string{"PKG_CONFIG_PATH": "/usr/lib/aarch64-linux-gnu/pkgconfig"}

	root := t.TempDir()
	pc(root, "/usr/lib/x86_64-linux-gnu/pkgconfig", "prefix=/usr\nlibdir=${prefix}/lib/x86_64-linux-gnu\n")
	dir, ok := pkgConfigLibDir(host(root, "amd64", cross), "openssl")
	require.True(t, ok)
	require.Equal(t, "/usr/lib/x86_64-linux-gnu", dir, "PKG_CONFIG_PATH adds to the built-in path: the host's OpenSSL answers")
	_, ok = pkgConfigLibDir(host(root, "amd64", map[string]string{"PKG_CONFIG_LIBDIR": "/usr/lib/aarch64-linux-gnu/pkgconfig"}), "openssl")
	require.False(t, ok, "PKG_CONFIG_LIBDIR replaces it")

	pc(root, "/usr/lib/aarch64-linux-gnu/pkgconfig", "Name: OpenSSL\n")
	dir, ok = pkgConfigLibDir(host(root, "amd64", cross), "openssl")
	require.True(t, ok)
	require.Equal(t, "/usr/lib/aarch64-linux-gnu", dir, "PKG_CONFIG_PATH first; no libdir: the folder above pkgconfig")
	dir, ok = pkgConfigLibDir(host(root, "arm64", nil), "openssl")
	require.True(t, ok)
	require.Equal(t, "/usr/lib/aarch64-linux-gnu", dir, "an arm64 machine's own folder")
	_, ok = pkgConfigLibDir(host(t.TempDir(), "amd64", cross), "openssl")
	require.False(t, ok)
}

func FuzzPCVariables(f *testing.F) {
	f.Add("prefix=/usr\nlibdir=${prefix}/lib\nName: x\n")
	f.Add("a=${a}${b}\nb=$\n=x\n")
	f.Fuzz(func(t *testing.T, text string) {
		_ = pcVariables(text)
	})
}
