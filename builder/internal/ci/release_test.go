package ci

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/e2e"
)

// TestRelease makes a release as the release workflow does: `make release`
// in a tagged git checkout (a copy of this one), whose version comes from
// the tag. Its SHA256SUMS passes `sha256sum -c`, its labeller image is
// pushed as the workflow pushes it, and the action's install script
// installs its binary from a stand-in of GitHub's release downloads, and
// refuses a corrupt one.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jetbake for linux/amd64 and linux/arm64: runs without -short (make test)")
	}
	for _, tool := range []string{"make", "git", "sha256sum", "curl", "bash"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the release test needs %s: run make deps as root, or apt-get install %s", tool, tool)
	}
	src := t.TempDir()
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	require.NoError(t, e2e.CopyCheckout(abs, src))
	git(t, src, "init", "-q")
	git(t, src, "add", "-A")
	git(t, src, "commit", "-q", "-m", "the checkout under test")
	dist := filepath.Join(src, "dist")

	out, err := makeRelease(src)
	require.Error(t, err, out)
	require.Contains(t, out, "make release: HEAD has no release tag: tag it (git tag -a v0.1.0) or pass VERSION=v0.1.0")
	require.NoDirExists(t, dist)

	out, err = makeRelease(src, "VERSION=v1")
	require.Error(t, err, out)
	require.Contains(t, out, "make release: VERSION 'v1' is not a release version such as v0.1.0")

	git(t, src, "tag", "-a", "v0.1.0", "-m", "v0.1.0")
	out, err = makeRelease(src)
	require.NoError(t, err, out)
	require.Contains(t, out, "release: dist/ holds jetbake v0.1.0 for linux/amd64 and linux/arm64, and SHA256SUMS")
	checkDist(t, src)
	pushReleaseLabeller(t, src)

	// A modified checkout is not released under the tag's name, and the
	// release already in dist/ stays as it was.
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(src, "README.md"), []byte("changed\n"), 0o644))
	out, err = makeRelease(src)
	require.Error(t, err, out)
	require.Contains(t, out, "make release: the checkout has uncommitted changes")
	after, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	require.NoError(t, err)
	require.Equal(t, sums, after)

	testInstallScript(t, dist, git(t, src, "rev-parse", "HEAD"))
}

// checkDist checks what `make release` wrote: the two binaries and a
// SHA256SUMS that `sha256sum -c` accepts and that holds their hashes; the
// binary reports the tag's version, and embeds the linux/arm64 entrypoint
// that `make build` made.
func checkDist(t *testing.T, src string) {
	t.Helper()
	dist := filepath.Join(src, "dist")
	ents, err := os.ReadDir(dist)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"SHA256SUMS", "jetbake-linux-amd64", "jetbake-linux-arm64"}, names)

	check := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	check.Dir = dist
	out, err := check.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "jetbake-linux-amd64: OK\njetbake-linux-arm64: OK\n", string(out))
	var want strings.Builder
	for _, name := range names[1:] {
		data, err := os.ReadFile(filepath.Join(dist, name))
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		fmt.Fprintf(&want, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	require.NoError(t, err)
	require.Equal(t, want.String(), string(sums))

	commit := git(t, src, "rev-parse", "HEAD")
	v, err := exec.Command(filepath.Join(dist, "jetbake-linux-"+runtime.GOARCH), "version").Output()
	require.NoError(t, err)
	require.Equal(t, "jetbake v0.1.0 (commit "+commit+")\n", string(v))

	ep, err := os.ReadFile(filepath.Join(src, "bin", "linux-arm64", "jetbake-entrypoint"))
	require.NoError(t, err)
	for _, name := range names[1:] {
		bin, err := os.ReadFile(filepath.Join(dist, name))
		require.NoError(t, err)
		require.True(t, bytes.Contains(bin, ep), "%s embeds the linux/arm64 entrypoint", name)
	}
	require.NoDirExists(t, filepath.Join(src, "builder", "entrypoints", "embedded"), "make release removes the embedded copies")
}

// releases stands in for GitHub's release downloads: an asset at
// /jetbake/jetbake/releases/download/TAG/NAME, and the newest release's at
// /jetbake/jetbake/releases/latest/download/NAME, which redirects to it.
type releases struct {
	mu     sync.Mutex
	files  map[string]map[string][]byte // tag, name: content
	latest string
	paths  []string // the paths asked for, in order
}

func (r *releases) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, req.URL.Path)
	const prefix = "/jetbake/jetbake/releases/"
	rest, ok := strings.CutPrefix(req.URL.Path, prefix)
	if name, latest := strings.CutPrefix(rest, "latest/download/"); ok && latest {
		http.Redirect(w, req, prefix+"download/"+r.latest+"/"+name, http.StatusFound)
		return
	}
	parts := strings.Split(strings.TrimPrefix(rest, "download/"), "/")
	if data, found := r.files[parts[0]][parts[len(parts)-1]]; ok && len(parts) == 2 && found {
		_, _ = w.Write(data)
		return
	}
	http.NotFound(w, req)
}

func (r *releases) asked(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.paths, path)
}

// testInstallScript runs the action's install script against a stand-in
// of GitHub's releases that holds the release in dist, as v0.1.0, and
// releases that are broken in the ways a download can be.
func testInstallScript(t *testing.T, dist, commit string) {
	asset := "jetbake-linux-" + runtime.GOARCH
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(dist, name))
		require.NoError(t, err)
		return data
	}
	good := map[string][]byte{"SHA256SUMS": read("SHA256SUMS"), asset: read(asset)}
	corrupt := bytes.Clone(good[asset])
	corrupt[len(corrupt)/2] ^= 0xff
	srv := &releases{latest: "v0.1.0", files: map[string]map[string][]byte{
		"v0.1.0": good,
		// One byte of the binary changed on the way.
		"v0.1.1": {"SHA256SUMS": good["SHA256SUMS"], asset: corrupt},
		// v0.1.0's files under another tag: the checksum holds, the version does not.
		"v0.2.0": good,
		// A SHA256SUMS without this machine's binary.
		"v0.1.2": {"SHA256SUMS": []byte("0000000000000000000000000000000000000000000000000000000000000000  jetbake-linux-other\n"), asset: good[asset]},
	}}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	base := ts.URL + "/jetbake/jetbake/releases"
	want := "jetbake v0.1.0 (commit " + commit + ")"

	for _, tc := range []struct {
		name, version, url string
		code               int
		stderr             string
	}{
		{name: "tag", version: "v0.1.0"},
		{name: "latest", version: "latest"},
		{name: "corrupt", version: "v0.1.1", code: 1, stderr: asset + " of release v0.1.1 does not match its SHA-256 in SHA256SUMS"},
		{name: "mislabeled", version: "v0.2.0", code: 1, stderr: "reports '" + want + "', not jetbake v0.2.0: nothing was installed"},
		{name: "no line", version: "v0.1.2", code: 1, stderr: "SHA256SUMS of release v0.1.2 has no line for " + asset},
		{name: "no release", version: "v9.9.9", code: 1, stderr: "release v9.9.9 has no SHA256SUMS (" + base + "/download/v9.9.9/SHA256SUMS answers 404)"},
		{name: "branch", version: "main", code: 2, stderr: "version 'main' is not a release tag such as v0.1.0, or latest: a branch or commit installs with go install"},
		{name: "plain http", version: "v0.1.0", url: "http://releases.example.com/jetbake", code: 2, stderr: "is not an https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bin")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "jetbake"), []byte("the jetbake before\n"), 0o755))
			url := tc.url
			if url == "" {
				url = base
			}
			stdout, stderr, code := runScript(t, url, tc.version, dir)
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", stdout, stderr)
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, ents, 1, "only jetbake is left in the folder")
			if tc.code != 0 {
				require.Contains(t, stderr, tc.stderr)
				data, err := os.ReadFile(filepath.Join(dir, "jetbake"))
				require.NoError(t, err)
				require.Equal(t, "the jetbake before\n", string(data), "a failed install leaves the old jetbake")
				return
			}
			require.Contains(t, stdout, "install-jetbake: installed "+want+" at "+dir+"/jetbake (SHA-256 ")
			info, err := os.Stat(filepath.Join(dir, "jetbake"))
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o755), info.Mode().Perm())
			v, err := exec.Command(filepath.Join(dir, "jetbake"), "version").Output()
			require.NoError(t, err)
			require.Equal(t, want+"\n", string(v))
		})
	}
	require.True(t, srv.asked("/jetbake/jetbake/releases/latest/download/SHA256SUMS"), "latest goes through GitHub's redirect")

	_, stderr, code := runScript(t, base)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "usage: install-jetbake.sh VERSION DIR")
}

// runScript runs the install script with args and returns its output and
// exit status.
func runScript(t *testing.T, url string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "bash", append([]string{filepath.Join(root, installScript)}, args...)...)
	cmd.Env = append(os.Environ(), "JETBAKE_RELEASES_URL="+url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit)
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	return stdout.String(), stderr.String(), 0
}

// makeRelease runs `make release` in dir with the given variables, without
// the outer make's flags and variables (make test runs this test).
func makeRelease(dir string, vars ...string) (string, error) {
	cmd := exec.Command("make", append([]string{"--no-print-directory", "release"}, vars...)...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains([]string{"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "VERSION"}, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// git runs git in dir and returns its output, trimmed.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=ci", "-c", "user.email=ci@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}
