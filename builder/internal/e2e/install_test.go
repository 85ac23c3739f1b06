package e2e

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/jetbake/jetbake/builder/cli"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/ci"
	"github.com/jetbake/jetbake/builder/version"
)

// TestInstalledToolInAnotherRepository is the path of a release pipeline:
// jetbake installed with `go install module@version` (from a module proxy
// on disk made of this checkout, offline), run in a fresh git repository
// that holds only its matrix and router Dockerfile. The go-installed jetbake
// builds its own entrypoints from its module source; the image carries the
// user's revision and jetbake's version apart.
func TestInstalledToolInAnotherRepository(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	goEnv := installEnv(t, f.env.RepoRoot)
	gobin := filepath.Join(t.TempDir(), "gobin")
	goEnv = append(goEnv, "GOBIN="+gobin)
	install := exec.CommandContext(ctx, "go", "install", version.ModulePath+"/builder/cmd/jetbake@"+goEnv[0][len("JETBAKE_TEST_VERSION="):])
	install.Env = append(os.Environ(), goEnv[1:]...)
	install.Dir = t.TempDir()
	out, err := install.CombinedOutput()
	require.NoError(t, err, "go install: %s", out)
	jetbakeBin := filepath.Join(gobin, "jetbake")
	require.FileExists(t, jetbakeBin, "go install gives a binary named jetbake")
	modVersion := goEnv[0][len("JETBAKE_TEST_VERSION="):]

	repo := t.TempDir()
	cacheHome := t.TempDir()
	run := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, jetbakeBin, args...)
		cmd.Dir = repo
		// Its own cache folder (the entrypoints built on demand) and the
		// module cache holding its source.
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=ci", "-c", "user.email=ci@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}

	stdout, stderr, err := run("version")
	require.NoError(t, err, stderr)
	require.Equal(t, "jetbake "+modVersion+" (commit "+modVersion[len(modVersion)-12:]+")\n", stdout)

	git("init", "-q")
	stdout, stderr, err = run("init", "--router", "text-embeddings-inference", "--repository", f.env.Registry+"/acme/router", "--source", "https://example.com/acme/router")
	require.NoError(t, err, stderr)
	require.Contains(t, stdout, "wrote matrix.json, matrix.schema.json, Dockerfile-jetson")
	// The Jetson gate of this repository, as the installed jetbake writes it.
	stdout, stderr, err = run("init", "--gate")
	require.NoError(t, err, stderr)
	require.Contains(t, stdout, filepath.Join(repo, cli.GateWorkflow)+", "+filepath.Join(repo, cli.GateIssueForm))
	gate, err := os.ReadFile(filepath.Join(repo, cli.GateWorkflow))
	require.NoError(t, err)
	lintErrs, err := ci.Lint(repo, cli.GateWorkflow, gate)
	require.NoError(t, err)
	require.Empty(t, lintErrs, ci.Messages(lintErrs))
	require.Contains(t, string(gate), `MATRIX: "matrix.json"`)
	require.Contains(t, string(gate), `default: "`+f.env.Registry+`/acme/router"`)
	require.Contains(t, string(gate), `JETBAKE_VERSION: "latest"`, "a pseudo-version is no release to install")
	require.FileExists(t, filepath.Join(repo, cli.GateActionlint))
	// TEI's source, as a pipeline checks it out beside its matrix (this
	// machine cannot reach GitHub): the TEI-shaped tree, nothing of jetbake's.
	require.NoError(t, os.CopyFS(filepath.Join(repo, "tei"), os.DirFS(filepath.Join(f.env.RepoRoot, TEISource))))
	editJSON(t, filepath.Join(repo, "matrix.json"), func(m map[string]any) {
		m["router"].(map[string]any)["context"] = "tei"
		// This pipeline builds on the QEMU path: the cross path through
		// init's recipe needs Ubuntu's and NVIDIA's repositories (the
		// test bed's are checkCross's, with only their addresses given).
		withoutCrossBases(m)
	})
	_, stderr, err = run("validate")
	require.NoError(t, err, stderr)
	git("add", ".")
	git("commit", "-q", "-m", "matrix")
	userRevision := git("rev-parse", "HEAD")

	p, err := LoadPlan(filepath.Join(repo, "matrix.json"))
	require.NoError(t, err)
	_, err = f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	mirror := "nvcr.io=" + f.env.Registry
	_, stderr, err = run("lock", "--mirror", mirror)
	require.NoError(t, err, stderr)
	_, stderr, err = run("lock", "--mirror", mirror, "--check")
	require.NoError(t, err, stderr)
	git("add", ".")
	git("commit", "-q", "-m", "lock")
	userRevision = git("rev-parse", "HEAD")

	_, stderr, err = run("build", "--addr", f.env.Daemon.Addr, "--mirror", mirror, "--push", "--check-lock",
		"--release", "jetpack6.2", "--metadata-file", "build.json", "--progress", "plain", "--provenance", "mode=max",
		"--tag", "{version}-jetpack{jetpack}-{sha}")
	require.NoError(t, err, stderr)
	require.Contains(t, stderr, "building the linux/arm64 entrypoint binaries of jetbake "+modVersion)

	data, err := os.ReadFile(filepath.Join(repo, "build.json"))
	require.NoError(t, err)
	var report imagebuild.Report
	require.NoError(t, json.Unmarshal(data, &report))
	require.Len(t, report.Releases, 1)
	require.Contains(t, report.Releases[0].Tags, f.env.Registry+"/acme/router:1.9.3-jetpack6.2-"+userRevision[:12], "--tag with {sha}")
	require.Equal(t, []string{"libcuda.so.1", "libcudart.so.12", "libssl.so.3", "libcrypto.so.3", "libgcc_s.so.1", "libstdc++.so.6", "libc.so.6"},
		report.Releases[0].Binaries[0].Needed, "TEI built by the Dockerfile init wrote")
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &doc))
	var bake map[string]any
	require.NoError(t, json.Unmarshal(doc["jetpack6.2"], &bake), "bake's per-target keys")
	require.Equal(t, report.Releases[0].Digest, bake["containerimage.digest"])
	ref, err := name.ParseReference(report.Releases[0].Tags[0])
	require.NoError(t, err)
	img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
	require.NoError(t, err)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, userRevision, cfg.Config.Labels["org.opencontainers.image.revision"], "the user's revision")
	require.Equal(t, modVersion, cfg.Config.Labels[imagebuild.KeyToolVersion], "jetbake's version, apart")
	checkProvenance(t, ref, "max")
}

// checkProvenance reads the provenance attestation of the image at ref back
// from the registry, where BuildKit attaches it: an attestation manifest in
// the index that refers to the arm64 image and holds an in-toto SLSA
// provenance statement of the given mode.
func checkProvenance(t *testing.T, ref name.Reference, mode string) {
	t.Helper()
	idx, err := remote.Index(ref)
	require.NoError(t, err)
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	var image, attestation *v1.Descriptor
	for i, d := range im.Manifests {
		switch {
		case d.Annotations["vnd.docker.reference.type"] == "attestation-manifest":
			attestation = &im.Manifests[i]
		case d.Platform != nil && d.Platform.Architecture == "arm64":
			image = &im.Manifests[i]
		}
	}
	require.NotNil(t, image, "the arm64 image")
	require.NotNil(t, attestation, "an attestation manifest beside it")
	require.Equal(t, image.Digest.String(), attestation.Annotations["vnd.docker.reference.digest"])
	att, err := idx.Image(attestation.Digest)
	require.NoError(t, err)
	layers, err := att.Layers()
	require.NoError(t, err)
	m, err := att.Manifest()
	require.NoError(t, err)
	found := false
	for i, l := range m.Layers {
		if !strings.HasPrefix(l.Annotations["in-toto.io/predicate-type"], "https://slsa.dev/provenance/") {
			continue
		}
		rc, err := layers[i].Uncompressed()
		require.NoError(t, err)
		var stmt struct {
			PredicateType string         `json:"predicateType"`
			Predicate     map[string]any `json:"predicate"`
		}
		require.NoError(t, json.NewDecoder(rc).Decode(&stmt))
		rc.Close()
		require.Contains(t, fmt.Sprint(stmt.Predicate["buildDefinition"]), "builderPlatform")
		if mode == "max" {
			// mode=max records the whole LLB definition; mode=min does not.
			require.Contains(t, fmt.Sprint(stmt.Predicate["buildDefinition"]), "llbDefinition", "provenance of mode max")
		}
		found = true
	}
	require.True(t, found, "a SLSA provenance statement")
}

// installEnv makes a module proxy on disk holding this checkout (its
// tracked and untracked, not ignored, files) as a pseudo-version of
// jetbake's module named by the content's hash, and returns
// JETBAKE_TEST_VERSION=VERSION followed by the environment for an offline
// `go install`: the proxy first, then the module cache's own download
// folder for the dependencies.
func installEnv(t *testing.T, root string) []string {
	t.Helper()
	src := t.TempDir()
	require.NoError(t, CopyCheckout(root, src))
	var zbuf bytes.Buffer
	tmpVersion := module.Version{Path: version.ModulePath, Version: "v0.0.0-20260101000000-000000000000"}
	require.NoError(t, modzip.CreateFromDir(&zbuf, tmpVersion, src))
	sum := sha256.Sum256(zbuf.Bytes())
	v := fmt.Sprintf("v0.0.0-%s-%s", time.Now().UTC().Format("20060102150405"), hex.EncodeToString(sum[:])[:12])
	mv := module.Version{Path: version.ModulePath, Version: v}
	zbuf.Reset()
	require.NoError(t, modzip.CreateFromDir(&zbuf, mv, src))
	_, err := zip.NewReader(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()))
	require.NoError(t, err)

	proxy := t.TempDir()
	dir := filepath.Join(proxy, version.ModulePath, "@v")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list"), []byte(v+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, v+".info"), fmt.Appendf(nil, `{"Version":%q,"Time":%q}`, v, time.Now().UTC().Format(time.RFC3339)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, v+".mod"), gomod, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, v+".zip"), zbuf.Bytes(), 0o644))

	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	download := filepath.Join(strings.TrimSpace(string(modcache)), "cache", "download")
	return []string{
		"JETBAKE_TEST_VERSION=" + v,
		"GOPROXY=file://" + proxy + ",file://" + download,
		"GOSUMDB=off", "GOFLAGS=-trimpath", "GOTOOLCHAIN=local", "GOWORK=off", "CGO_ENABLED=0",
	}
}

// editJSON changes the JSON file at path in place.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	edit(m)
	data, err = json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}
