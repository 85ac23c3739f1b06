package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// appPassed is the app check's detail when it passed on an Orin.
const appPassed = "torch for CUDA 12.9 sees the Jetson Orin GPU (SM 8.7) and a CUDA matrix product on it is finite"

// appProbeFile writes the serving evidence as an app image's probe writes
// it (image.kind "app", the app check in place of the serve check), with
// the tags of repository.
func appProbeFile(t *testing.T, repository string) string {
	t.Helper()
	return probeFile(t, func(ev *evidence.Evidence) {
		ev.Image.Kind = evidencespec.KindApp
		ev.Image.Tags = []string{repository + ":0.1.0-jetpack6.2"}
		ev.Result.Checks = slices.DeleteFunc(ev.Result.Checks, func(c evidence.Check) bool { return c.Name == evidencespec.CheckServe })
		ev.Result.Checks = append(ev.Result.Checks, evidence.Check{Name: evidencespec.CheckApp, Status: evidence.Passed, Detail: appPassed})
		ev.Result.Serve = nil
	})
}

// supportedAppMatrix writes the matrix init --app pytorch writes, with
// jetpack6.2 claiming "supported", and returns its path.
func supportedAppMatrix(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "matrix.json")
	r := run(t, "init", "--app", AppPyTorch, "-f", path, "--repository", "ghcr.io/acme/obliteratus")
	require.Equal(t, 0, r.code, r.stderr)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	doc := strings.Replace(string(data), `"tier": "candidate"`, `"tier": "supported"`, 1)
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	return path
}

// TestEvidenceApp: an app's evidence is added to an app's matrix and
// support shows it at level app; evidence add refuses it for a router's
// matrix, and a router's for an app's, in one sentence each.
func TestEvidenceApp(t *testing.T) {
	md := buildMetadata(t, probeDigest)
	app := supportedAppMatrix(t)
	file := appProbeFile(t, "ghcr.io/acme/obliteratus")
	r := runEv(t, "evidence", "add", file, "--matrix", app, "--metadata-file", md, "--registry=false")
	require.Equal(t, 0, r.code, r.stderr)

	r = runEv(t, "support", "--matrix", app, "--metadata-file", md, "--registry=false")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "sha256:c2efadaaded6, rev 677e5d8f2a41, level app (counts)\n")
	require.NotContains(t, r.stdout, "TEI", "the router's CUDA 13 rule is not an app's")
	r = runEv(t, "support", "--matrix", app, "--metadata-file", md, "--registry=false", "--format", "markdown")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "for a supported release it must reach level app (a CUDA kernel ran and the app check passed")

	r = runEv(t, "evidence", "report", file)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "| App check | ✅ passed: "+appPassed+" |\n")

	r = runEv(t, "evidence", "add", file, "--matrix", supportedMatrix(t), "--metadata-file", md, "--registry=false")
	require.Equal(t, ExitFailure, r.code)
	require.Contains(t, r.stderr, file+`: evidence refused (wrong-kind): the evidence is of an app image (image.kind "app") but the matrix builds `+
		`router images; fix: run 'jetbake-probe --smoke --kernel --serve /model --out evidence.json' inside an image this matrix built`+"\n")

	router := probeFile(t, nil)
	r = runEv(t, "evidence", "add", router, "--matrix", supportedAppMatrix(t), "--metadata-file", md, "--registry=false")
	require.Equal(t, ExitFailure, r.code)
	require.Contains(t, r.stderr, router+`: evidence refused (wrong-kind): the evidence is of a router image (image.kind "") but the matrix builds `+
		`app images; fix: run 'jetbake-probe --smoke --kernel --out evidence.json' inside an image this matrix built`+"\n")
}
