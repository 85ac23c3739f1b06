package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/containerd/console"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/cli"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/matrix"
)

// secretsRouter is the tests' own router Dockerfile for --secret and --ssh.
const secretsRouter = "builder/internal/e2e/testdata/secrets-router/Dockerfile"

// TestCLIBuildSecretsAndSSH builds two releases (three router stages, on
// one shared session) with two secrets, an ssh-agent and a key file
// forwarded, provenance of mode max, an SBOM from a stand-in scanner and
// a registry cache; every stage proves what reached it by the secrets'
// hashes and the agents' key fingerprints. Then it searches everything
// jetbake wrote or pushed, in every progress mode, for the planted values:
// nothing may hold them, while a planted build arg, JETBAKE_CANARY, must be
// found in the image, the provenance and the cache, which shows that the
// search reaches them. The same build shows the emulation warning, once,
// and --set and --build-arg reaching the stages.
func TestCLIBuildSecretsAndSSH(t *testing.T) {
	for _, tool := range []string{"ssh-agent", "ssh-add", "ssh-keygen"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s (Debian's openssh-client) is missing: run 'make deps' as root", tool)
	}
	f := newFixture(t)
	ctx := t.Context()
	routerDir := t.TempDir()
	df, err := os.ReadFile(filepath.Join(f.env.RepoRoot, secretsRouter))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(routerDir, "Dockerfile"), df, 0o644))
	require.NoError(t, GoBuild(ctx, f.env.RepoRoot, "./builder/internal/e2e/agentkeys", "arm64", filepath.Join(routerDir, "agentkeys")))
	matrixPath := f.demoPlanFile(t, "matrix.json", func(m map[string]any) {
		router := m["router"].(map[string]any)
		router["context"], router["dockerfile"] = routerDir, filepath.Join(routerDir, "Dockerfile")
		router["output"] = "/out/router"
		delete(router, "smoke")          // the "router" is a text file
		delete(router, "runtime_target") // assembled on the raw runtime base
		keepReleases(m, "jetpack6.2", "jetpack7.2")
	})
	p, err := LoadPlan(matrixPath, matrix.WithAllowRead(routerDir))
	require.NoError(t, err)
	_, err = f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	scannerBin := filepath.Join(t.TempDir(), "sbomscanner")
	require.NoError(t, GoBuild(ctx, f.env.RepoRoot, "./builder/internal/standin/sbomscanner", runtime.GOARCH, scannerBin))
	scanner, err := standin.PushSBOMScanner(ctx, scannerBin, f.env.Registry)
	require.NoError(t, err)

	token, fileSecret := "jetbake-planted-token-"+randomHex(t), "jetbake-planted-file-"+randomHex(t)
	canary, canary72 := "jetbake-canary-"+randomHex(t), "jetbake-canary72-"+randomHex(t)
	t.Setenv("JETBAKE_TEST_TOKEN", token)
	secretFile := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secretFile, []byte(fileSecret), 0o600))
	agentSock, agentPrint := startSSHAgent(t)
	deployKey, deployPrint := sshKey(t, "deploy")

	common := []string{"build", "-f", matrixPath, "--addr", f.env.Daemon.Addr, "--mirror", "nvcr.io=" + f.env.Registry,
		"--entrypoint-dir", f.entrypointDir, "--allow", "fs.read=" + routerDir,
		"--secret", "id=token,env=JETBAKE_TEST_TOKEN", "--secret", "id=file,src=" + secretFile,
		"--ssh", "default=" + agentSock, "--ssh", "deploy=" + deployKey,
		"--build-arg", "JETBAKE_CANARY=" + canary}
	metadata := filepath.Join(f.work, "build.json")
	code, stdout, stderr := jetbake(ctx, append(common, "--push", "--provenance", "mode=max", "--sbom", "generator="+scanner,
		"--set", "jetpack7.2.args.JETBAKE_CANARY="+canary72,
		"--cache-to", "type=registry,ref="+f.env.Registry+"/jetbake/cache,mode=max",
		"--metadata-file", metadata, "--progress", "plain", "--timings")...)
	require.Equal(t, 0, code, stderr)
	outputs := map[string]string{"plain progress": stdout + stderr}

	var report imagebuild.Report
	data, err := os.ReadFile(metadata)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &report))
	require.Len(t, report.Releases, 2)

	t.Run("secrets and agents reach every router stage", func(t *testing.T) {
		for _, rr := range report.Releases {
			rel, _ := p.Release(rr.Name)
			files := imageFileContents(t, rel.Tags[0])
			for _, tgt := range rel.Targets {
				want := canary
				if rr.Name == "jetpack7.2" {
					want = canary72 // --set over --build-arg
				}
				got := files["usr/local/bin/"+tgt.Binary]
				require.Equal(t, strings.Join([]string{
					"sm=" + tgt.ComputeCap, "canary=" + want, "token=" + sha256Hex(token), "file=" + sha256Hex(fileSecret),
					"agent-socket=yes", "default=" + agentPrint, "deploy=" + deployPrint}, "\n")+"\n", got, "%s SM %s", rr.Name, tgt.SM)
			}
		}
	})

	t.Run("the emulation warning, once, and the record of it", func(t *testing.T) {
		native := runtime.GOARCH != "arm64" // the fixture's buildkitd runs on this machine
		want := 0
		if native {
			want = 1
		}
		require.Equal(t, want, strings.Count(stderr, "has no worker that runs linux/arm64 natively"), stderr)
		if native {
			require.Contains(t, stderr, "ubuntu-24.04-arm")
			require.Contains(t, stderr, "--node NAME=ADDR")
		}
		for _, rr := range report.Releases {
			require.NotNil(t, rr.Emulated, rr.Name)
			require.Equal(t, native, *rr.Emulated, rr.Name)
			require.Equal(t, "linux/"+runtime.GOARCH, rr.BuildPlatform)
		}
		require.Len(t, report.Timings.Releases, 2)
		for _, rt := range report.Timings.Releases {
			require.Equal(t, native, rt.Emulated, rt.Name)
			require.Positive(t, rt.RouterSteps, rt.Name)
		}
		require.Regexp(t, `(?m)^jetpack7\.2 +linux/`+runtime.GOARCH+` +(qemu|cross|native) +(yes|no) +[0-9]+ +[0-9]+`, stderr, "--timings shows it per release, with its build path")
	})

	t.Run("the SBOM attestation, read back", func(t *testing.T) {
		rel, _ := p.Release("jetpack7.2")
		files := imageFileContents(t, rel.Tags[0])
		doc := spdxDocument(t, mustRef(t, rel.Tags[0]))
		sums := map[string]string{}
		for _, pkg := range doc.Packages {
			sums[pkg.Name] = pkg.Checksums[0].Value
		}
		for _, bin := range []string{"router-87", "router-110", "jetbake-entrypoint"} {
			require.Equal(t, sha256Hex(files["usr/local/bin/"+bin]), sums[bin], "the scanner scanned the built image: %s", bin)
		}
	})

	// Two more builds run every step again, in the other progress modes.
	again := append(common, "--release", "jetpack6.2", "--no-cache")
	code, stdout, stderr = jetbake(ctx, append(again, "--progress", "rawjson")...)
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `"name":"\[jetpack6\.2\] \[router [0-9]+/[0-9]+\] RUN --mount=type=secret,id=token,required=true`, stderr, "rawjson shows the steps")
	outputs["rawjson progress"] = stdout + stderr
	outputs["tty progress"] = jetbakeOnTTY(t, append(again, "--progress", "tty")...)
	require.Contains(t, outputs["tty progress"], "[jetpack6.2] [router", "the terminal display drew the steps")
	code, stdout, stderr = jetbake(ctx, append(common, "--release", "jetpack6.2", "--progress", "none")...)
	require.Equal(t, 0, code, stderr)
	outputs["no progress"] = stdout + stderr
	outputs["metadata file"] = string(data)

	t.Run("no secret anywhere jetbake wrote or pushed", func(t *testing.T) {
		for what, text := range outputs {
			require.NotContains(t, text, token, what)
			require.NotContains(t, text, fileSecret, what)
		}
		contents := registryContents(t, f.env.Registry)
		require.Empty(t, whereFound(contents, token), "the token in the registry")
		require.Empty(t, whereFound(contents, fileSecret), "the file secret in the registry")
		// The search reaches what it must: the canary is in an image layer,
		// the provenance (mode=max records the stages' arguments) and the cache.
		found := whereFound(contents, canary)
		require.True(t, anyKey(found, "/jetbake/text-embeddings-router@") && anyKey(found, "(uncompressed)"), "canary in an image layer: %v", found)
		require.True(t, anyKey(found, "in-toto"), "canary in the provenance: %v", found)
		require.True(t, anyKey(found, "/jetbake/cache@"), "canary in the cache: %v", found)
		require.True(t, anyKey(whereFound(contents, "https://spdx.dev/Document"), "/jetbake/text-embeddings-router@"), "the SBOM is searched too")
	})
}

// keepReleases keeps the named releases of a decoded matrix.
func keepReleases(m map[string]any, names ...string) {
	var kept []any
	for _, r := range m["releases"].([]any) {
		for _, n := range names {
			if r.(map[string]any)["name"] == n {
				kept = append(kept, r)
			}
		}
	}
	m["releases"] = kept
}

// startSSHAgent starts OpenSSH's ssh-agent on a socket of its own, with one
// new key added, and returns the socket and the key's fingerprint.
func startSSHAgent(t *testing.T) (sock, fingerprint string) {
	t.Helper()
	dir := t.TempDir()
	sock = filepath.Join(dir, "agent.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	require.NoError(t, agent.Start())
	t.Cleanup(func() {
		_ = agent.Process.Kill()
		_ = agent.Wait()
	})
	require.Eventually(t, func() bool { _, err := os.Stat(sock); return err == nil }, 10*time.Second, 20*time.Millisecond, "ssh-agent's socket")
	key, fingerprint := sshKey(t, "agent")
	add := exec.Command("ssh-add", key)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	out, err := add.CombinedOutput()
	require.NoError(t, err, "ssh-add: %s", out)
	return sock, fingerprint
}

// sshKey makes an ed25519 key without a passphrase with ssh-keygen and
// returns the private key's path and the key's SHA-256 fingerprint.
func sshKey(t *testing.T, comment string) (path, fingerprint string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "id_ed25519")
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path).CombinedOutput()
	require.NoError(t, err, "ssh-keygen: %s", out)
	out, err = exec.Command("ssh-keygen", "-l", "-E", "sha256", "-f", path+".pub").Output()
	require.NoError(t, err)
	fields := strings.Fields(string(out))
	require.GreaterOrEqual(t, len(fields), 2, "ssh-keygen -l: %s", out)
	return path, fields[1]
}

// jetbakeOnTTY runs jetbake with its standard error on a pseudo-terminal,
// so that --progress tty draws BuildKit's terminal display, and returns all
// it wrote there.
func jetbakeOnTTY(t *testing.T, args ...string) string {
	t.Helper()
	pty, slavePath, err := console.NewPty()
	require.NoError(t, err)
	defer pty.Close()
	require.NoError(t, pty.Resize(console.WinSize{Height: 50, Width: 200}))
	slave, err := os.OpenFile(slavePath, os.O_RDWR, 0)
	require.NoError(t, err)
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&screen, pty) // ends with EIO once the slave is closed
	}()
	var stdout bytes.Buffer
	code := cli.Run(t.Context(), args, &stdout, slave)
	require.NoError(t, slave.Close())
	<-done
	require.Equal(t, 0, code, screen.String())
	return stdout.String() + screen.String()
}

// imageFileContents unpacks the arm64 image at ref and returns its regular
// files by path.
func imageFileContents(t *testing.T, ref string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, runimage.Unpack(pullArm64(t, ref), dir))
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		out[strings.TrimPrefix(path, dir+"/")] = string(data)
		return err
	}))
	return out
}

// spdxDoc is the part of an SPDX document the test reads.
type spdxDoc struct {
	Packages []struct {
		Name      string `json:"name"`
		Checksums []struct {
			Value string `json:"checksumValue"`
		} `json:"checksums"`
	} `json:"packages"`
}

// spdxDocument reads the SBOM attestation of the image at ref back from the
// registry: the in-toto layer of predicate type https://spdx.dev/Document
// (see attestations).
func spdxDocument(t *testing.T, ref name.Reference) spdxDoc {
	t.Helper()
	for _, dt := range attestations(t, ref)["https://spdx.dev/Document"] {
		var stmt struct {
			Predicate spdxDoc `json:"predicate"`
		}
		require.NoError(t, json.Unmarshal(dt, &stmt))
		require.NotEmpty(t, stmt.Predicate.Packages)
		return stmt.Predicate
	}
	require.Fail(t, "no SPDX attestation in "+ref.String())
	return spdxDoc{}
}

// attestations reads the in-toto statements attached to the image index at
// ref, by predicate type: the layers of its attestation manifests, beside
// the arm64 image.
func attestations(t *testing.T, ref name.Reference) map[string][][]byte {
	t.Helper()
	idx, err := remote.Index(ref)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	out := map[string][][]byte{}
	for _, d := range im.Manifests {
		if d.Annotations["vnd.docker.reference.type"] != "attestation-manifest" {
			continue
		}
		att, err := idx.Image(d.Digest)
		require.NoError(t, err)
		m, err := att.Manifest()
		require.NoError(t, err)
		for _, l := range m.Layers {
			layer, err := att.LayerByDigest(l.Digest)
			require.NoError(t, err)
			rc, err := layer.Uncompressed()
			require.NoError(t, err)
			dt, err := io.ReadAll(rc)
			rc.Close()
			require.NoError(t, err)
			kind := l.Annotations["in-toto.io/predicate-type"]
			out[kind] = append(out[kind], dt)
		}
	}
	return out
}

func randomHex(t *testing.T) string {
	b := make([]byte, 12)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
