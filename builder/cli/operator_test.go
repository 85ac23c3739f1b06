package cli

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/standin"
)

// fakeJetson writes an Orin with L4T l4t under a new folder; with ready it
// also has the toolkit and Docker's nvidia runtime.
func fakeJetson(t *testing.T, l4t string, ready bool) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"etc/nv_tegra_release":    standin.TegraRelease(l4t),
		"sys/devices/soc0/family": "Tegra\n",
		"sys/devices/soc0/soc_id": "35\n",
	}
	if ready {
		files["var/lib/dpkg/status"] = "Package: nvidia-container-toolkit\nStatus: install ok installed\nVersion: 1.17.8-1\n"
		files["etc/docker/daemon.json"] = `{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}`
		files["usr/bin/nvidia-container-runtime"] = "#!/bin/sh\n"
	}
	for n, data := range files {
		p := filepath.Join(root, n)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o755))
	}
	return root
}

func TestDoctorCommand(t *testing.T) {
	r := run(t, "doctor", "--sysroot", fakeJetson(t, "36.4.3", true))
	require.Equal(t, ExitOK, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "R36.4.3 (JetPack 6.2)")
	require.Contains(t, r.stdout, "This host can run jetbake images")

	r = run(t, "doctor", "--sysroot", fakeJetson(t, "36.4.3", false), "--format", "json")
	require.Equal(t, ExitFailure, r.code)
	require.Empty(t, r.stderr)
	var doc struct {
		OK bool `json:"ok"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.False(t, doc.OK)

	require.Equal(t, ExitUsage, run(t, "doctor", "--format", "yaml").code)

	r = run(t, "doctor", "--sysroot", t.TempDir())
	require.Equal(t, ExitFailure, r.code)
	require.Contains(t, r.stdout, "run jetbake doctor on the Jetson itself, or pass --sysroot DIR with the board's root file system", "the fix names doctor's flag")
}

// --node-labels on a host that is not a Jetson writes jetson=false and says
// so on standard error, with exit status 0: a labeller runs on every node.
// On a Jetson whose pods cannot get NVIDIA's runtime it names the row and
// its fix.
func TestDoctorNodeLabelsWarn(t *testing.T) {
	r := run(t, "doctor", "--sysroot", t.TempDir(), "--node-labels", "-")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "jetbake.feature.node.kubernetes.io/jetson=false\n")
	require.Equal(t, "jetbake: warning: this host is not a Jetson (no Jetson SoC found (device tree, /sys/devices/soc0)): its labels say jetson=false, and jetbake fleet's workloads place no pod on it\n", r.stderr)

	root := fakeJetson(t, "36.4.3", true)
	conf := filepath.Join(root, "var/lib/rancher/k3s/agent/etc/containerd/config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(conf), 0o755))
	require.NoError(t, os.WriteFile(conf, []byte("version = 2\n"), 0o644))
	r = run(t, "doctor", "--sysroot", root, "--node-labels", "-")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "jetbake.feature.node.kubernetes.io/nvidia-runtime=false\n")
	require.Contains(t, r.stderr, "jetbake: warning: nvidia-runtime=false: k3s nvidia runtime (no runtimes.nvidia in /var/lib/rancher/k3s/agent/etc/containerd/config.toml though /usr/bin/nvidia-container-runtime is installed: k3s started before the toolkit was installed): sudo systemctl restart k3s")
	r = run(t, "doctor", "--sysroot", root)
	require.Equal(t, ExitFailure, r.code, "the table fails the row the label follows")
	require.Contains(t, r.stdout, "k3s nvidia runtime      fail")
}

func TestPickCommand(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repo := strings.TrimPrefix(srv.URL, "http://") + "/jetbake/router"
	ann := map[string]string{"io.jetbake.jetpack": "6.2", "io.jetbake.l4t": "36.4.3", "io.jetbake.cuda": "12.6",
		"io.jetbake.sm-targets": "8.7", "io.jetbake.tier": "candidate", "io.jetbake.release": "jetpack6.2"}
	img, err := random.Image(32, 1)
	require.NoError(t, err)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "linux", Architecture: "arm64", Config: v1.Config{Labels: ann}})
	require.NoError(t, err)
	tag, err := name.NewTag(repo+":jetpack6.2", name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(tag, img))
	d, err := img.Digest()
	require.NoError(t, err)

	r := run(t, "pick", "--sysroot", fakeJetson(t, "36.4.3", true), repo)
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Equal(t, repo+":jetpack6.2@"+d.String()+"\n", r.stdout, "one line for $(jetbake pick ...)")
	require.Contains(t, r.stderr, "reading "+repo+":jetpack6.2")

	r = run(t, "pick", "-q", "--sysroot", fakeJetson(t, "36.3.0", true), repo)
	require.Equal(t, ExitFailure, r.code)
	require.Empty(t, r.stdout)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one sentence: %s", r.stderr)
	require.Contains(t, r.stderr, "the host would need L4T R36.4 or a later R36 release, such as JetPack 6.1 (L4T 36.4.0)")

	r = run(t, "pick", "-q", "--format", "json", "--sysroot", fakeJetson(t, "36.3.0", true), repo)
	require.Equal(t, ExitFailure, r.code)
	var doc struct {
		Sentence   string `json:"sentence"`
		Candidates []struct {
			Reference string `json:"reference"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.NotEmpty(t, doc.Sentence)
	require.Len(t, doc.Candidates, 1)

	r = run(t, "pick", "-q", "--explain", "--sysroot", fakeJetson(t, "36.4.3", true), repo)
	require.Equal(t, ExitOK, r.code)
	require.Contains(t, r.stdout, "chosen  "+repo+":jetpack6.2@")

	require.Equal(t, ExitUsage, run(t, "pick").code)
	require.Equal(t, ExitUsage, run(t, "pick", "--mirror", "nonsense", repo).code)
}

// TestOperatorExitStatuses runs pick and doctor on input they cannot use:
// each exits 2 with one sentence naming the input; a pick that cannot
// reach its registry in time exits 1.
func TestOperatorExitStatuses(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"pick", ""}, `repository "" is empty`},
		{[]string{"pick", "GHCR.IO/ACME/ROUTER"}, "has capital letters in its path"},
		{[]string{"pick", "ghcr.io/acme/my router"}, "holds white space"},
		{[]string{"pick", "ghcr.io/acme/router:1.0"}, "names a tag"},
		{[]string{"pick", "https://ghcr.io/acme/router"}, "has a URL scheme"},
		{[]string{"pick", "acme/../router"}, "is not a repository name"},
		{[]string{"pick", "--sysroot", missing, "ghcr.io/acme/router"}, "--sysroot " + missing + " does not exist"},
		{[]string{"pick", "--timeout", "0s", "ghcr.io/acme/router"}, "--timeout 0s: give a time above zero"},
		{[]string{"doctor", "--sysroot", missing}, "--sysroot " + missing + " does not exist: name the folder"},
		{[]string{"doctor", "--sysroot", file}, "--sysroot " + file + " is not a folder"},
	}
	for _, tt := range tests {
		r := run(t, tt.args...)
		require.Equal(t, ExitUsage, r.code, "%q: %s", tt.args, r.stderr)
		require.Contains(t, r.stderr, tt.want, "%q", tt.args)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one sentence: %s", r.stderr)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	repo := strings.TrimPrefix(srv.URL, "http://") + "/jetbake/router"
	r := run(t, "pick", "--timeout", "300ms", "--sysroot", fakeJetson(t, "36.4.3", true), repo)
	require.Equal(t, ExitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "the registry did not answer in time; fix: check that the registry is up and reachable, or give it more time with --timeout")
}

// TestBrokenDockerConfig gives pick and lock a Docker config that does not
// read: one sentence with its line, column and field, exit 2, instead of
// Go's JSON error from the keychain.
func TestBrokenDockerConfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	path := filepath.Join(dir, "config.json")
	for body, want := range map[string]string{
		`{"auths": [`:   ":1:12: $: not valid JSON at line 1, column 12: unexpected end of the file",
		`{"auths": []}`: ":1:11: auths: must be an object, not an array; fix: write it as 'docker login' does",
	} {
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		for _, args := range [][]string{{"pick", "127.0.0.1:1/acme/router"}, {"lock", "-f", matrixCopy(t, nil)}} {
			r := run(t, args...)
			require.Equal(t, ExitUsage, r.code, "%v: %s", args, r.stderr)
			require.True(t, strings.HasPrefix(r.stderr, path+want), "%v: %s", args, r.stderr)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"))
		}
	}
}
