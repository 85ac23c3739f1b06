package ci

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/jetbake/jetbake/builder/cli"
	"github.com/jetbake/jetbake/builder/evidence"
)

// initGate runs `jetbake init` and `jetbake init --gate` for a matrix at
// ci/matrix.json of a fresh git repository outside the checkout, as a
// user's repository is, and returns the repository's folder.
func initGate(t *testing.T) string {
	t.Helper()
	return initGateWith(t, "--router", cli.RouterTEI, "--repository", "ghcr.io/acme/embedder")
}

// initGateWith is initGate with the arguments of the first `jetbake init`.
func initGateWith(t *testing.T, initArgs ...string) string {
	t.Helper()
	repo := t.TempDir()
	out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, os.Mkdir(filepath.Join(repo, "ci"), 0o755))
	matrixPath := filepath.Join(repo, "ci", "matrix.json")
	for _, args := range [][]string{
		append([]string{"init", "-f", matrixPath}, initArgs...),
		{"init", "--gate", "-f", matrixPath},
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, cli.ExitOK, cli.Run(context.Background(), args, &stdout, &stderr), stderr.String())
	}
	return repo
}

// gateWorkflow is the part of the gate's workflow the tests read.
type gateWorkflow struct {
	On          map[string]map[string]map[string]map[string]any `yaml:"on"`
	Permissions map[string]string                               `yaml:"permissions"`
	Jobs        map[string]struct {
		RunsOn []string          `yaml:"runs-on"`
		Env    map[string]string `yaml:"env"`
		Steps  []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			If   string            `yaml:"if"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestGateWorkflow: the workflow init --gate writes passes actionlint in
// the user's repository, runs by hand only on the Jetson runner's labels,
// reads the registry with GITHUB_TOKEN only, runs the steps the gate is
// made of in order, and keeps the evidence and logs 30 days.
func TestGateWorkflow(t *testing.T) {
	repo := initGate(t)
	data, err := os.ReadFile(filepath.Join(repo, cli.GateWorkflow))
	require.NoError(t, err)
	errs, err := Lint(repo, cli.GateWorkflow, data)
	require.NoError(t, err)
	require.Empty(t, errs, Messages(errs))

	var w gateWorkflow
	require.NoError(t, yaml.Unmarshal(data, &w))
	require.Len(t, w.On, 1, "workflow_dispatch only: never a push or a pull request")
	inputs := w.On["workflow_dispatch"]["inputs"]
	require.Equal(t, "ghcr.io/acme/embedder", inputs["image"]["default"], "the matrix's repository")
	require.Contains(t, inputs, "model")
	require.Equal(t, map[string]string{"contents": "read", "packages": "read"}, w.Permissions)
	gate := w.Jobs["gate"]
	require.Equal(t, []string{"self-hosted", "linux", "ARM64", "jetson"}, gate.RunsOn)
	require.Equal(t, "ci/matrix.json", gate.Env["MATRIX"], "the matrix's path in the repository")
	require.Equal(t, "latest", gate.Env["JETBAKE_VERSION"], "a development build installs the latest release")

	// Only GITHUB_TOKEN, the registry read, among the secrets.
	require.Equal(t, []string{"secrets.GITHUB_TOKEN"}, regexp.MustCompile(`secrets\.[A-Za-z0-9_]+`).FindAllString(string(data), -1))

	var runs []string
	for _, s := range gate.Steps {
		runs = append(runs, s.Run)
	}
	all := strings.Join(runs, "\n")
	order := []string{"jetbake doctor", "jetbake pick", "--entrypoint /usr/local/bin/jetbake-probe \"$REF\"",
		"--smoke --kernel --serve /model --out /out/evidence.json",
		"jetbake evidence add -f \"$MATRIX\"", "jetbake evidence report \"$report\" --format markdown >> \"$GITHUB_STEP_SUMMARY\""}
	at := -1
	for _, want := range order {
		i := strings.Index(all, want)
		require.Greater(t, i, at, "%q comes after the step before it", want)
		at = i
	}
	require.Contains(t, all, "docker run --rm --runtime nvidia")
	require.Contains(t, all, `-v "$MODEL:/model:ro"`)
	last := gate.Steps[len(gate.Steps)-2]
	require.Equal(t, "actions/upload-artifact@v4", last.Uses)
	require.Equal(t, "always()", last.If)
	require.Equal(t, "30", last.With["retention-days"])
	require.Contains(t, last.With["path"], "evidence/")

	// The first step refuses every ref but the default branch and tags.
	refuse := gate.Steps[0]
	for ref, ok := range map[string]bool{"refs/heads/main": true, "refs/tags/v1.0.0": true, "refs/heads/feature": false,
		"refs/pull/7/merge": false, "refs/heads/main-backup": false} {
		cmd := exec.Command("bash", "-eo", "pipefail", "-c", refuse.Run)
		cmd.Env = append(os.Environ(), "REF="+ref, "DEFAULT_BRANCH=main")
		out, err := cmd.CombinedOutput()
		require.Equal(t, ok, err == nil, "%s: %s", ref, out)
		if !ok {
			require.Contains(t, string(out), "::error::the Jetson gate runs only the default branch (main) or a tag, not "+ref)
		}
	}

	// actionlint does catch a broken gate.
	bad := strings.Replace(string(data), "steps.image.outputs.ref", "steps.picked.outputs.ref", 1)
	errs, err = Lint(repo, cli.GateWorkflow, []byte(bad))
	require.NoError(t, err)
	require.Contains(t, Messages(errs), `property "picked" is not defined`)

	// Not replaced without --force.
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), []string{"init", "--gate", "-f", filepath.Join(repo, "ci", "matrix.json")}, &stdout, &stderr)
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr.String(), filepath.Join(repo, cli.GateWorkflow)+" exists: give --force")
}

// issueForm is GitHub's issue form schema, as far as jetbake's form uses
// it; decoding refuses any other key.
type issueForm struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Title       string   `yaml:"title"`
	Labels      []string `yaml:"labels"`
	Body        []struct {
		Type       string `yaml:"type"`
		ID         string `yaml:"id"`
		Attributes struct {
			Label       string   `yaml:"label"`
			Description string   `yaml:"description"`
			Placeholder string   `yaml:"placeholder"`
			Value       string   `yaml:"value"`
			Render      string   `yaml:"render"`
			Options     []string `yaml:"options"`
		} `yaml:"attributes"`
		Validations struct {
			Required bool `yaml:"required"`
		} `yaml:"validations"`
	} `yaml:"body"`
}

// TestGateIssueForm checks the form's shape as GitHub's issue form syntax
// asks: a name and description, known field types, unique ids of the
// allowed characters, a label on every field, a markdown block with its
// value; and that it asks, required, for the evidence report.
func TestGateIssueForm(t *testing.T) {
	form := readIssueForm(t, initGate(t))
	report := form.Body[1]
	require.Equal(t, "evidence-report", report.ID)
	require.Equal(t, "textarea", report.Type)
	require.True(t, report.Validations.Required)
	require.Contains(t, report.Attributes.Description, "jetbake evidence report evidence.json --format markdown")
	require.Contains(t, form.Body[0].Attributes.Value, "--entrypoint /usr/local/bin/jetbake-probe IMAGE@sha256:... --smoke --kernel --serve /model")
}

// readIssueForm reads the form init --gate wrote in repo and checks its
// shape as GitHub's issue form syntax asks.
func readIssueForm(t *testing.T, repo string) issueForm {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, cli.GateIssueForm))
	require.NoError(t, err)
	var form issueForm
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&form))
	require.NotEmpty(t, form.Name)
	require.NotEmpty(t, form.Description)
	ids := map[string]bool{}
	fields := 0
	idRE := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	for i, item := range form.Body {
		require.Contains(t, []string{"markdown", "textarea", "input", "dropdown", "checkboxes"}, item.Type, "body[%d]", i)
		if item.Type == "markdown" {
			require.NotEmpty(t, item.Attributes.Value, "body[%d]", i)
			require.Empty(t, item.ID, "a markdown block has no id")
			continue
		}
		fields++
		require.Regexp(t, idRE, item.ID, "body[%d]", i)
		require.False(t, ids[item.ID], "body[%d]: id %s repeats", i, item.ID)
		ids[item.ID] = true
		require.NotEmpty(t, item.Attributes.Label, "body[%d]", i)
		if item.Type == "dropdown" {
			require.NotEmpty(t, item.Attributes.Options, "body[%d]: a dropdown needs options", i)
		}
	}
	require.Positive(t, fields, "a form needs a field besides markdown")
	return form
}

// TestGateWorkflowApp: for an app's matrix (init --app pytorch), the gate
// passes actionlint, asks for no model, and runs the probe as an app's
// evidence needs it: --smoke --kernel, the app check running by itself in
// an app image, and no --serve, which would start a router the image has not.
func TestGateWorkflowApp(t *testing.T) {
	repo := initGateWith(t, "--app", cli.AppPyTorch, "--repository", "ghcr.io/acme/obliteratus")
	data, err := os.ReadFile(filepath.Join(repo, cli.GateWorkflow))
	require.NoError(t, err)
	errs, err := Lint(repo, cli.GateWorkflow, data)
	require.NoError(t, err)
	require.Empty(t, errs, Messages(errs))

	var w gateWorkflow
	require.NoError(t, yaml.Unmarshal(data, &w))
	inputs := w.On["workflow_dispatch"]["inputs"]
	require.Equal(t, "ghcr.io/acme/obliteratus", inputs["image"]["default"])
	require.NotContains(t, inputs, "model", "an app's gate serves no model")
	gate := w.Jobs["gate"]
	require.Equal(t, "ci/matrix.json", gate.Env["MATRIX"])
	var probe []string
	for _, s := range gate.Steps {
		if strings.Contains(s.Run, "jetbake-probe") {
			probe = append(probe, s.Name, s.Run)
			require.NotContains(t, s.Env, "MODEL")
		}
	}
	require.Len(t, probe, 2, "one probe step")
	require.Equal(t, "Probe with the CUDA kernel and app checks", probe[0])
	require.Contains(t, probe[1], "--entrypoint /usr/local/bin/jetbake-probe \"$REF\" \\\n  --smoke --kernel --out /out/evidence.json")
	require.Contains(t, probe[1], evidenceProbeFlags(t))
	for _, router := range []string{"--serve", "/model", "serving", "embedding", "router"} {
		require.NotContains(t, string(data), router)
	}
	require.Contains(t, string(data), "app check (torch finds CUDA and the Jetson's GPU")
}

// evidenceProbeFlags are the flags of evidence.AppProbeCommand, the run
// every fix sentence names for an app.
func evidenceProbeFlags(t *testing.T) string {
	t.Helper()
	flags := strings.TrimPrefix(evidence.AppProbeCommand, "jetbake-probe ")
	require.NotEqual(t, evidence.AppProbeCommand, flags)
	return strings.Replace(flags, "evidence.json", "/out/evidence.json", 1)
}

// TestGateIssueFormApp: an app's form shows the probe run without a model
// and asks, required, for the app check's status besides the report.
func TestGateIssueFormApp(t *testing.T) {
	form := readIssueForm(t, initGateWith(t, "--app", cli.AppPyTorch))
	require.Equal(t, "evidence-report", form.Body[1].ID)
	require.True(t, form.Body[1].Validations.Required)
	intro := form.Body[0].Attributes.Value
	require.Contains(t, intro, "--entrypoint /usr/local/bin/jetbake-probe IMAGE@sha256:... "+evidenceProbeFlags(t))
	require.NotContains(t, intro, "--serve")
	require.Contains(t, intro, "app check")
	var app bool
	for _, item := range form.Body {
		require.NotEqual(t, "model", item.ID, "an app serves no model")
		if item.ID == "app-check" {
			app = true
			require.Equal(t, "dropdown", item.Type)
			require.Equal(t, []string{"passed", "failed", "skipped"}, item.Attributes.Options)
			require.True(t, item.Validations.Required)
		}
	}
	require.True(t, app, "the form asks for the app check")
}
