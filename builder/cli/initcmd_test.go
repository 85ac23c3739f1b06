package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/dockerfiles"
)

// init writes a matrix that validates once the Dockerfile it names exists,
// and does not overwrite one without --force.
func TestInitWritesAMatrixThatValidates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "matrix.json")
	r := run(t, "init", "-f", path, "--repository", "registry.example.com/acme/embedder")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "wrote "+path)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch AS router\n"), 0o644))
	r = run(t, "validate", "-f", path)
	require.Equal(t, ExitOK, r.code, r.stdout+r.stderr)
	r = run(t, "plan", "-f", path, "--format", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "registry.example.com/acme/embedder")

	r = run(t, "init", "-f", path)
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "exists: give --force")
	require.Equal(t, ExitOK, run(t, "init", "-f", path, "--force").code)

	r = run(t, "init", "-f", filepath.Join(dir, "other.json"), "--repository", "Not A Repo")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, `--repository "Not A Repo"`)
}

// init --router text-embeddings-inference writes TEI's router section,
// the shipped matrix's, and jetbake's Dockerfile-jetson beside the matrix:
// the matrix validates as it is, with nothing copied from jetbake's checkout.
func TestInitTEI(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ci", "matrix.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	r := run(t, "init", "-f", path, "--router", "text-embeddings-inference", "--repository", "registry.example.com/acme/tei")
	require.Equal(t, ExitOK, r.code, r.stderr)
	dockerfile := filepath.Join(dir, "ci", "Dockerfile-jetson")
	require.Contains(t, r.stdout, "wrote "+path+", "+filepath.Join(dir, "ci", "matrix.schema.json")+", "+dockerfile)
	data, err := os.ReadFile(dockerfile)
	require.NoError(t, err)
	require.Equal(t, dockerfiles.DockerfileJetson(), data, "jetbake's embedded copy")

	var written, shipped map[string]any
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &written))
	data, err = os.ReadFile("../../matrix.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &shipped))
	router, want := written["router"].(map[string]any), shipped["router"].(map[string]any)
	require.Equal(t, "Dockerfile-jetson", router["dockerfile"])
	delete(router, "dockerfile")
	delete(want, "dockerfile")
	require.Equal(t, want, router, "the shipped matrix's router section")

	r = run(t, "validate", "-f", path)
	require.Equal(t, ExitOK, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "on stage runtime-base: ok")

	require.NoError(t, os.Remove(path))
	r = run(t, "init", "-f", path, "--router", "text-embeddings-inference")
	require.Equal(t, ExitUsage, r.code, "Dockerfile-jetson is not replaced without --force")
	require.Contains(t, r.stderr, dockerfile+" exists: give --force")
	require.NoFileExists(t, path, "nothing is written when one file is refused")
	r = run(t, "init", "-f", path, "--router", "tgi")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, `--router "tgi": jetbake knows text-embeddings-inference`)
}

func TestVersionCommand(t *testing.T) {
	r := run(t, "version")
	require.Equal(t, ExitOK, r.code)
	require.Regexp(t, `^jetbake \S+`, r.stdout)
	r = run(t, "version", "--format", "json")
	require.Equal(t, ExitOK, r.code)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.NotEmpty(t, got["version"])
	require.NotEmpty(t, got["go"])
}

// init --gate writes the gate beside the matrix's repository root (here a
// folder outside git: the matrix's), needs the matrix, and keeps an
// actionlint configuration of the repository's own.
func TestInitGate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "matrix.json")
	r := run(t, "init", "--gate", "-f", path)
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "init --gate reads the matrix for its image repository: matrix file "+path+" does not exist")
	require.NoDirExists(t, filepath.Join(dir, ".github"))

	require.Equal(t, ExitOK, run(t, "init", "-f", path, "--repository", "registry.example.com/acme/embedder").code)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".github"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".github", "actionlint.yml"), []byte("self-hosted-runner:\n  labels: [orin]\n"), 0o644))
	r = run(t, "init", "--gate", "-f", path)
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "wrote "+filepath.Join(dir, GateWorkflow)+", "+filepath.Join(dir, GateIssueForm)+": next, commit them")
	require.NoFileExists(t, filepath.Join(dir, GateActionlint), "the repository's own actionlint.yml is kept")
	data, err := os.ReadFile(filepath.Join(dir, GateWorkflow))
	require.NoError(t, err)
	require.Contains(t, string(data), `default: "registry.example.com/acme/embedder"`)
	require.Contains(t, string(data), `MATRIX: "matrix.json"`)

	r = run(t, "init", "--gate", "--router", RouterTEI, "-f", path)
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "--gate writes the gate for the matrix there is, --router and --app a new matrix: give one of them")
}
