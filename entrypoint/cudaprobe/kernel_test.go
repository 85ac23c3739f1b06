package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// kernelCase is one run of --kernel on a build of the stand-in driver.
type kernelCase struct {
	name string
	// lib picks the build: the driver, CUDA's stub or one without
	// cuDriverGetVersion.
	lib func(b binaries) string
	env []string
	// want is the printed line, its times aside.
	want kernelResult
	// wantStderr is what the probe says, with {lib} for the library's path.
	wantStderr string
}

// passed and failed are the lines of a run on device SM with driver version v.
func passed(sm string, v int) kernelResult {
	return kernelResult{Pass: true, SM: sm, DriverVersion: v, Kernel: kernelName, Target: kernelTarget, Elements: elements}
}

func failed(step, name string, code int) kernelResult {
	r := passed("8.7", 12060)
	r.Pass, r.Step, r.Error, r.Code = false, step, name, code
	return r
}

func wrong(r kernelResult, nWrong, nonFinite int, got string) kernelResult {
	r.Pass, r.Step, r.Wrong, r.NonFinite = false, "results", nWrong, nonFinite
	r.FirstBad = &badValue{Index: elements / 2, Got: got, Want: "0.25"}
	return r
}

// kernelCases are the kernel check's outcomes on the stand-in driver: a
// pass on each Jetson GPU and driver of the matrix, and each failure mode,
// named with the step that failed.
func kernelCases() []kernelCase {
	driver := func(b binaries) string { return b.lib }
	noInit := func(step, name string, code int) kernelResult {
		r := failed(step, name, code)
		r.SM, r.DriverVersion = "", 0
		return r
	}
	old := failed("cuModuleLoadDataEx", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 222)
	old.DriverVersion = 10020
	maxwell := failed("cuModuleLoadDataEx", "CUDA_ERROR_INVALID_PTX", 218)
	maxwell.SM = "3.7"
	return []kernelCase{
		{name: "Orin on JetPack 6", lib: driver, env: []string{"FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=12060"},
			want: passed("8.7", 12060)},
		{name: "Orin on JetPack 5, CUDA 11.4", lib: driver, env: []string{"FAKE_CUDA_DRIVER_VERSION=11040"}, want: passed("8.7", 11040)},
		{name: "Xavier", lib: driver, env: []string{"FAKE_CUDA_MAJOR=7", "FAKE_CUDA_MINOR=2", "FAKE_CUDA_DRIVER_VERSION=11040"},
			want: passed("7.2", 11040)},
		{name: "Thor on CUDA 13", lib: driver, env: []string{"FAKE_CUDA_MAJOR=11", "FAKE_CUDA_MINOR=0", "FAKE_CUDA_DRIVER_VERSION=13000"},
			want: passed("11.0", 13000)},
		{name: "Thor on the old driver stack", lib: driver, env: []string{"FAKE_CUDA_MAJOR=10", "FAKE_CUDA_MINOR=1", "FAKE_CUDA_DRIVER_VERSION=12090"},
			want: passed("10.1", 12090)},
		{name: "a GPU older than the PTX target", lib: driver, env: []string{"FAKE_CUDA_MAJOR=3", "FAKE_CUDA_MINOR=7"}, want: maxwell,
			wantStderr: "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218)\n" +
				"ptxas fatal   : SM version specified by .target is higher than default SM version assumed\n"},
		{name: "a driver older than the PTX ISA", lib: driver, env: []string{"FAKE_CUDA_DRIVER_VERSION=10020"}, want: old,
			wantStderr: "cuModuleLoadDataEx failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)\n" +
				"ptxas application ptx input, line 4; fatal   : Unsupported .version 7.0; current version is '6.5'\n"},
		{name: "no binary for the GPU", lib: driver, env: []string{"FAKE_CUDA_JIT_RESULT=209"},
			want: failed("cuModuleLoadDataEx", "CUDA_ERROR_NO_BINARY_FOR_GPU", 209),
			wantStderr: "cuModuleLoadDataEx failed: CUDA_ERROR_NO_BINARY_FOR_GPU (209)\n" +
				"stand-in libcuda: FAKE_CUDA_JIT_RESULT=209\n"},
		{name: "out of memory", lib: driver, env: []string{"FAKE_CUDA_MEM_BYTES=20000"},
			want:       failed("cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY", 2),
			wantStderr: "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)\n"},
		{name: "the kernel faults", lib: driver, env: []string{"FAKE_CUDA_LAUNCH_RESULT=719"},
			want:       failed("cuCtxSynchronize", "CUDA_ERROR_LAUNCH_FAILED", 719),
			wantStderr: "cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED (719)\n"},
		{name: "an illegal address", lib: driver, env: []string{"FAKE_CUDA_LAUNCH_RESULT=700"},
			want:       failed("cuCtxSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS", 700),
			wantStderr: "cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)\n"},
		{name: "the launch is refused", lib: driver, env: []string{"FAKE_CUDA_LAUNCH_RESULT=701"},
			want:       failed("cuLaunchKernel", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701),
			wantStderr: "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701)\n"},
		{name: "a wrong value", lib: driver, env: []string{"FAKE_CUDA_KERNEL_OUTPUT=wrong"}, want: wrong(passed("8.7", 12060), 1, 0, "1.25"),
			wantStderr: "the kernel's results are not exact: 1 wrong and 0 not finite of 4096 values (first at index 2048: 1.25, want 0.25)\n"},
		{name: "a NaN", lib: driver, env: []string{"FAKE_CUDA_KERNEL_OUTPUT=nan"}, want: wrong(passed("8.7", 12060), 0, 1, "NaN"),
			wantStderr: "the kernel's results are not exact: 0 wrong and 1 not finite of 4096 values (first at index 2048: NaN, want 0.25)\n"},
		{name: "an infinity", lib: driver, env: []string{"FAKE_CUDA_KERNEL_OUTPUT=inf"}, want: wrong(passed("8.7", 12060), 0, 1, "+Inf"),
			wantStderr: "the kernel's results are not exact: 0 wrong and 1 not finite of 4096 values (first at index 2048: +Inf, want 0.25)\n"},
		{name: "no device, named by the driver", lib: driver, env: []string{"FAKE_CUDA_INIT_RESULT=100"},
			want: noInit("cuInit", "CUDA_ERROR_NO_DEVICE", 100), wantStderr: "cuInit failed: CUDA_ERROR_NO_DEVICE (100)\n"},
		{name: "an error neither knows", lib: driver, env: []string{"FAKE_CUDA_INIT_RESULT=12345"},
			want: noInit("cuInit", "", 12345), wantStderr: "cuInit failed: CUDA error (12345)\n"},
		{name: "CUDA's stub", lib: func(b binaries) string { return b.stub },
			want: noInit("cuInit", "CUDA_ERROR_STUB_LIBRARY", 34), wantStderr: "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)\n"},
		{name: "not a driver", lib: func(b binaries) string { return b.without }, want: noInit("dlsym", "", 0),
			wantStderr: "{lib} has no cuDriverGetVersion: it is not a CUDA driver\n"},
		{name: "no library", lib: func(binaries) string { return "/nonexistent/libcuda.so.1" }, want: noInit("dlopen", "", 0),
			wantStderr: "dlopen {lib} failed: {lib}: cannot open shared object file: No such file or directory\n"},
	}
}

// testKernel runs every case with the probe and drivers built for arch.
func testKernel(t *testing.T, arch string) {
	b := build(t, arch)
	for _, tt := range kernelCases() {
		t.Run(tt.name, func(t *testing.T) {
			lib := tt.lib(b)
			code, stdout, stderr := runProbe(t, arch, b.probe, []string{"--kernel", lib}, tt.env)
			require.Equal(t, strings.ReplaceAll(tt.wantStderr, "{lib}", lib), stderr)
			require.Equal(t, map[bool]int{true: 0, false: 1}[tt.want.Pass], code)
			require.Equal(t, 1, strings.Count(stdout, "\n"), "one JSON line")
			var got kernelResult
			require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
			require.GreaterOrEqual(t, got.JITMillis, 0.0)
			require.GreaterOrEqual(t, got.KernelMillis, 0.0)
			require.GreaterOrEqual(t, got.TotalMillis, got.JITMillis+got.KernelMillis-0.002, "the total holds the parts")
			got.JITMillis, got.KernelMillis, got.TotalMillis = 0, 0, 0
			require.Equal(t, tt.want, got)
		})
	}
}

func TestKernelAMD64(t *testing.T) { testKernel(t, "amd64") }

// TestKernelARM64 runs the linux/arm64 probe under QEMU against the
// aarch64 build of the stand-in driver, as in an image on a Jetson.
func TestKernelARM64(t *testing.T) { testKernel(t, "arm64") }

// TestKernelPTX gives the stand-in driver PTX that the real driver's JIT
// refuses, or finds no kernel in, in this process: each is refused with
// the error and, for the JIT, ptxas's sentence in the error log.
func TestKernelPTX(t *testing.T) {
	b := build(t, "amd64")
	tests := []struct {
		name, old, new string
		step, error    string
		code           int
		log            string
	}{
		{name: "the shipped kernel", old: "", new: ""},
		{name: "the GPU's own SM as the target", old: ".target sm_50", new: ".target sm_87"},
		{name: "a target above the GPU", old: ".target sm_50", new: ".target sm_90", step: "cuModuleLoadDataEx",
			error: "CUDA_ERROR_INVALID_PTX", code: 218, log: "ptxas fatal   : SM version specified by .target is higher than default SM version assumed"},
		{name: "an arch-specific target of another GPU", old: ".target sm_50", new: ".target sm_80a", step: "cuModuleLoadDataEx",
			error: "CUDA_ERROR_INVALID_PTX", code: 218, log: "SM version specified by .target is higher"},
		{name: "a PTX ISA newer than CUDA 12.6's", old: ".version 7.0", new: ".version 8.6", step: "cuModuleLoadDataEx",
			error: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", code: 222, log: "fatal   : Unsupported .version 8.6; current version is '8.5'"},
		{name: "an undeclared register", old: "%rd<8>", new: "%rd<7>", step: "cuModuleLoadDataEx",
			error: "CUDA_ERROR_INVALID_PTX", code: 218, log: "error   : Unknown symbol '%rd7'"},
		{name: "an undeclared parameter", old: "[jetbake_axpb_param_n]", new: "[n]", step: "cuModuleLoadDataEx",
			error: "CUDA_ERROR_INVALID_PTX", code: 218, log: "Unknown symbol 'n'"},
		{name: "a missing semicolon", old: "ret;", new: "ret", step: "cuModuleLoadDataEx",
			error: "CUDA_ERROR_INVALID_PTX", code: 218, log: "syntax error"},
		{name: "not PTX", old: kernelPTX, new: "int main() {}", step: "cuModuleLoadDataEx",
			error: "CUDA_ERROR_INVALID_PTX", code: 218, log: "Missing .version directive"},
		{name: "another kernel", old: ".entry jetbake_axpb", new: ".entry saxpy", step: "cuModuleLoadDataEx",
			error: "CUDA_ERROR_INVALID_PTX", code: 218, log: "not jetbake_axpb, the only kernel it runs"},
		{name: "an entry that is not visible", old: ".visible .entry", new: ".entry", step: "cuModuleGetFunction",
			error: "CUDA_ERROR_NOT_FOUND", code: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ptx := strings.Replace(kernelPTX, tt.old, tt.new, 1)
			require.True(t, tt.old == "" || ptx != kernelPTX, "the edit applies")
			res, said := runKernelPTX(b.lib, ptx)
			require.Equal(t, tt.step == "", res.Pass, said)
			require.Equal(t, tt.step, res.Step)
			require.Equal(t, tt.error, res.Error)
			require.Equal(t, tt.code, res.Code)
			require.Contains(t, said, tt.log)
			if tt.step == "" {
				require.Equal(t, "8.7", res.SM, "the stand-in's GPU")
			}
		})
	}
}

// TestKernelValues checks that the values the check compares are exact in
// float32 and that every input lies in the kernel's range.
func TestKernelValues(t *testing.T) {
	for i := 0; i < elements; i++ {
		want := coefA*float64(input(i)) + coefB
		require.Equal(t, want, float64(expected(i)), "y[%d] is exact in float32", i)
	}
	require.Equal(t, float32(-2048), input(0))
	require.Equal(t, float32(0.25), expected(elements/2))
}

// TestKernelStepsAreAllowListed checks that every step the check can name
// is one the entrypoint keeps in its evidence (evidencespec.KernelSteps).
func TestKernelStepsAreAllowListed(t *testing.T) {
	src, err := os.ReadFile("kernel.go")
	require.NoError(t, err)
	steps := regexp.MustCompile(`r\.(?:call|later|fail)\("([^"]+)"`).FindAllStringSubmatch(string(src), -1)
	require.GreaterOrEqual(t, len(steps), 15)
	steps = append(steps, []string{"", "dlopen"}, []string{"", "dlsym"})
	for _, s := range steps {
		require.Contains(t, evidencespec.KernelSteps(), s[1])
	}
}
