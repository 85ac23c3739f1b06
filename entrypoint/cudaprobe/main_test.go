package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// libcudaSource is the stand-in driver, compiled here with gcc as
// builder/internal/standin compiles it.
const libcudaSource = "../../builder/internal/standin/cuda/libcuda.c"

// binaries are the probe (CGO_ENABLED=0, as released) and builds of the
// stand-in driver for one architecture: the driver, CUDA's stub, and one
// without cuDriverGetVersion.
type binaries struct {
	probe, lib, stub, without string
}

// build compiles the probe for GOARCH arch and the drivers with that
// architecture's C compiler (gcc, or Debian's aarch64-linux-gnu-gcc).
func build(t *testing.T, arch string) binaries {
	t.Helper()
	dir := t.TempDir()
	b := binaries{
		probe:   filepath.Join(dir, "jetbake-cudaprobe"),
		lib:     filepath.Join(dir, "libcuda.so.1"),
		stub:    filepath.Join(dir, "stub", "libcuda.so.1"),
		without: filepath.Join(dir, "without", "libcuda.so.1"),
	}
	cc := map[string]string{"amd64": "gcc", "arm64": "aarch64-linux-gnu-gcc"}[arch]
	_, err := exec.LookPath(cc)
	require.NoError(t, err, "%s is missing: run 'make deps' as root", cc)
	cflags := []string{"-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror"}
	steps := [][]string{{"go", "build", "-o", b.probe, "."}}
	for out, define := range map[string]string{b.lib: "", b.stub: "-DJB_STUB", b.without: "-DOMIT_DRIVER_VERSION"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
		args := append([]string{cc}, cflags...)
		if define != "" {
			args = append(args, define)
		}
		steps = append(steps, append(args, "-o", out, libcudaSource))
	}
	for _, args := range steps {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
	}
	return b
}

// runProbe runs the probe built for arch with args and env: directly on
// amd64, under QEMU with Debian's arm64 glibc as its root on arm64.
func runProbe(t *testing.T, arch, probe string, args, env []string) (code int, stdout, stderr string) {
	t.Helper()
	argv := append([]string{probe}, args...)
	if arch == "arm64" {
		argv = append([]string{"qemu-aarch64-static", "-L", arm64Root(t)}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, out.String(), errOut.String()
}

// arm64Root is Debian's arm64 libc6 unpacked by `make deps`: the dynamic
// loader and libc an aarch64 program needs under QEMU.
func arm64Root(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../bin/deps/glibc-arm64")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "lib", "ld-linux-aarch64.so.1"))
	require.NoError(t, err, "Debian's arm64 glibc is missing: run 'make deps' as root")
	_, err = exec.LookPath("qemu-aarch64-static")
	require.NoError(t, err, "QEMU user emulation is missing: run 'make deps' as root")
	return root
}

func TestProbe(t *testing.T) {
	b := build(t, "amd64")
	lib, libWithout := b.lib, b.without
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
			wantCode: 1, wantStdout: `{"step":"cuInit","error":"CUDA_ERROR_NO_DEVICE","code":100}` + "\n",
			wantStderr: "cuInit failed: CUDA_ERROR_NO_DEVICE (100)\n"},
		{name: "device unavailable, named by the probe", args: []string{lib}, env: []string{"FAKE_CUDA_INIT_RESULT=46"},
			wantCode: 1, wantStdout: `{"step":"cuInit","error":"CUDA_ERROR_DEVICE_UNAVAILABLE","code":46}` + "\n",
			wantStderr: "cuInit failed: CUDA_ERROR_DEVICE_UNAVAILABLE (46)\n"},
		{name: "the CUDA runtime's insufficient driver is no CUresult", args: []string{lib}, env: []string{"FAKE_CUDA_INIT_RESULT=35"},
			wantCode: 1, wantStdout: `{"step":"cuInit","code":35}` + "\n", wantStderr: "cuInit failed: CUDA error (35)\n"},
		{name: "unknown error", args: []string{lib}, env: []string{"FAKE_CUDA_INIT_RESULT=12345"},
			wantCode: 1, wantStdout: `{"step":"cuInit","code":12345}` + "\n", wantStderr: "cuInit failed: CUDA error (12345)\n"},
		{name: "missing function", args: []string{libWithout},
			wantCode: 1, wantStdout: `{"step":"dlsym"}` + "\n", wantStderr: libWithout + " has no cuDriverGetVersion: it is not a CUDA driver\n"},
		{name: "missing library", args: []string{"/nonexistent/libcuda.so.1"},
			wantCode: 1, wantStdout: `{"step":"dlopen"}` + "\n", wantStderr: "dlopen /nonexistent/libcuda.so.1 failed: /nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory\n"},
		{name: "no argument", wantCode: 2, wantStderr: usage + "\n"},
		{name: "kernel without a library", args: []string{"--kernel"}, wantCode: 2, wantStderr: usage + "\n"},
		{name: "driver version only, no cuInit", args: []string{"--driver-version", lib},
			env:        []string{"FAKE_CUDA_INIT_RESULT=100", "FAKE_CUDA_DRIVER_VERSION=13000"},
			wantStdout: `{"driver_version":13000}` + "\n"},
		{name: "driver version of a library without it", args: []string{"--driver-version", libWithout},
			wantCode: 1, wantStdout: `{"step":"dlsym"}` + "\n", wantStderr: libWithout + " has no cuDriverGetVersion: it is not a CUDA driver\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runProbe(t, "amd64", b.probe, tt.args, tt.env)
			require.Equal(t, tt.wantCode, code)
			require.Equal(t, tt.wantStdout, stdout)
			require.Equal(t, tt.wantStderr, stderr)
		})
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"--help"}, &stdout, &stderr))
	require.Contains(t, stdout.String(), usage+"\n\n")
	require.Contains(t, stdout.String(), "--kernel runs a small PTX kernel on GPU 0")
	require.Empty(t, stderr.String())
}
