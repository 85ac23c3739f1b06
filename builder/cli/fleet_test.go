package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// shippedReport writes the report 'jetbake build --push --metadata-file'
// leaves for the shipped matrix: every release pushed with a digest of its
// own and an audit that covers its targets.
func shippedReport(t *testing.T) string {
	t.Helper()
	m, err := matrix.Load("../../matrix.json")
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	rep := &imagebuild.Report{}
	for i, r := range p.Releases {
		var audit []string
		for _, tg := range r.Targets {
			audit = append(audit, tg.SM+"=runs")
		}
		r.Annotations[matrix.KeyAudit] = strings.Join(audit, ",")
		rep.Releases = append(rep.Releases, imagebuild.ReleaseReport{Name: r.Name, Outcome: imagebuild.Succeeded,
			Digest: "sha256:" + strings.Repeat(fmt.Sprintf("%x", i+10), 64), Repository: m.Image.Repository, Annotations: r.Annotations})
	}
	path := filepath.Join(t.TempDir(), "build.json")
	require.NoError(t, rep.WriteFile(path))
	return path
}

// The serving flags reach the YAML a user applies; the test logs it for
// docs/fleets.md.
func TestFleetServingFlags(t *testing.T) {
	report := shippedReport(t)
	r := run(t, "fleet", "-f", "../../matrix.json", "--metadata-file", report, "--namespace", "edge",
		"--arg=--model-id", "--arg=BAAI/bge-small-en-v1.5", "--cache-volume", "hostPath:/var/lib/jetbake/models",
		"--cpu", "2", "--memory", "2Gi", "--memory-limit", "6Gi")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "warning", "--model-id given")
	t.Logf("jetbake fleet's YAML for the shipped matrix:\n%s", r.stdout)
	for _, want := range []string{"---\n# namespace.yaml\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: edge\n",
		"kind: Service\n", "containerPort: 80\n", "path: /health\n", "- --json-output\n        - --model-id\n        - BAAI/bge-small-en-v1.5\n",
		"mountPath: /data\n", "type: DirectoryOrCreate\n", "memory: 6Gi\n", "namespace: edge\n"} {
		require.Contains(t, r.stdout, want)
	}
	for _, bad := range []string{"status:", "{}", "null"} {
		require.NotContains(t, r.stdout, bad)
	}

	out := filepath.Join(t.TempDir(), "deploy")
	r = run(t, "fleet", "-f", "../../matrix.json", "--metadata-file", report, "--health-path", "", "--out", out)
	require.Equal(t, 0, r.code, r.stderr)
	svc, err := os.ReadFile(filepath.Join(out, "service.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(svc), "app.kubernetes.io/name: router")
	ds, err := os.ReadFile(filepath.Join(out, "router-jetpack6-2.yaml"))
	require.NoError(t, err)
	require.NotContains(t, string(ds), "Probe", "--health-path \"\" writes no probe")
	require.NotContains(t, string(ds), "args:", "no --arg keeps the image's CMD")
	require.Contains(t, r.stderr, "jetbake: warning: TEI's router needs a model and exits at start without one: give --arg=--model-id --arg=MODEL (e.g. BAAI/bge-small-en-v1.5), or --env MODEL_ID=MODEL\n")

	r = run(t, "fleet", "-f", "../../matrix.json", "--metadata-file", report, "--env", "MODEL_ID=BAAI/bge-small-en-v1.5")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "warning", "a model in the environment")
}

// Each serving flag's bad value is one sentence with the flag, the value
// and the fix, exit status 2.
func TestFleetServingBadInput(t *testing.T) {
	report := shippedReport(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "Bad_Name"}, `--name "Bad_Name" is not a Kubernetes name: it names the Service and the workloads, so it is lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (a DNS-1123 label that a Service also takes); write e.g. --name bad-name`},
		{[]string{"--env", "MODEL_ID"}, `--env "MODEL_ID" has no '=': write NAME=VALUE, e.g. --env MAX_BATCH_TOKENS=8192`},
		{[]string{"--cache-volume", "/var/lib/models"}, `--cache-volume "/var/lib/models" is not KIND:VALUE`},
		{[]string{"--cpu", "two"}, `--cpu "two" is not a positive Kubernetes quantity: write it as 2 or 500m`},
		{[]string{"--health-path", "health"}, `--health-path "health" is not an HTTP route: write it from the root, e.g. /health, or "" for no probe`},
		{[]string{"--namespace", "Edge"}, `--namespace "Edge" is not a Kubernetes namespace name`},
	} {
		r := run(t, append([]string{"fleet", "-f", "../../matrix.json", "--metadata-file", report}, tt.args...)...)
		requireOneSentence(t, r, strings.Join(tt.args, " "))
		require.Contains(t, r.stderr, tt.want)
		require.Empty(t, r.stdout)
	}
}
