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

// TestGatePipefail: the probe step and the evidence add step, which pipe
// their command into tee, fail when the command fails, run as GitHub runs a step that names no
// shell (bash -e {0}, without pipefail), for a router's gate and an app's:
// a probe that fails fails its own step, not only the steps after it.
func TestGatePipefail(t *testing.T) {
	for _, args := range [][]string{
		{"--router", cli.RouterTEI, "--repository", "ghcr.io/acme/embedder"},
		{"--app", cli.AppPyTorch, "--repository", "ghcr.io/acme/obliteratus"},
	} {
		repo := initGateWith(t, args...)
		data, err := os.ReadFile(filepath.Join(repo, cli.GateWorkflow))
		require.NoError(t, err)
		var w gateWorkflow
		require.NoError(t, yaml.Unmarshal(data, &w))

		// docker and jetbake that print a line and fail, as a failed probe does.
		bin := t.TempDir()
		for _, name := range []string{"docker", "jetbake"} {
			script := "#!/bin/sh\n[ \"$1\" = pull ] && exit 0\necho \"$0 $1: failed\"; exit 3\n"
			require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755))
		}
		piped := 0
		for _, s := range w.Jobs["gate"].Steps {
			if !strings.Contains(s.Run, "| tee") || !strings.Contains(s.Run, "jetbake-probe") && !strings.Contains(s.Run, "evidence add") {
				continue
			}
			piped++
			cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-c", s.Run)
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "GATE_DIR="+t.TempDir(), "MATRIX=ci/matrix.json",
				"REF=ghcr.io/acme/x@sha256:0", "DIGEST=sha256:0", "MODEL=/m")
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "%s %s: the step must fail: %s", args[1], s.Name, out)
			require.Contains(t, string(out), ": failed")
		}
		require.Equal(t, 2, piped, "%s: the probe and evidence add steps", args[1])
	}
}
