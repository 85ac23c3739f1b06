package ci

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/jetbake/jetbake/builder/cli"
)

// TestGateReportsStoredEvidence runs the gate's report step: it writes into
// the step summary the evidence as `jetbake evidence add` stored it, which
// carries the build's audit verdict per SM, and the probe's own file only
// when nothing was stored.
func TestGateReportsStoredEvidence(t *testing.T) {
	repo := initGate(t)
	data, err := os.ReadFile(filepath.Join(repo, cli.GateWorkflow))
	require.NoError(t, err)
	var w gateWorkflow
	require.NoError(t, yaml.Unmarshal(data, &w))
	var script string
	for _, s := range w.Jobs["gate"].Steps {
		if strings.HasPrefix(s.Name, "jetbake evidence report") {
			script = s.Run
		}
	}
	require.NotEmpty(t, script)

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "jetbake"), []byte("#!/bin/sh\necho \"jetbake $*\"\n"), 0o755))
	gate := filepath.Join(dir, "gate")
	require.NoError(t, os.Mkdir(gate, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gate, "evidence.json"), []byte("{}"), 0o644))
	stored := filepath.Join(dir, "evidence", "jetpack6.2", "c2efadaaded6-jetson-agx-orin-2026-11-20.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(stored), 0o755))
	require.NoError(t, os.WriteFile(stored, []byte("{}"), 0o644))
	run := func() string {
		summary := filepath.Join(dir, "summary.md")
		_ = os.Remove(summary)
		cmd := exec.Command("bash", "-eo", "pipefail", "-c", script)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "GATE_DIR="+gate, "GITHUB_STEP_SUMMARY="+summary)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		got, err := os.ReadFile(summary)
		require.NoError(t, err)
		return string(got)
	}
	require.NoError(t, os.WriteFile(filepath.Join(gate, "evidence-add.log"),
		[]byte(gate+"/evidence.json: stored as "+stored+"\n"), 0o644))
	require.Equal(t, "jetbake evidence report "+stored+" --format markdown\n", run())
	require.NoError(t, os.WriteFile(filepath.Join(gate, "evidence-add.log"),
		[]byte(gate+"/evidence.json: refused: the digest is not one jetbake built\n"), 0o644))
	require.Equal(t, "jetbake evidence report "+gate+"/evidence.json --format markdown\n", run())
}
