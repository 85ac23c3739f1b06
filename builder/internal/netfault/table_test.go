package netfault

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/cli"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/lock"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// fault is one network fault: the registry address a user would give
// (HOST[:PORT]), as the test bed serves it.
type fault struct {
	name string
	host string
	// says is what the sentence says of the fault.
	says string
}

// faults serves every fault, each behind its own address; names that are
// not loopback addresses (go-containerregistry then speaks only HTTPS to
// them) lead to 127.0.0.1 through the transport's dialer. hang is the
// address of the one that never answers, good that of the registry
// behind the reset, which answers.
func faults(t *testing.T) (all []fault, hang, good string) {
	behind := Registry()
	good = Serve(t, behind, false)
	pushContent(t, good)
	reset := Serve(t, ResetMidBody(behind), false)
	plain := Serve(t, Registry(), false)
	unknownCA := Serve(t, Registry(), true)
	_, plainPort, _ := strings.Cut(plain, ":")
	_, caPort, _ := strings.Cut(unknownCA, ":")
	// httptest's certificate is for example.com, from a CA no client trusts.
	plainName, caName := "plain.jetbake.test:"+plainPort, "example.com:"+caPort
	UseTransport(t, map[string]string{plainName: plain, caName: unknownCA})
	hang = Serve(t, Hang(), false)
	refused, tlsIP := Refused(t), Serve(t, Registry(), true)
	realm, noRealm := Serve(t, Unauthorized(true), false), Serve(t, Unauthorized(false), false)
	return []fault{
		{name: "name does not resolve", host: Unresolved, says: "the registry's name " + Unresolved + " does not resolve to an address"},
		{name: "connection refused", host: refused, says: "nothing answers at " + refused},
		{name: "plain HTTP to a TLS registry", host: tlsIP, says: "fix: the registry may speak only HTTPS"},
		{name: "TLS to a plain registry", host: plainName, says: plainName + " does not speak TLS"},
		{name: "unknown CA", host: caName, says: "the certificate of " + caName + " is not signed by an authority this machine trusts"},
		{name: "reset mid-blob", host: reset, says: "the connection to " + reset + " was reset while it answered"},
		{name: "no answer within --timeout", host: hang, says: "did not answer in time; fix: check that the registry is up and reachable, or give it more time"},
		{name: "401 with a token realm", host: realm, says: "answered 401 Unauthorized to GET http://" + realm + "/token"},
		{name: "401 without a realm", host: noRealm, says: "the registry answered 401 Unauthorized to "},
	}, hang, good
}

// pushContent puts an image at acme/router:1 and at every base of the
// pytorch app's matrix, mirrored to host: the registry behind the fault
// that cuts answers.
func pushContent(t *testing.T, host string) {
	img, err := random.Image(256, 2)
	require.NoError(t, err)
	refs := []string{host + "/acme/router:1", host + "/jetbake/text-embeddings-router:1"}
	for _, b := range appBases(t) {
		r, err := name.ParseReference(b)
		require.NoError(t, err)
		refs = append(refs, host+"/"+r.Context().RepositoryStr()+":"+r.Identifier())
	}
	for _, s := range refs {
		require.NoError(t, remote.Write(mustRef(t, s), img))
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	r, err := name.ParseReference(s)
	require.NoError(t, err)
	return r
}

// appRepo is a fresh `jetbake init --app pytorch` repository.
func appRepo(t *testing.T) string {
	dir := t.TempDir()
	out, err := exec.Command("git", "init", "-q", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Chdir(dir)
	code, _, stderr := run(t, "init", "--app", "pytorch")
	require.Equal(t, 0, code, stderr)
	return dir
}

// appBases are the bases of the pytorch app's matrix.
func appBases(t *testing.T) []string {
	dir := appRepo(t)
	m, err := matrix.Load(filepath.Join(dir, "matrix.json"))
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	return lock.Bases(p)
}

func run(t *testing.T, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := cli.Run(t.Context(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestRegistryFaultTable runs every command that talks to a registry, as a
// user runs it (cli.Run), against every network fault: each exits 1 with
// one sentence that names the registry's host and the fix, holds none of
// Go's or the HTTP library's words, and leaves nothing half-written (no
// lock file). The table it logs is what each command printed.
func TestRegistryFaultTable(t *testing.T) {
	probe, routerMatrix := routerRepo(t) // before any test changes the folder
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	for _, v := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		t.Setenv(v, "")
	}
	fs, hang, good := faults(t)
	app := appRepo(t)
	// A lock file for lock --check, written from the registry that answers.
	locked := filepath.Join(t.TempDir(), "locked.json")
	code, _, stderr := run(t, "lock", "--mirror", "nvcr.io="+good, "--lock-file", locked)
	require.Equal(t, 0, code, stderr)
	lockFile, err := os.ReadFile(locked)
	require.NoError(t, err)
	// pick looks at the host before the registry: give it a Jetson's root.
	jetson := jetsonRoot(t)
	var table strings.Builder
	for _, f := range fs {
		commands := [][]string{
			{"pick", "--sysroot", jetson, f.host + "/acme/router"},
			{"audit", f.host + "/acme/router:1", "--gpu", "8.7"},
			{"lock", "--mirror", "nvcr.io=" + f.host},
			{"lock", "--check", "--lock-file", locked, "--mirror", "nvcr.io=" + f.host},
			{"support", "--repository", f.host + "/jetbake/text-embeddings-router"},
			{"evidence", "add", probe, "-f", routerMatrix, "--repository", f.host + "/jetbake/text-embeddings-router"},
			{"fleet", "-f", routerMatrix, "--mirror", "ghcr.io=" + f.host},
		}
		for _, args := range commands {
			t.Run(f.name+"/"+command(args), func(t *testing.T) {
				t.Chdir(app)
				timeout := "20s"
				if f.host == hang {
					timeout = "2s"
				}
				code, stdout, stderr := run(t, append(args, "--timeout", timeout)...)
				line := strings.TrimSuffix(stderr, "\n")
				if args[0] == "evidence" {
					// The file's one sentence, naming it (issue 51: no second summary line).
					require.True(t, strings.HasPrefix(line, probe+": "), line)
				}
				fmt.Fprintf(&table, "| %s | %s | %s |\n", command(args), f.name, line)
				require.Equal(t, 1, code, "%s", stderr)
				require.Empty(t, stdout)
				require.NotContains(t, line, "\n", "one sentence")
				require.Contains(t, line, f.host, "names the host")
				require.Contains(t, line, "; fix: ")
				require.Contains(t, line, f.says)
				if f.host == hang {
					// The registry's fault ends the sentence: its fix names the flag.
					require.True(t, strings.HasSuffix(line, " with --timeout"), line)
				}
				for _, word := range []string{"dial tcp", "lookup ", "net/http", "*url", "net.", "x509:", "tls:", "Get \"", "Head \"", "read tcp", "EOF"} {
					require.NotContains(t, line, word)
				}
				_, err := os.Stat(filepath.Join(app, "matrix.lock.json"))
				require.ErrorIs(t, err, os.ErrNotExist, "no lock file")
				got, err := os.ReadFile(locked)
				require.NoError(t, err)
				require.Equal(t, string(lockFile), string(got), "lock --check wrote nothing")
			})
		}
	}
	t.Log("\n| command | fault | first line |\n|---|---|---|\n" + table.String())
}

// jetsonRoot is the root of a Jetson Orin on JetPack 6.2 as a container
// sees it through NVIDIA's runtime, for pick, which says that a machine
// is not a Jetson before it asks the registry anything.
func jetsonRoot(t *testing.T) string {
	root := t.TempDir()
	for n, data := range map[string]string{
		"etc/nv_tegra_release":    standin.TegraRelease("36.4.3"),
		"sys/devices/soc0/family": "Tegra\n",
		"sys/devices/soc0/soc_id": "35\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(n)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, n), []byte(data), 0o644))
	}
	return root
}

// command is the command's name as the table shows it: "lock --check".
func command(args []string) string {
	if args[1] == "--check" || args[0] == "evidence" {
		return args[0] + " " + args[1]
	}
	return args[0]
}

// routerRepo is a copy of this checkout's router matrix (with its
// Dockerfile) and the golden evidence of a Jetson that served it: evidence
// add looks the evidence's digest up in the registry.
func routerRepo(t *testing.T) (probe, matrixPath string) {
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	dir := t.TempDir()
	for _, f := range []string{"matrix.json", "dockerfiles/Dockerfile-jetson"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
	}
	return filepath.Join(root, "builder/evidence/testdata/orin-nano-jp6-serve.json"), filepath.Join(dir, "matrix.json")
}
