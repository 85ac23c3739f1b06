package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"
)

const root = "../../.."

// installScript is the script the action installs a release binary with.
const installScript = ".github/scripts/install-jetbake.sh"

// lint runs actionlint on a workflow's content as if it were at path
// inside the checkout, and returns its errors.
func lint(t *testing.T, path string, content []byte) []*actionlint.Error {
	t.Helper()
	abs, err := filepath.Abs(root)
	require.NoError(t, err)
	errs, err := Lint(abs, path, content)
	require.NoError(t, err)
	return errs
}

func messages(errs []*actionlint.Error) string { return Messages(errs) }

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
	for _, want := range []string{"go install \"github.com/jetbake/jetbake/builder/cmd/jetbake@", "jetbake lock --check", "--push", "--metadata-file",
		`bash "$GITHUB_ACTION_PATH/` + installScript + `" "$JETBAKE_VERSION"`} {
		require.Contains(t, joined, want)
	}
	// The install script is where the action runs it from, and Go is set up
	// only for `install: go`.
	require.FileExists(t, filepath.Join(root, installScript))
	require.Equal(t, "release", action.Inputs["install"].Default, "the release binary, which needs no Go, is the default")
	require.Equal(t, "Set up Go", action.Runs.Steps[0]["name"])
	require.Equal(t, "inputs.install == 'go'", action.Runs.Steps[0]["if"])
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

// jetbake's own workflows pass actionlint at their paths; the release
// workflow's call of the CI workflow is checked against ci.yml too.
func TestOwnWorkflows(t *testing.T) {
	for _, name := range []string{"ci.yml", "release.yml"} {
		path := filepath.Join(".github", "workflows", name)
		data, err := os.ReadFile(filepath.Join(root, path))
		require.NoError(t, err)
		errs := lint(t, path, data)
		require.Empty(t, errs, messages(errs))
	}

	// actionlint does catch a wrong input of attest-build-provenance and a
	// job that does not exist.
	data, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	require.NoError(t, err)
	bad := strings.ReplaceAll(string(data), "subject-checksums:", "subject-checksum:")
	bad = strings.ReplaceAll(bad, "needs: test", "needs: tests")
	msgs := messages(lint(t, ".github/workflows/release.yml", []byte(bad)))
	require.Contains(t, msgs, `input "subject-checksum" is not defined in action "actions/attest-build-provenance@v3"`)
	require.Contains(t, msgs, `job "release" needs job "tests" which does not exist in this workflow`)
}

// workflow is the part of a GitHub Actions workflow the tests read.
type workflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		RunsOn      string            `yaml:"runs-on"`
		Needs       string            `yaml:"needs"`
		Uses        string            `yaml:"uses"`
		Permissions map[string]string `yaml:"permissions"`
		Steps       []step            `yaml:"steps"`
	} `yaml:"jobs"`
}

type step struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".github", "workflows", name))
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(data, &w))
	return w
}

// stepNamed returns the step of job with the given name.
func (w workflow) stepNamed(t *testing.T, job, name string) step {
	t.Helper()
	for _, s := range w.Jobs[job].Steps {
		if s.Name == name {
			return s
		}
	}
	require.Failf(t, "no such step", "job %s has no step %q", job, name)
	return step{}
}

// CI runs `make test` as .ci/run does, as root, on ubuntu-24.04, for pushes
// and pull requests; the release workflow runs it first.
func TestCIWorkflow(t *testing.T) {
	w := readWorkflow(t, "ci.yml")
	for _, event := range []string{"push", "pull_request", "workflow_call"} {
		require.Contains(t, w.On, event)
	}
	test := w.Jobs["test"]
	require.Equal(t, "ubuntu-24.04", test.RunsOn)
	run := w.stepNamed(t, "test", "make test, as root").Run
	require.Contains(t, run, "sudo ")
	require.Contains(t, run, "bash .ci/run")
	ciRun, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	require.NoError(t, err)
	require.Contains(t, string(ciRun), "make test")
}

// A tag builds with `make release`, attests the provenance of every file
// that SHA256SUMS names, and publishes the binaries with SHA256SUMS.
func TestReleaseWorkflow(t *testing.T) {
	w := readWorkflow(t, "release.yml")
	require.Equal(t, map[string]any{"tags": []any{"v*"}}, w.On["push"])
	require.Equal(t, "./.github/workflows/ci.yml", w.Jobs["test"].Uses)
	rel := w.Jobs["release"]
	require.Equal(t, "test", rel.Needs)
	require.Equal(t, map[string]string{"contents": "write", "id-token": "write", "attestations": "write"}, rel.Permissions)
	require.Equal(t, "make release", w.stepNamed(t, "release", "Build").Run)
	attest := w.stepNamed(t, "release", "Attest build provenance")
	require.Equal(t, "actions/attest-build-provenance@v3", attest.Uses)
	require.Equal(t, "dist/SHA256SUMS", attest.With["subject-checksums"])
	publish := w.stepNamed(t, "release", "Publish the release").Run
	require.Contains(t, publish, "dist/jetbake-linux-amd64 dist/jetbake-linux-arm64 dist/SHA256SUMS")
}
