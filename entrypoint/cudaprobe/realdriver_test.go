package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/cudaspec"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// TestMain removes the binaries eptest built after the tests.
func TestMain(m *testing.M) { eptest.Main(m) }

// realLib is NVIDIA's libcuda.so.1 in a RealDriverRoot.
const realLib = eptest.RealDriverLib + "/libcuda.so.1"

// TestRealDriver runs the linux/arm64 probe, as released, on NVIDIA's own
// libcuda.so.1 (driver 535, arm64, from Debian's non-free component)
// through QEMU, in a Jetson container's root without GPU device nodes: the
// driver's real symbols and calling convention, its version (CUDA 12.2)
// without cuInit, and cuInit's real error, named by the driver. The kernel
// check resolves every call it makes (cuDevicePrimaryCtxRelease_v2,
// cuMemAlloc_v2, cuMemcpyHtoD_v2, cuLaunchKernel, ...) before cuInit, so a
// step "cuInit" rather than "dlsym" shows NVIDIA's library exports each
// under the name the probe asks for.
func TestRealDriver(t *testing.T) {
	root := eptest.RealDriverRoot(t, "agx-orin-container", eptest.RealOptions{NoNodes: true})
	noJIT := eptest.RealDriverRoot(t, "agx-orin-container", eptest.RealOptions{NoNodes: true})
	jit, err := filepath.Glob(filepath.Join(noJIT, eptest.RealDriverLib, "libnvidia-ptxjitcompiler.so*"))
	require.NoError(t, err)
	require.Len(t, jit, 2, "the PTX JIT compiler and its link")
	for _, f := range jit {
		require.NoError(t, os.Remove(f))
	}
	noDevice := `{"pass":false,"kernel":"jetbake_axpb","ptx_target":"sm_50","elements":4096,"step":"cuInit","error":"CUDA_ERROR_NO_DEVICE","code":100}`
	tests := []struct {
		name, root             string
		args                   []string
		wantCode               int
		wantStdout, wantStderr string
	}{
		{name: "driver version without cuInit", root: root, args: []string{"--driver-version", realLib},
			wantStdout: `{"driver_version":12020}` + "\n"},
		{name: "the device query meets cuInit's error", root: root, args: []string{realLib}, wantCode: 1,
			wantStdout: `{"step":"cuInit","error":"CUDA_ERROR_NO_DEVICE","code":100}` + "\n",
			wantStderr: "cuInit failed: CUDA_ERROR_NO_DEVICE (100)\n"},
		{name: "the kernel check stops at cuInit", root: root, args: []string{"--kernel", realLib}, wantCode: 1,
			wantStdout: noDevice, wantStderr: "cuInit failed: CUDA_ERROR_NO_DEVICE (100)\n"},
		{name: "without the PTX JIT compiler the driver loads and says the same", root: noJIT, args: []string{"--kernel", realLib},
			wantCode: 1, wantStdout: noDevice, wantStderr: "cuInit failed: CUDA_ERROR_NO_DEVICE (100)\n"},
		{name: "the version too", root: noJIT, args: []string{"--driver-version", realLib},
			wantStdout: `{"driver_version":12020}` + "\n"},
		{name: "Debian's link libcuda.so, as a path given by hand", root: root,
			args: []string{"--driver-version", eptest.RealDriverLib + "/libcuda.so"}, wantStdout: `{"driver_version":12020}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := eptest.RunChroot(t, tt.root, nil, append([]string{"/usr/local/bin/jetbake-cudaprobe"}, tt.args...)...)
			require.Equal(t, tt.wantStderr, stderr)
			require.Equal(t, tt.wantCode, code)
			if tt.args[0] != "--kernel" {
				require.Equal(t, tt.wantStdout, stdout)
				return
			}
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
			require.GreaterOrEqual(t, got["total_ms"], 0.0)
			for _, k := range []string{"jit_ms", "kernel_ms", "total_ms"} {
				delete(got, k)
			}
			line, err := json.Marshal(got)
			require.NoError(t, err)
			require.JSONEq(t, tt.wantStdout, string(line))
		})
	}
}

// TestRealDriverErrorNames holds the probe's table of CUresult names (used
// when a driver lacks cuGetErrorName) and the CUDA errors the entrypoint's
// evidence names against what NVIDIA's driver itself says, through its
// cuGetErrorName: every name must be NVIDIA's for that code.
func TestRealDriverErrorNames(t *testing.T) {
	root := eptest.RealDriverRoot(t, "agx-orin-container", eptest.RealOptions{NoNodes: true})
	helper := filepath.Join(root, "usr", "local", "bin", "errnames")
	out, err := exec.Command("aarch64-linux-gnu-gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", helper,
		"testdata/errnames.c", "-ldl").CombinedOutput()
	require.NoError(t, err, "Debian's aarch64 cross compiler (run 'make deps' as root): %s", out)
	code, stdout, stderr := eptest.RunChroot(t, root, nil, "/usr/local/bin/errnames", realLib)
	require.Equal(t, 0, code, stderr)
	nvidia := map[int32]string{}
	byName := map[string]bool{}
	for line := range strings.Lines(stdout) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		require.Len(t, f, 3, line)
		n, err := strconv.Atoi(f[0])
		require.NoError(t, err)
		nvidia[int32(n)], byName[f[1]] = f[1], true
	}
	require.Equal(t, "CUDA_ERROR_NO_DEVICE", nvidia[100])
	require.Greater(t, len(nvidia), len(cudaspec.DriverErrorNames()), "the driver names more errors than the probe's table")
	for code, name := range cudaspec.DriverErrorNames() {
		require.Equal(t, nvidia[code], name, "CUresult %d", code)
	}
	for name := range evidencespec.KernelHints() {
		require.True(t, byName[name], "%s is not one of NVIDIA's CUresult names", name)
	}
}
