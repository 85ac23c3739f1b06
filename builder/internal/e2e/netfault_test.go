package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/standin"
)

// offlineFix is how every registry command's sentence ends where no name
// resolves: check the name and the DNS, then the command's offline way.
const offlineFix = "fix: check the registry's name and this machine's DNS or proxy settings; offline, pass --"

// TestOfflineCommands runs the commands that reach a registry as a new user
// runs them on a machine without DNS: the built binary in a network
// namespace with only a loopback that is down (`unshare -rn`), so nothing
// leaves the machine and no name resolves. Each exits 1 with one sentence
// that names the registry's host and the fix; none panics (issue 39: Go's
// dial error at name resolution has no address).
func TestOfflineCommands(t *testing.T) {
	root, err := FindRepoRoot()
	require.NoError(t, err)
	ctx := t.Context()
	bin := filepath.Join(t.TempDir(), "jetbake")
	require.NoError(t, GoBuild(ctx, root, "./builder/cmd/jetbake", runtime.GOARCH, bin))
	home := t.TempDir()
	offline := func(dir string, args ...string) (int, string, string) {
		cmd := exec.CommandContext(ctx, "unshare", append([]string{"--map-root-user", "--net", bin}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+filepath.Join(home, "docker"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
			"HTTPS_PROXY=", "HTTP_PROXY=", "https_proxy=", "http_proxy=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("unshare %v: %v: %s", args, err, stderr.String())
		}
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}

	app := t.TempDir()
	out, err := exec.Command("git", "init", "-q", app).CombinedOutput()
	require.NoError(t, err, "%s", out)
	code, _, stderr := offline(app, "init", "--app", "pytorch")
	require.Equal(t, 0, code, "init needs no network: %s", stderr)

	// pick says that a machine is not a Jetson before it asks a registry
	// (issue 51): it runs here on a Jetson Orin's root.
	jetson := t.TempDir()
	for n, data := range map[string]string{"etc/nv_tegra_release": standin.TegraRelease("36.4.3"),
		"sys/devices/soc0/family": "Tegra\n", "sys/devices/soc0/soc_id": "35\n"} {
		require.NoError(t, os.MkdirAll(filepath.Join(jetson, filepath.Dir(n)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(jetson, n), []byte(data), 0o644))
	}

	for _, tt := range []struct {
		dir  string
		args []string
		host string
		what string
	}{
		{dir: app, args: []string{"pick", "--sysroot", jetson, "ghcr.io/acme/router"}, host: "ghcr.io", what: "cannot list the tags of ghcr.io/acme/router: "},
		{dir: app, args: []string{"audit", "ghcr.io/acme/router:1", "--gpu", "8.7"}, host: "ghcr.io", what: "cannot read ghcr.io/acme/router:1: "},
		{dir: app, args: []string{"lock"}, host: "nvcr.io", what: "cannot resolve base nvcr.io/nvidia/pytorch:"},
		{dir: root, args: []string{"support"}, host: "ghcr.io", what: "cannot look up ghcr.io/"},
	} {
		code, stdout, stderr := offline(tt.dir, tt.args...)
		line := strings.TrimSuffix(stderr, "\n")
		t.Logf("jetbake %s: %s", strings.Join(tt.args, " "), line)
		require.Equal(t, 1, code, "%v: %s", tt.args, stderr)
		require.Empty(t, stdout, "%v", tt.args)
		require.NotContains(t, line, "\n", "%v: one sentence", tt.args)
		require.True(t, strings.HasPrefix(line, tt.what), "%v: %s", tt.args, line)
		require.Contains(t, line, "the registry's name "+tt.host+" does not resolve to an address; "+offlineFix, "%v", tt.args)
		for _, word := range []string{"panic", "dial tcp", "lookup ", "net.", "*url.", "goroutine"} {
			require.NotContains(t, line, word, "%v", tt.args)
		}
	}
	_, err = os.Stat(filepath.Join(app, "matrix.lock.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "lock wrote no lock file")
}
