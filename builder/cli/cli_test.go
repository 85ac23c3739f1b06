package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/dockerfiles"
)

// result is what one in-process run of jetbake produced.
type result struct {
	code           int
	stdout, stderr string
}

// run runs jetbake in-process with args.
func run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut, WithVersion("1.2.3-test"))
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// matrixCopy writes the shipped matrix, changed by edit, into a fresh folder
// with the Dockerfile it names, and returns the matrix file's path.
func matrixCopy(t *testing.T, edit func(doc map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile("../../matrix.json")
	require.NoError(t, err)
	if edit != nil {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(data, &doc))
		edit(doc)
		data, err = json.MarshalIndent(doc, "", "  ")
		require.NoError(t, err)
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "dockerfiles"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dockerfiles", "Dockerfile-jetson"), dockerfiles.DockerfileJetson(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dockerfiles", dockerfiles.CrossBaseRecipe), dockerfiles.DockerfileCrossBase(), 0o644))
	path := filepath.Join(dir, "matrix.json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// releaseOf returns the generic object of release i of a decoded matrix.
func releaseOf(doc map[string]any, i int) map[string]any {
	return doc["releases"].([]any)[i].(map[string]any)
}

func TestValidateAcceptsShippedMatrix(t *testing.T) {
	path := matrixCopy(t, nil)
	r := run(t, "validate", "--matrix", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, path+": 5 releases, 7 SM targets, 11 tags, on stage runtime-base: ok\n", r.stdout)
	require.Empty(t, r.stderr)

	// The flag is persistent: it may come before the command too.
	r = run(t, "--matrix", path, "validate")
	require.Equal(t, 0, r.code, r.stderr)
}

func TestValidateRejectsBrokenMatrix(t *testing.T) {
	path := matrixCopy(t, func(doc map[string]any) {
		releaseOf(doc, 3)["targets"] = []any{"8.7"}
		releaseOf(doc, 0)["tier"] = "stable"
		doc["router"].(map[string]any)["output"] = "router"
	})
	r := run(t, "validate", "--matrix", path)
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stdout)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	require.Len(t, lines, 3, r.stderr)
	// Each line names the file, line and column, then the JSON path.
	require.Regexp(t, regexp.QuoteMeta(path)+`:\d+:\d+: `+regexp.QuoteMeta(`releases[3].targets[0]: "8.7": no JetPack 7.0 module has SM 8.7`), r.stderr)
	require.Regexp(t, regexp.QuoteMeta(path)+`:\d+:\d+: `+regexp.QuoteMeta(`releases[0].tier: "stable": unknown tier; fix: use one of`), r.stderr)
	require.Regexp(t, regexp.QuoteMeta(path)+`:\d+:\d+: `+regexp.QuoteMeta(`router.output: "router": is not an absolute path`), r.stderr)
}

func TestValidateJSON(t *testing.T) {
	path := matrixCopy(t, func(doc map[string]any) { releaseOf(doc, 1)["l4t"] = "35.4.1" })
	r := run(t, "validate", "--matrix", path, "--format", "json")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stderr, "the JSON report is the only output")
	var report validateReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
	require.False(t, report.OK)
	require.Len(t, report.Errors, 1)
	require.Equal(t, "releases[1].l4t", report.Errors[0].Path)
	require.Equal(t, `"35.4.1"`, report.Errors[0].Value)
	require.NotEmpty(t, report.Errors[0].Fix)

	r = run(t, "validate", "--matrix", matrixCopy(t, nil), "--format", "json")
	require.Equal(t, 0, r.code)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
	require.True(t, report.OK)
	require.Equal(t, "5 releases, 7 SM targets, 11 tags, on stage runtime-base", report.Summary)
	require.Empty(t, report.Errors)
}

func TestValidateMissingFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.json")
	r := run(t, "validate", "--matrix", missing)
	require.Equal(t, ExitUsage, r.code)
	require.Equal(t, "matrix file "+missing+" does not exist: run 'jetbake init' to write one, or name yours with -f/--file\n", r.stderr)
	require.Empty(t, r.stdout)
}

func TestPlanText(t *testing.T) {
	r := run(t, "plan", "--matrix", matrixCopy(t, nil), "--release", "jetpack7.2")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		"router text-embeddings-router 1.9.3",
		"release jetpack7.2: JetPack 7.2, L4T 39.2.0, CUDA 13.2, Ubuntu 24.04, tier evaluate-later",
		"platform:     linux/arm64",
		"build base:   nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04",
		"runtime base: nvcr.io/nvidia/cuda:13.2.0-runtime-ubuntu24.04",
		"runtime:    stage runtime-base of the Dockerfile, on each release's runtime base",
		"commit:     06670157fb6c1523482219bdb2d1660277d38088 (GIT_SHA)",
		"runtime args: CARGO_FEATURES=candle-cuda\n                CUDA_LINKING=static-linking\n",
		"8.7  sm_87  CUDA_COMPUTE_CAP=87  /usr/local/bin/router-87",
		"11.0  sm_110  CUDA_COMPUTE_CAP=110  /usr/local/bin/router-110",
		"ghcr.io/jetbake/text-embeddings-router:1.9.3-jetpack7.2",
		"ghcr.io/jetbake/text-embeddings-router:jetpack7",
		"io.jetbake.sm-targets=8.7,11.0",
		"labels:       same as annotations",
	} {
		require.Contains(t, r.stdout, want)
	}
	require.NotContains(t, r.stdout, "jetpack6.1")
}

func TestPlanJSON(t *testing.T) {
	r := run(t, "plan", "--matrix", matrixCopy(t, nil), "--format", "json", "--release", "jetpack6.2,jetpack5.1",
		"--repository", "127.0.0.1:5000/jetbake/tei")
	require.Equal(t, 0, r.code, r.stderr)
	var p plan.Plan
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &p))
	require.Len(t, p.Releases, 2)
	require.Equal(t, "jetpack5.1", p.Releases[0].Name)
	require.Equal(t, "127.0.0.1:5000/jetbake/tei:jetpack5.1", p.Releases[0].Tags[2], "the floating tag of the R35 release")
}

func TestPlanUnknownRelease(t *testing.T) {
	r := run(t, "plan", "--matrix", matrixCopy(t, nil), "--release", "jetpack9")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `unknown release "jetpack9": the matrix has jetpack5.1, jetpack6.1, jetpack6.2, jetpack7.0, jetpack7.2`)
}

func TestCompatExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"8.7", "8.0"}, 1, []string{"GPU: Jetson Orin, SM 8.7", "8.0   does not run", "Tegra GPUs run only code built for their own SM", "picks: nothing: no binary for Jetson Orin (SM 8.7)"}},
		{[]string{"8.6", "8.0"}, 0, []string{"GPU: GPU with SM 8.6", "8.0   runs", "picks: 8.0 (router-80)"}},
		{[]string{"10.1", "11.0"}, 0, []string{"GPU: Jetson Thor, SM 10.1", "picks: 11.0 (router-110)"}},
		{[]string{"8.7", "7.2", "8.7", "11.0"}, 0, []string{"picks: 8.7 (router-87)"}},
		{[]string{"sm_87", "87"}, 0, []string{"picks: 8.7"}},
		{[]string{"11.0", "10.1"}, 0, []string{"picks: 10.1 (router-101)"}},
	}
	for _, tc := range cases {
		r := run(t, append([]string{"compat"}, tc.args...)...)
		require.Equal(t, tc.code, r.code, "%v: %s%s", tc.args, r.stdout, r.stderr)
		for _, w := range tc.want {
			require.Contains(t, r.stdout, w, tc.args)
		}
	}
}

func TestCompatBadInput(t *testing.T) {
	r := run(t, "compat", "orin")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `RUNTIME: compute capability "orin" is not valid`)
	r = run(t, "compat", "8.7", "8.7", "sm87x")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `COMPILED: compute capability "sm87x" is not valid`)
	r = run(t, "compat")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "needs the GPU's compute capability")
	r = run(t, "compat", "8.7", "8.7", "--format", "yaml")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `--format "yaml" is not known`)
}

func TestCompatMatrix(t *testing.T) {
	path := matrixCopy(t, nil)
	r := run(t, "compat", "8.7", "--matrix", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "jetpack6.2 (JetPack 6.2): picks 8.7 (router-87)")
	require.Contains(t, r.stdout, "image: ghcr.io/jetbake/text-embeddings-router:1.9.3-jetpack6.2")
	require.Contains(t, r.stdout, "jetpack7.0 (JetPack 7.0): no binary: no binary for Jetson Orin (SM 8.7) in this image: it holds sm_110")

	r = run(t, "compat", "10.1", "--matrix", path, "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var report compatReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
	picks := map[string]string{}
	for _, rel := range report.Releases {
		picks[rel.Name] = rel.Pick
	}
	require.Equal(t, map[string]string{"jetpack5.1": "", "jetpack6.1": "", "jetpack6.2": "", "jetpack7.0": "11.0", "jetpack7.2": "11.0"}, picks)

	r = run(t, "compat", "7.5", "--matrix", path)
	require.Equal(t, 1, r.code, "no release has a binary for a Turing GPU")
}

func TestCompatJSON(t *testing.T) {
	r := run(t, "compat", "8.7", "8.0", "8.7", "--format", "json")
	require.Equal(t, 0, r.code)
	var report compatReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &report))
	require.Equal(t, "8.7", report.GPU)
	require.Equal(t, "8.7", report.Pick)
	require.Equal(t, "router-87", report.Binary)
	require.Len(t, report.Compiled, 2)
	require.False(t, report.Compiled[0].Runs)
	require.True(t, report.Compiled[1].Runs)
}

func TestRootCommand(t *testing.T) {
	r := run(t, "--version")
	require.Equal(t, 0, r.code)
	require.Equal(t, "jetbake 1.2.3-test\n", r.stdout)
	v := run(t, "version")
	require.Equal(t, 0, v.code)
	require.Equal(t, r.stdout, v.stdout, "version and --version print the same line")

	r = run(t, "frobnicate")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `unknown command "frobnicate"`)

	r = run(t, "validate", "--colour")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "unknown flag: --colour")

	r = run(t, "validate", "extra")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "takes no arguments")

	r = run(t)
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "Available Commands")
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range []string{"validate", "plan", "compat"} {
		r := run(t, cmd, "--help")
		require.Equal(t, 0, r.code, cmd)
		require.Contains(t, r.stdout, "Examples:", cmd)
		require.Contains(t, r.stdout, "-f, --file string", cmd)
	}
}

func TestWithCommands(t *testing.T) {
	called := false
	extra := func() *cobra.Command {
		cmd := &cobra.Command{Use: "frob", RunE: func(cmd *cobra.Command, _ []string) error {
			called = true
			require.Equal(t, "m.json", MatrixPath(cmd))
			return &ExitError{Code: 3}
		}}
		AddMatrixFlags(cmd, "")
		return cmd
	}
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"frob", "--matrix", "m.json"}, &out, &errOut, WithCommands(extra))
	require.True(t, called)
	require.Equal(t, 3, code)
	require.Empty(t, errOut.String(), "an ExitError without Err prints nothing")
	root := NewRootCommand(WithCommands(extra))
	names := []string{}
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	require.Subset(t, names, []string{"validate", "plan", "compat", "build", "lock", "frob"})
}

func TestExitCode(t *testing.T) {
	require.Equal(t, 0, ExitCode(nil))
	require.Equal(t, 1, ExitCode(os.ErrNotExist))
	require.Equal(t, 2, ExitCode(usageErrorf("bad")))
}
