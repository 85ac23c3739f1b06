package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
