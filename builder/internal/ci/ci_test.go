package ci

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"
)

const root = "../../.."

// lint runs actionlint on a workflow's content as if it were at path
// inside the checkout, and returns its errors.
func lint(t *testing.T, path string, content []byte) []*actionlint.Error {
	t.Helper()
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	project, err := actionlint.NewProject(abs)
	require.NoError(t, err)
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	require.NoError(t, err)
	errs, err := l.Lint(path, content, project)
	require.NoError(t, err)
	return errs
}

func messages(errs []*actionlint.Error) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error() + "\n")
	}
	return b.String()
}

// The example workflow passes actionlint, with jetbake's action read from
// this checkout's action.yml (so that its inputs are checked too).
func TestExampleWorkflow(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "examples", "github-actions", "release.yml"))
	require.NoError(t, err)
	require.Contains(t, string(data), "uses: jetbake/jetbake@main")
	local := strings.ReplaceAll(string(data), "uses: jetbake/jetbake@main", "uses: ./")
	errs := lint(t, ".github/workflows/release.yml", []byte(local))
	require.Empty(t, errs, messages(errs))

	// actionlint does catch a wrong input of the action.
	bad := strings.ReplaceAll(local, "provenance: mode=max", "provenence: mode=max")
	errs = lint(t, ".github/workflows/release.yml", []byte(bad))
	require.Contains(t, messages(errs), `input "provenence" is not defined in action "jetbake"`)
}

// The composite action's steps pass actionlint as the steps of a job with
// the action's inputs (actionlint checks workflows, not composite steps).
func TestCompositeAction(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	require.NoError(t, err)
	var action struct {
		Inputs map[string]struct {
			Description string `yaml:"description"`
			Default     string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Using string           `yaml:"using"`
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"runs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &action))
	require.Equal(t, "composite", action.Runs.Using)
	var runs []string
	inputs := map[string]any{}
	for name, in := range action.Inputs {
		inputs[name] = map[string]any{"description": in.Description, "type": "string", "required": false, "default": in.Default}
	}
	for _, s := range action.Runs.Steps {
		if r, ok := s["run"].(string); ok {
			runs = append(runs, r)
		}
	}
	joined := strings.Join(runs, "\n")
	for _, want := range []string{"go install \"github.com/jetbake/jetbake/builder/cmd/jetbake@", "jetbake lock --check", "--push", "--metadata-file"} {
		require.Contains(t, joined, want)
	}
	workflow := map[string]any{
		"name": "composite",
		"on":   map[string]any{"workflow_call": map[string]any{"inputs": inputs}},
		"jobs": map[string]any{"action": map[string]any{"runs-on": "ubuntu-24.04", "steps": action.Runs.Steps}},
	}
	out, err := yaml.Marshal(workflow)
	require.NoError(t, err)
	errs := lint(t, ".github/workflows/composite.yml", out)
	require.Empty(t, errs, messages(errs)+string(out))
}
