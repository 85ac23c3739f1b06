package tei

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/cudaspec"
)

type fakeDriver struct{ init, major, minor, rc int }

func (d fakeDriver) Init() int                          { return d.init }
func (d fakeDriver) ComputeCapability() (int, int, int) { return d.major, d.minor, d.rc }

func runRouter(f BuildFacts, d Driver, cpu []string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	env := map[string]string{"PORT": "80"}
	code := RunRouter(f, RouterEnv{Args: args, Getenv: func(k string) string { return env[k] }, CPU: cpu, Driver: d, Stdout: &out, Stderr: &errOut})
	return code, out.String(), errOut.String()
}

func TestRunRouter(t *testing.T) {
	patched := Table{{Runtime: Range{Lo: 87, Hi: 87}, Compile: Range{Lo: 87, Hi: 87}, Result: true}, {Runtime: Range{Any: true}, Compile: Range{Any: true}}}
	f := BuildFacts{Package: "text-embeddings-router", Version: "1.9.3", CUDA: true, ComputeCap: 87, Table: patched,
		Features: []string{"candle", "candle-cuda"}, Linking: LinkStatic, TargetCPU: "generic", CPUFeatures: []string{"asimd", "fp"}}
	orin := fakeDriver{major: 8, minor: 7}
	generic := []string{"asimd", "fp"}

	code, out, _ := runRouter(f, orin, generic, "--json-output")
	require.Equal(t, 0, code)
	require.Contains(t, out, "router built for sm_87 (SM 87), compute cap: runtime 87 accepted by compile time 87\n")
	require.Contains(t, out, "listening on port 80\nargs: --json-output\n")

	code, out, _ = runRouter(f, nil, generic, "--version")
	require.Equal(t, 0, code, "--version never asks the driver (nil here)")
	require.Equal(t, "text-embeddings-router 1.9.3\n", out)

	unpatched := f
	unpatched.Table = Table{{Runtime: Range{Lo: 80, Hi: 89}, Compile: Range{Lo: 80, Hi: 80}, Result: true}}
	code, _, errOut := runRouter(unpatched, orin, generic)
	require.Equal(t, 1, code)
	require.Equal(t, "Error: Could not create backend\n\nCaused by:\n    Could not start backend: Runtime compute cap 87 is not compatible with compile time compute cap 87\n", errOut)

	code, out, _ = runRouter(f, fakeDriver{init: 100}, generic)
	require.Equal(t, 0, code, "TEI carries on on the CPU")
	require.Contains(t, out, "Could not find a compatible CUDA device on host: CUDA is not available")
	require.Contains(t, out, "DriverError(CUDA_ERROR_NO_DEVICE, \"no CUDA-capable device is detected\")")
	require.NotContains(t, out, "compute cap: runtime")

	native := f
	native.CPUFeatures = []string{"asimd", "fp", "sve"}
	code, out, _ = runRouter(native, orin, generic, "--version")
	require.Equal(t, ExitIllegalInstruction, code, "code tuned for SVE dies on a CPU without, --version too")
	require.Empty(t, out)
}

// The stand-in router names the driver's errors with the names
// jetbake-cudaprobe uses (cudaspec), which are the driver's own: no name
// for 35, which is the CUDA runtime's cudaErrorInsufficientDriver, not a
// CUresult (issue 51 item 11).
func TestDriverErrorNames(t *testing.T) {
	for code := range cuErrorStrings {
		require.NotEmpty(t, cudaspec.DriverErrorName(int32(code)), "CUresult %d has a text but no driver name", code)
		require.Equal(t, cudaspec.DriverErrorName(int32(code)), cuErrorName(code))
	}
	tests := []struct {
		rc   int
		want string
	}{
		{3, `DriverError(CUDA_ERROR_NOT_INITIALIZED, "initialization error")`},
		{34, `DriverError(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library")`},
		{46, `DriverError(CUDA_ERROR_DEVICE_UNAVAILABLE, "unknown error")`},
		{35, `DriverError(CUresult(35), "unknown error")`},
		{12345, `DriverError(CUresult(12345), "unknown error")`},
	}
	for _, tt := range tests {
		_, out, _ := runRouter(BuildFacts{Package: "text-embeddings-router", CUDA: true, ComputeCap: 87}, fakeDriver{init: tt.rc}, nil)
		require.Contains(t, out, tt.want, "rc %d", tt.rc)
		require.NotContains(t, out, "INSUFFICIENT_DRIVER")
	}
}
