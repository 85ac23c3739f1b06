package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/require"
)

// init --app pytorch writes a matrix that validates as it is, and a
// Dockerfile that BuildKit's parser reads, with the stage the matrix
// names FROM ${BASE}, the venv, the constraints that keep torch, and
// bitsandbytes left out with its reason.
func TestInitAppPyTorch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "matrix.json")
	r := run(t, "init", "-f", path, "--app", "pytorch", "--repository", "registry.example.com/acme/obliteratus")
	require.Equal(t, ExitOK, r.code, r.stderr)
	dockerfile := filepath.Join(dir, "Dockerfile")
	require.Contains(t, r.stdout, "wrote "+path+", "+filepath.Join(dir, "matrix.schema.json")+", "+dockerfile)

	r = run(t, "validate", "-f", path)
	require.Equal(t, ExitOK, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "app app, 2 releases")
	r = run(t, "plan", "-f", path)
	require.Equal(t, ExitOK, r.code, r.stderr)
	for _, want := range []string{
		"base:         nvcr.io/nvidia/pytorch:25.06-py3-igpu (Tegra CUDA 12.9, from the table), torch 2.8.0a0, Python 3.12",
		"base:         nvcr.io/nvidia/pytorch:25.08-py3 (SBSA CUDA 13.0, from the table), torch 2.8.0a0, Python 3.12",
		"CUDA_ARCH_LIST=8.7", "CUDA_ARCH_LIST=11.0", "registry.example.com/acme/obliteratus:0.1.0-jetpack7.0",
	} {
		require.Contains(t, r.stdout, want)
	}

	// The build's smoke run and the gate's --smoke run the app with
	// arguments a real command line passes without a GPU, not --version.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m struct {
		App struct{ Smoke []string } `json:"app"`
	}
	require.NoError(t, json.Unmarshal(data, &m))
	require.Equal(t, []string{"--help"}, m.App.Smoke)

	data, err = os.ReadFile(dockerfile)
	require.NoError(t, err)
	ast, err := parser.Parse(strings.NewReader(string(data)))
	require.NoError(t, err)
	stages, metaArgs, err := instructions.Parse(ast.AST, nil)
	require.NoError(t, err)
	require.Len(t, stages, 1)
	require.Equal(t, "app", stages[0].Name)
	require.Equal(t, "${BASE}", stages[0].BaseName)
	require.Equal(t, "BASE", metaArgs[0].Args[0].Key)
	text := string(data)
	for _, want := range []string{
		"python3 -m venv --without-pip --system-site-packages /opt/venv", "python -m pip install -c /opt/venv/constraints.txt /src",
		`echo "torch==$(python3 -c 'import importlib.metadata as m; print(m.version("torch"))')"`,
		"/etc/pip/constraint.txt", "ARG PIP_INDEX_URL", "pip-check.before",
		`"not compatible with the`, "-DCOMPUTE_CAPABILITY=87", "jp6/cu126",
	} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, strings.ToLower(strings.Join(commands(stages[0]), "\n")), "bitsandbytes", "no command installs bitsandbytes")

	r = run(t, "init", "-f", path, "--app", "tensorflow", "--force")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, `--app "tensorflow": jetbake knows pytorch`)
	r = run(t, "init", "-f", path, "--app", "pytorch", "--router", RouterTEI)
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "--router writes a router's matrix, --app an app's: give one of them")
}

// commands are the stage's instructions as written.
func commands(s instructions.Stage) []string {
	out := make([]string, len(s.Commands))
	for i, c := range s.Commands {
		out[i] = c.(interface{ String() string }).String()
	}
	return out
}
