package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// build compiles the probe (CGO_ENABLED=0, as released) and the fake driver
// from builder/internal/standin/cuda/libcuda.c, the second one without cuDriverGetVersion.
func build(t *testing.T) (probe, lib, libWithout string) {
	t.Helper()
	dir := t.TempDir()
	probe = filepath.Join(dir, "jetbake-cudaprobe")
	lib = filepath.Join(dir, "libcuda.so.1")
	libWithout = filepath.Join(dir, "without", "libcuda.so.1")
	require.NoError(t, os.MkdirAll(filepath.Dir(libWithout), 0o755))
	for _, args := range [][]string{
		{"go", "build", "-o", probe, "."},
		{"gcc", "-shared", "-fPIC", "-o", lib, "../../builder/internal/standin/cuda/libcuda.c"},
		{"gcc", "-shared", "-fPIC", "-DOMIT_DRIVER_VERSION", "-o", libWithout, "../../builder/internal/standin/cuda/libcuda.c"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
	}
	return probe, lib, libWithout
}

func TestProbe(t *testing.T) {
	probe, lib, libWithout := build(t)
	tests := []struct {
		name       string
		args       []string
		env        []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "Orin", args: []string{lib}, env: []string{"FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=12060"},
			wantStdout: `{"major":8,"minor":7,"driver_version":12060}` + "\n"},
		{name: "Thor on an old driver", args: []string{lib}, env: []string{"FAKE_CUDA_MAJOR=10", "FAKE_CUDA_MINOR=1", "FAKE_CUDA_DRIVER_VERSION=12090"},
			wantStdout: `{"major":10,"minor":1,"driver_version":12090}` + "\n"},
		{name: "no device, named by the driver", args: []string{lib}, env: []string{"FAKE_CUDA_INIT_RESULT=100"},
			wantCode: 1, wantStderr: "cuInit failed: CUDA_ERROR_NO_DEVICE (100)\n"},
		{name: "insufficient driver, named by the probe", args: []string{lib}, env: []string{"FAKE_CUDA_INIT_RESULT=35"},
			wantCode: 1, wantStderr: "cuInit failed: CUDA_ERROR_INSUFFICIENT_DRIVER (35)\n"},
		{name: "unknown error", args: []string{lib}, env: []string{"FAKE_CUDA_INIT_RESULT=12345"},
			wantCode: 1, wantStderr: "cuInit failed: CUDA error (12345)\n"},
		{name: "missing function", args: []string{libWithout},
			wantCode: 1, wantStderr: libWithout + " has no cuDriverGetVersion: it is not a CUDA driver\n"},
		{name: "missing library", args: []string{"/nonexistent/libcuda.so.1"},
			wantCode: 1, wantStderr: "dlopen /nonexistent/libcuda.so.1 failed: /nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory\n"},
		{name: "no argument", wantCode: 2, wantStderr: "usage: jetbake-cudaprobe [--driver-version] /path/to/libcuda.so.1\n"},
		{name: "driver version only, no cuInit", args: []string{"--driver-version", lib},
			env:        []string{"FAKE_CUDA_INIT_RESULT=100", "FAKE_CUDA_DRIVER_VERSION=13000"},
			wantStdout: `{"driver_version":13000}` + "\n"},
		{name: "driver version of a library without it", args: []string{"--driver-version", libWithout},
			wantCode: 1, wantStderr: libWithout + " has no cuDriverGetVersion: it is not a CUDA driver\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(probe, tt.args...)
			cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, tt.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tt.wantCode, code)
			require.Equal(t, tt.wantStdout, stdout.String())
			require.Equal(t, tt.wantStderr, stderr.String())
		})
	}
}
