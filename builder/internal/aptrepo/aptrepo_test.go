package aptrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// debs builds two small packages, a depending on b (b Architecture all).
func debs(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for _, p := range []struct{ name, arch, deps string }{{"jetbake-a", "amd64", "jetbake-b"}, {"jetbake-b", "all", ""}} {
		tree := filepath.Join(dir, p.name)
		require.NoError(t, os.MkdirAll(filepath.Join(tree, "usr/share", p.name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(tree, "usr/share", p.name, "README"), []byte(p.name+"\n"), 0o644))
		ctl := Control{{"Package", p.name}, {"Version", "1.0-1"}, {"Architecture", p.arch},
			{"Maintainer", "jetbake test bed <testbed@jetbake.invalid>"}, {"Description", "test package"}}
		if p.deps != "" {
			ctl = append(ctl, [2]string{"Depends", p.deps})
		}
		deb := filepath.Join(dir, p.name+".deb")
		require.NoError(t, BuildDeb(t.Context(), deb, tree, ctl))
		out = append(out, deb)
	}
	return out
}

// apt runs the machine's apt-get with a private configuration over
// sources (its own lists, status and archives), returning its output and
// exit status.
func apt(t *testing.T, state, sources string, args ...string) (string, int) {
	t.Helper()
	for _, d := range []string{"lists/partial", "archives/partial"} {
		require.NoError(t, os.MkdirAll(filepath.Join(state, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(state, "sources.list"), []byte(sources), 0o644))
	if _, err := os.Stat(filepath.Join(state, "status")); err != nil {
		require.NoError(t, os.WriteFile(filepath.Join(state, "status"), nil, 0o644))
	}
	opts := []string{"-o", "APT::Architecture=amd64", "-o", "APT::Architectures=amd64", "-o", "Debug::NoLocking=1",
		"-o", "Dir::State::status=" + state + "/status", "-o", "Dir::State::Lists=" + state + "/lists",
		"-o", "Dir::Etc::SourceList=" + state + "/sources.list", "-o", "Dir::Etc::SourceParts=/nonexistent",
		"-o", "Dir::Cache=" + state, "-o", "Dir::Cache::archives=" + state + "/archives", "-o", "APT::Sandbox::User=" + os.Getenv("USER")}
	if os.Geteuid() == 0 {
		opts[len(opts)-1] = "APT::Sandbox::User=root"
	}
	out, err := exec.Command("apt-get", append(opts, args...)...).CombinedOutput()
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, string(out))
		return string(out), exit.ExitCode()
	}
	return string(out), 0
}

// The machine's own apt reads both layouts, checks their signatures with
// the key's keyring, and downloads a package with its dependency; a
// repository signed with another key is refused in apt's words.
func TestRepositories(t *testing.T) {
	if _, err := exec.LookPath("apt-ftparchive"); err != nil {
		require.NoError(t, err, "run 'make deps' as root: it installs Debian's apt-utils")
	}
	key, err := NewKey("jetbake test archive")
	require.NoError(t, err)
	again, err := NewKey("jetbake test archive")
	require.NoError(t, err)
	require.Equal(t, key.Fingerprint(), again.Fingerprint(), "a key is the same in every run")
	other, err := NewKey("another archive")
	require.NoError(t, err)
	require.NotEqual(t, key.Fingerprint(), other.Fingerprint())

	root, files := t.TempDir(), debs(t)
	require.NoError(t, Write(t.Context(), root, Repo{Path: "ubuntu", Suites: []string{"jammy", "jammy-updates"},
		Components: []string{"main", "universe"}, Arch: "amd64", Debs: files[1:], Signer: key}))
	require.NoError(t, Write(t.Context(), root, Repo{Path: "cuda", Debs: files[:1], Signer: key}))
	require.NoError(t, Write(t.Context(), root, Repo{Path: "wrong", Debs: files[:1], Signer: other}))
	require.NoError(t, Write(t.Context(), root, Repo{Path: "unsigned", Debs: files[:1]}))
	srv, err := Serve(t.Context(), root)
	require.NoError(t, err)
	defer srv.Close()
	keyring, err := key.Keyring()
	require.NoError(t, err)
	kr := filepath.Join(t.TempDir(), "archive-keyring.gpg")
	require.NoError(t, os.WriteFile(kr, keyring, 0o644))

	state := t.TempDir()
	sources := "deb [arch=amd64 signed-by=" + kr + "] " + srv.URL + "/ubuntu jammy main universe\n" +
		"deb [arch=amd64 signed-by=" + kr + "] " + srv.URL + "/ubuntu jammy-updates main universe\n" +
		"deb [signed-by=" + kr + "] " + srv.URL + "/cuda/ /\n"
	out, code := apt(t, state, sources, "update")
	require.Equal(t, 0, code, out)
	require.NotContains(t, out, "W:", out)
	out, code = apt(t, state, sources, "install", "-y", "--download-only", "jetbake-a")
	require.Equal(t, 0, code, out)
	for _, f := range []string{"jetbake-a_1.0-1_amd64.deb", "jetbake-b_1.0-1_all.deb"} {
		require.FileExists(t, filepath.Join(state, "archives", f))
	}

	// A second server on the first one's address serves the same URLs.
	require.NoError(t, srv.Close())
	srv2, err := ServeAt(t.Context(), root, strings.TrimPrefix(srv.URL, "http://"))
	require.NoError(t, err)
	defer srv2.Close()
	require.Equal(t, srv.URL, srv2.URL)
	out, code = apt(t, state, sources, "update")
	require.Equal(t, 0, code, out)

	for repo, want := range map[string]string{
		"wrong":    "NO_PUBKEY " + other.Fingerprint()[24:],
		"unsigned": "The repository '" + srv.URL + "/unsigned  Release' is not signed.",
	} {
		out, code := apt(t, t.TempDir(), "deb [signed-by="+kr+"] "+srv.URL+"/"+repo+"/ /\n", "update")
		require.Equal(t, 100, code, out)
		require.Contains(t, out, want, out)
		if repo == "wrong" {
			require.Contains(t, out, "E: The repository '"+srv.URL+"/wrong  InRelease' is not signed.")
		}
	}
}
