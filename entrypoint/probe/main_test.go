package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// TestMain removes the binaries eptest built after the tests.
func TestMain(m *testing.M) { eptest.Main(m) }

// TestEndToEndProbe runs the built jetbake-probe as an image holds it,
// with jetbake-cudaprobe next to it (no JETBAKE_CUDAPROBE): the evidence
// on stdout, the verdict on stderr, the exit status of the result.
func TestEndToEndProbe(t *testing.T) {
	b := eptest.Build(t)
	root := orinRoot(t)
	for _, tt := range []struct {
		env  []string
		code int
		pass bool
	}{
		{env: []string{"JETBAKE_IMAGE_DIGEST=" + testDigest}, code: 0, pass: true},
		{env: []string{"JETBAKE_IMAGE_DIGEST=latest"}, code: 1},
	} {
		cmd := exec.Command(b.Probe, "--smoke", "--kernel")
		cmd.Env = eptest.BaseEnv(root, append(tt.env, "JETBAKE_CUDAPROBE=")...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		var ev evidencespec.Evidence
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &ev), stdout.String())
		pass := ev.Result.Pass && ev.Host.Architecture == "arm64"
		if ev.Host.Architecture != "arm64" {
			// Off arm64 only the architecture check fails.
			require.Equal(t, evidencespec.Failed, statuses(&ev)["architecture"])
			tt.code, tt.pass = 1, false
		}
		require.Equal(t, tt.code, code, stderr.String())
		require.Equal(t, tt.pass, pass)
		require.Equal(t, evidencespec.Passed, statuses(&ev)[evidencespec.CheckCUDAKernel], "jetbake-cudaprobe was found next to the probe")
		require.Equal(t, evidencespec.Passed, statuses(&ev)["cuda-driver"])
		require.Regexp(t, `jetbake-probe: (pass|not a pass): .*\n$`, stderr.String())
	}
	require.Equal(t, filepath.Dir(b.Probe), filepath.Dir(b.CUDAProbe))
}
