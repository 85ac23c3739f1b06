package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/jetbake/jetbake/builder/fleet/labellerimage"
)

const root = "../../.."

// The scripts the action runs: it installs a release binary, builds, and
// signs the pushed digests with them.
const (
	installScript = ".github/scripts/install-jetbake.sh"
	buildScript   = ".github/scripts/jetbake-build.sh"
	signScript    = ".github/scripts/sign-digests.sh"
)

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
// this checkout's action.yml (so that its inputs are checked too). It
// builds natively on GitHub's arm64 runner, without setting up QEMU, and
// its commented alternative for private repositories (a job that builds on
// the repository's own BuildKit nodes) passes actionlint too.
func TestExampleWorkflow(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "examples", "github-actions", "release.yml"))
	require.NoError(t, err)
	require.Contains(t, string(data), "uses: jetbake/jetbake@main")
	local := strings.ReplaceAll(string(data), "uses: jetbake/jetbake@main", "uses: ./")
	errs := lint(t, ".github/workflows/release.yml", []byte(local))
	require.Empty(t, errs, messages(errs))
	var w workflow
	require.NoError(t, yaml.Unmarshal(data, &w))
	require.Equal(t, "ubuntu-24.04-arm", w.Jobs["images"].RunsOn)
	require.Equal(t, "write", w.Permissions["id-token"], "keyless signing needs the job's OIDC token")
	for _, st := range w.Jobs["images"].Steps {
		require.NotContains(t, st.Uses, "setup-qemu-action", "the arm64 runner builds natively; the action sets up QEMU on x86 runners")
	}

	// actionlint does catch a wrong input of the action.
	bad := strings.ReplaceAll(local, "provenance: mode=max", "provenence: mode=max")
	errs = lint(t, ".github/workflows/release.yml", []byte(bad))
	require.Contains(t, messages(errs), `input "provenence" is not defined in action "jetbake"`)

	// The commented job, uncommented, in place of the first.
	var body []string
	for _, line := range strings.Split(local, "\n") {
		if rest, ok := strings.CutPrefix(line, "#    "); ok {
			body = append(body, "    "+rest)
		}
	}
	require.NotEmpty(t, body)
	private := string(data[:strings.Index(string(data), "jobs:")]) + "jobs:\n  images:\n" + strings.Join(body, "\n") + "\n"
	private = strings.ReplaceAll(private, "uses: jetbake/jetbake@main", "uses: ./")
	errs = lint(t, ".github/workflows/private.yml", []byte(private))
	require.Empty(t, errs, messages(errs)+private)
	require.Contains(t, private, "runs-on: ubuntu-24.04\n")
	require.Contains(t, private, "--node orin-1=tcp://")
	require.Contains(t, private, "qemu: false")
}

// compositeAction is the part of action.yml the tests read.
type compositeAction struct {
	Inputs map[string]struct {
		Description string `yaml:"description"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string           `yaml:"using"`
		Steps []map[string]any `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) compositeAction {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	require.NoError(t, err)
	var action compositeAction
	require.NoError(t, yaml.Unmarshal(data, &action))
	return action
}

// actionStep returns the step of the action with the given name.
func (a compositeAction) step(t *testing.T, name string) map[string]any {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s["name"] == name {
			return s
		}
	}
	require.Failf(t, "no such step", "action.yml has no step %q", name)
	return nil
}

// lintAction runs actionlint on the action's steps as the steps of a job
// of a workflow with the action's inputs (actionlint checks workflows, not
// composite steps).
func lintAction(t *testing.T, action compositeAction) []*actionlint.Error {
	t.Helper()
	inputs := map[string]any{}
	for name, in := range action.Inputs {
		inputs[name] = map[string]any{"description": in.Description, "type": "string", "required": false, "default": in.Default}
	}
	workflow := map[string]any{
		"name": "composite",
		"on":   map[string]any{"workflow_call": map[string]any{"inputs": inputs}},
		"jobs": map[string]any{"action": map[string]any{"runs-on": "ubuntu-24.04", "steps": action.Runs.Steps}},
	}
	out, err := yaml.Marshal(workflow)
	require.NoError(t, err)
	return lint(t, ".github/workflows/composite.yml", out)
}

// The composite action's steps pass actionlint; it installs jetbake, sets
// up QEMU only off arm64 runners, runs its shell scripts (tested in
// scripts_test.go) and signs only what it pushed.
func TestCompositeAction(t *testing.T) {
	action := readAction(t)
	require.Equal(t, "composite", action.Runs.Using)
	var runs []string
	for _, s := range action.Runs.Steps {
		if r, ok := s["run"].(string); ok {
			runs = append(runs, r)
		}
	}
	joined := strings.Join(runs, "\n")
	for _, want := range []string{"go install \"github.com/jetbake/jetbake/builder/cmd/jetbake@", "jetbake lock --check",
		`bash "$GITHUB_ACTION_PATH/` + installScript + `" "$JETBAKE_VERSION"`,
		`bash "$GITHUB_ACTION_PATH/` + buildScript + `"`, `bash "$GITHUB_ACTION_PATH/` + signScript + `" "$METADATA"`} {
		require.Contains(t, joined, want)
	}
	// The scripts are where the action runs them from, and Go is set up
	// only for `install: go`.
	for _, s := range []string{installScript, buildScript, signScript} {
		require.FileExists(t, filepath.Join(root, s))
	}
	require.Equal(t, "release", action.Inputs["install"].Default, "the release binary, which needs no Go, is the default")
	require.Equal(t, "Set up Go", action.Runs.Steps[0]["name"])
	require.Equal(t, "inputs.install == 'go'", action.Runs.Steps[0]["if"])

	qemu := action.step(t, "Set up QEMU for linux/arm64")
	require.Equal(t, "docker/setup-qemu-action@v3", qemu["uses"])
	require.Equal(t, "inputs.qemu != 'false' && runner.arch != 'ARM64'", qemu["if"], "an arm64 runner builds natively")
	require.Equal(t, "inputs.github-cache == 'true'", action.step(t, "Hand over the runner's GitHub Actions cache")["if"])
	for _, name := range []string{"Install cosign", "Sign the pushed digests"} {
		require.Equal(t, "inputs.sign == 'true' && inputs.push == 'true'", action.step(t, name)["if"])
	}
	build := action.step(t, "Build")["env"].(map[string]any)
	for env, input := range map[string]string{"SECRETS": "secrets", "SECRET_ENVS": "secret-envs", "SECRET_FILES": "secret-files", "GITHUB_CACHE": "github-cache"} {
		require.Equal(t, "${{ inputs."+input+" }}", build[env])
	}
	for _, in := range []string{"qemu", "secrets", "secret-envs", "secret-files", "github-cache", "sign", "cosign-key"} {
		require.Contains(t, action.Inputs, in)
	}
	errs := lintAction(t, action)
	require.Empty(t, errs, messages(errs))

	// actionlint does catch a wrong property of the runner's context.
	qemu["if"] = "runner.archh != 'ARM64'"
	require.Contains(t, messages(lintAction(t, action)), `property "archh" is not defined`)
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
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
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
	require.Equal(t, map[string]string{"contents": "write", "id-token": "write", "attestations": "write", "packages": "write"}, rel.Permissions)
	require.Equal(t, "make release", w.stepNamed(t, "release", "Build").Run)
	attest := w.stepNamed(t, "release", "Attest build provenance")
	require.Equal(t, "actions/attest-build-provenance@v3", attest.Uses)
	require.Equal(t, "dist/SHA256SUMS", attest.With["subject-checksums"])
	labeller := w.stepNamed(t, "release", "Publish the labeller image").Run
	require.Contains(t, labeller, "dist/jetbake-linux-amd64 fleet --push-labeller \""+labellerimage.Repository+":$TAG\" \\\n  --labeller-binaries dist",
		"the image jetbake fleet --labeller names, from make release's binaries")
	require.Equal(t, "jetbake", w.stepNamed(t, "release", "Set up BuildKit").With["name"], "the daemon the push's --addr names")
	require.Contains(t, labeller, "--addr docker-container://buildx_buildkit_jetbake0")
	publish := w.stepNamed(t, "release", "Publish the release").Run
	require.Contains(t, publish, "dist/jetbake-linux-amd64 dist/jetbake-linux-arm64 dist/SHA256SUMS")
}
