package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// runBinary runs the built entrypoint with args and env and returns its
// exit status, stdout, stderr and PID.
func runBinary(t *testing.T, args, env []string) (int, string, string, int) {
	t.Helper()
	b := eptest.Build(t)
	cmd := exec.Command(b.Entrypoint, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, stdout.String(), stderr.String(), cmd.Process.Pid
}

// TestEndToEndExec runs the real binary, which execs the stand-in router:
// same PID, same arguments, same environment.
func TestEndToEndExec(t *testing.T) {
	root := eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6")
	code, stdout, stderr, pid := runBinary(t, []string{"--port", "8080", "--explain"}, eptest.BaseEnv(root))
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.Equal(t, "router for sm_87 pid "+strconv.Itoa(pid)+": --port 8080 --explain\n"+
		"JETBAKE_TEST_VAR=kept\nLD_LIBRARY_PATH=\n", stdout)
}

// TestEndToEndProbe runs the real binary with the probe next to it (no
// JETBAKE_CUDAPROBE) on the fake driver of a Thor that reports 10.1 and
// whose driver is older than the image's CUDA, with no soc_id, so that the
// driver is asked in full.
func TestEndToEndProbe(t *testing.T) {
	root := eptest.NewSysroot(t, "thor-jp7", "jetpack7.2")
	require.NoError(t, os.Remove(filepath.Join(root, host.SocIDPath)))
	eptest.InstallLibcuda(t, root, "/usr/lib/aarch64-linux-gnu")
	eptest.WriteFile(t, root, "/usr/local/cuda/compat/libcuda.so.1", "forward-compatibility driver", 0o644)
	env := eptest.BaseEnv(root, "JETBAKE_CUDAPROBE=", "JETBAKE_SKIP_L4T_CHECK=1",
		"FAKE_CUDA_MAJOR=10", "FAKE_CUDA_MINOR=1", "FAKE_CUDA_DRIVER_VERSION=13000")
	code, stdout, stderr, pid := runBinary(t, []string{"serve"}, env)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "router for sm_110 pid "+strconv.Itoa(pid)+": serve\n"+
		"JETBAKE_TEST_VAR=kept\nLD_LIBRARY_PATH=\n", stdout, "the generic compat folder is not Thor's")

	code, stdout, stderr, _ = runBinary(t, []string{"--explain"}, env)
	require.Equal(t, 0, code, stderr)
	var e explainOutput
	require.NoError(t, json.Unmarshal([]byte(stdout), &e))
	require.Equal(t, "cuda-driver", e.DetectedBy)
	require.Equal(t, detect.PathFull, e.Path)
	require.Equal(t, "10.1", e.ComputeCap)
	require.Equal(t, "13.0", e.DriverCUDA)
	require.Equal(t, "/usr/lib/aarch64-linux-gnu/libcuda.so.1: driver for CUDA 13.0", e.Sources[1].Detail)
	require.Equal(t, []detect.Candidate{
		{SM: "8.7", Path: "/usr/local/bin/router-87", Runs: false,
			Reason: "sm_87 code does not run on Jetson Thor, SM 10.1: Tegra GPUs run only code built for their own SM (binary compatibility across minor versions is desktop-only)"},
		{SM: "11.0", Path: "/usr/local/bin/router-110", Runs: true,
			Reason: "sm_110 code runs on SM 10.1: Thor reports 10.1 or 11.0 depending on its driver, and both are the same GPU"},
	}, e.Candidates)
}

// TestEndToEndFailure checks the failure paragraph of the real binary: one
// line on stderr, exit 1, no stack trace.
func TestEndToEndFailure(t *testing.T) {
	root := eptest.NewSysroot(t, "no-runtime", "jetpack6")
	code, stdout, stderr, _ := runBinary(t, []string{"--port", "80"}, eptest.BaseEnv(root))
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, 1, bytes.Count([]byte(stderr), []byte("\n")))
	require.Regexp(t, `^jetbake-entrypoint: no NVIDIA GPU is visible in this container: it was probably started without --runtime nvidia `, stderr)
}
