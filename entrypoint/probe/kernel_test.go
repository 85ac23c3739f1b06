package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// kernelCheckOf returns the cuda-kernel check and its position.
func kernelCheckOf(t *testing.T, ev *evidencespec.Evidence) (evidencespec.Check, int) {
	t.Helper()
	for i, c := range ev.Result.Checks {
		if c.Name == evidencespec.CheckCUDAKernel {
			return c, i
		}
	}
	require.Fail(t, "no cuda-kernel check", "%+v", ev.Result.Checks)
	return evidencespec.Check{}, -1
}

func TestProbeKernelPass(t *testing.T) {
	r := runProbeIn(t, orinRoot(t), "arm64", []string{"--kernel", "--smoke"}, "JETBAKE_IMAGE_DIGEST="+testDigest)
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, r.ev.Result.Pass)
	c, at := kernelCheckOf(t, &r.ev)
	require.Equal(t, evidencespec.Passed, c.Status)
	require.Regexp(t, `^a PTX kernel JIT-compiled by the driver ran on SM 8\.7: 4096 of 4096 values exact \(JIT [0-9]+\.[0-9]{3} ms, kernel [0-9]+\.[0-9]{3} ms\)$`, c.Detail)
	require.Equal(t, "smoke", r.ev.Result.Checks[at+1].Name, "the GPU's own check comes before the router runs")
	k := r.ev.Result.Kernel
	require.NotNil(t, k)
	require.Equal(t, "8.7", k.SM)
	require.Equal(t, 4096, k.Elements)
	require.Empty(t, k.Step+k.Error)
	require.GreaterOrEqual(t, k.TotalMillis, k.JITMillis)
	require.True(t, strings.HasSuffix(r.stderr, "jetbake-probe: pass: all 12 checks passed\n"), r.stderr)
}

func TestProbeWithoutKernelHasNoKernelCheck(t *testing.T) {
	r := runProbeIn(t, orinRoot(t), "arm64", []string{"--smoke"}, "JETBAKE_IMAGE_DIGEST="+testDigest)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, statuses(&r.ev), evidencespec.CheckCUDAKernel)
	require.Nil(t, r.ev.Result.Kernel)
}

// TestProbeKernelFailures runs the check on the stand-in driver with each
// of its failure modes: the check fails with the step and the CUDA error,
// the run's values are kept, and the probe's own sentences reach stderr.
func TestProbeKernelFailures(t *testing.T) {
	tests := []struct {
		name       string
		env        []string
		stub       bool
		detail     string
		want       evidencespec.Kernel
		wantStderr string
	}{
		{name: "a GPU below the kernel's target", env: []string{"FAKE_CUDA_MAJOR=3", "FAKE_CUDA_MINOR=7"},
			detail: "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): the driver's JIT could not compile the kernel for this GPU",
			want:   evidencespec.Kernel{SM: "3.7", Step: "cuModuleLoadDataEx", Error: "CUDA_ERROR_INVALID_PTX"},
			wantStderr: "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218)\n" +
				"ptxas fatal   : SM version specified by .target is higher than default SM version assumed\n"},
		{name: "a driver older than the PTX ISA", env: []string{"FAKE_CUDA_DRIVER_VERSION=10020"},
			detail:     "cuModuleLoadDataEx failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): the driver is older than the kernel's PTX ISA",
			want:       evidencespec.Kernel{SM: "8.7", Step: "cuModuleLoadDataEx", Error: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
			wantStderr: "Unsupported .version 7.0; current version is '6.5'"},
		{name: "no binary for the GPU", env: []string{"FAKE_CUDA_JIT_RESULT=209"},
			detail: "cuModuleLoadDataEx failed: CUDA_ERROR_NO_BINARY_FOR_GPU (209): the driver has no code of the kernel for this GPU",
			want:   evidencespec.Kernel{SM: "8.7", Step: "cuModuleLoadDataEx", Error: "CUDA_ERROR_NO_BINARY_FOR_GPU"}},
		{name: "out of memory", env: []string{"FAKE_CUDA_MEM_BYTES=4096"},
			detail: "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): the GPU had no memory free for the kernel's 32 KB",
			want:   evidencespec.Kernel{SM: "8.7", Step: "cuMemAlloc", Error: "CUDA_ERROR_OUT_OF_MEMORY"}},
		{name: "the kernel faults", env: []string{"FAKE_CUDA_LAUNCH_RESULT=719"},
			detail: "cuCtxSynchronize failed: CUDA_ERROR_LAUNCH_FAILED (719): the kernel faulted on the GPU",
			want:   evidencespec.Kernel{SM: "8.7", Step: "cuCtxSynchronize", Error: "CUDA_ERROR_LAUNCH_FAILED"}},
		{name: "the launch is refused", env: []string{"FAKE_CUDA_LAUNCH_RESULT=701"},
			detail: "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701)",
			want:   evidencespec.Kernel{SM: "8.7", Step: "cuLaunchKernel", Error: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}},
		{name: "a wrong value", env: []string{"FAKE_CUDA_KERNEL_OUTPUT=wrong"},
			detail: "1 wrong and 0 not finite of 4096 values on SM 8.7 (first at index 2048: got 1.25, want 0.25)",
			want:   evidencespec.Kernel{SM: "8.7", Step: "results", Wrong: 1}},
		{name: "a NaN", env: []string{"FAKE_CUDA_KERNEL_OUTPUT=nan"},
			detail: "0 wrong and 1 not finite of 4096 values on SM 8.7 (first at index 2048: got NaN, want 0.25)",
			want:   evidencespec.Kernel{SM: "8.7", Step: "results", NonFinite: 1}},
		{name: "an infinity", env: []string{"FAKE_CUDA_KERNEL_OUTPUT=inf"},
			detail: "0 wrong and 1 not finite of 4096 values on SM 8.7 (first at index 2048: got +Inf, want 0.25)",
			want:   evidencespec.Kernel{SM: "8.7", Step: "results", NonFinite: 1}},
		{name: "no device", env: []string{"FAKE_CUDA_INIT_RESULT=100"},
			detail: "cuInit failed: CUDA_ERROR_NO_DEVICE (100): no GPU is visible: start the container with --runtime nvidia",
			want:   evidencespec.Kernel{Step: "cuInit", Error: "CUDA_ERROR_NO_DEVICE"}},
		{name: "CUDA's stub in place of the driver", stub: true,
			detail: "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34): this is CUDA's stub, not the host's driver: start the container with --runtime nvidia",
			want:   evidencespec.Kernel{Step: "cuInit", Error: "CUDA_ERROR_STUB_LIBRARY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := orinRoot(t)
			if tt.stub {
				data, err := os.ReadFile(eptest.Build(t).Stub)
				require.NoError(t, err)
				eptest.WriteFile(t, root, "/usr/lib/aarch64-linux-gnu/nvidia/"+host.LibcudaName, string(data), 0o755)
			}
			r := runProbeIn(t, root, "arm64", []string{"--kernel"}, append(tt.env, "JETBAKE_IMAGE_DIGEST="+testDigest)...)
			require.Equal(t, 1, r.code)
			c, _ := kernelCheckOf(t, &r.ev)
			require.Equal(t, evidencespec.Failed, c.Status)
			require.Equal(t, tt.detail, c.Detail)
			k := r.ev.Result.Kernel
			require.NotNil(t, k)
			want := tt.want
			want.Elements, want.JITMillis, want.KernelMillis, want.TotalMillis = 4096, k.JITMillis, k.KernelMillis, k.TotalMillis
			require.Equal(t, want, *k)
			require.Contains(t, r.stderr, tt.wantStderr)
			require.Regexp(t, `probe: not a pass: failed [a-z, -]*cuda-kernel`, r.stderr)
		})
	}
}

// TestProbeKernelNotRun shows the check skipped, not failed, when the
// driver or the probe is missing: cuda-driver already fails for that.
func TestProbeKernelNotRun(t *testing.T) {
	r := runProbeIn(t, eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6"), "arm64", []string{"--kernel"})
	c, _ := kernelCheckOf(t, &r.ev)
	require.Equal(t, evidencespec.Check{Name: "cuda-kernel", Status: evidencespec.Skipped,
		Detail: "not run: libcuda.so.1 not found: start the container with --runtime nvidia"}, c)
	require.Nil(t, r.ev.Result.Kernel)

	r = runProbeIn(t, orinRoot(t), "arm64", []string{"--kernel"}, "JETBAKE_CUDAPROBE=/nonexistent/jetbake-cudaprobe")
	c, _ = kernelCheckOf(t, &r.ev)
	require.Equal(t, "not run: jetbake-cudaprobe is missing next to the entrypoint", c.Detail)
}

// TestProbeKernelAnswers gives the entrypoint probes that answer the
// kernel check badly: the evidence keeps only what has its allow-listed
// form, and a line that does not hold together is a failure.
func TestProbeKernelAnswers(t *testing.T) {
	tests := []struct {
		name, script string
		detail       string
		want         *evidencespec.Kernel
	}{
		{name: "no line", script: "echo hello", detail: "the CUDA probe exited 0 without a kernel check line"},
		{name: "killed", script: "kill -9 $$", detail: "the CUDA probe was killed by a signal"},
		{name: "a line and exit 2", script: `echo '{"pass":false,"step":"cuInit","code":3}'; exit 2`,
			detail: "the CUDA probe exited 2 without a kernel check line"},
		{name: "a step it does not know", script: `echo '{"pass":false,"step":"/home/alice"}'; exit 1`,
			detail: "the CUDA probe exited 1 without a kernel check line"},
		{name: "a pass that does not hold together", script: `echo '{"pass":true,"sm":"8.7","elements":4096,"wrong":3}'`,
			detail: "the CUDA probe's line does not hold together", want: &evidencespec.Kernel{SM: "8.7", Elements: 4096, Wrong: 3}},
		{name: "a pass with exit 1", script: `echo '{"pass":true,"sm":"8.7","elements":4096}'; exit 1`,
			detail: "the CUDA probe's line does not hold together", want: &evidencespec.Kernel{SM: "8.7", Elements: 4096}},
		{name: "an error name that is not a CUDA name", script: `echo '{"pass":false,"sm":"/8.7","step":"cuInit","error":"/home/alice x","code":3}'; exit 1`,
			detail: "cuInit failed: CUDA error (3)", want: &evidencespec.Kernel{Step: "cuInit"}},
		{name: "times out of range", script: `echo '{"pass":true,"sm":"8.7","elements":4096,"jit_ms":-5,"kernel_ms":1e300,"total_ms":1.23456}'`,
			detail: "a PTX kernel JIT-compiled by the driver ran on SM 8.7: 4096 of 4096 values exact (JIT 0.000 ms, kernel 3600000.000 ms)",
			want:   &evidencespec.Kernel{SM: "8.7", Elements: 4096, KernelMillis: 3_600_000, TotalMillis: 1.235}},
		{name: "a first value that is not a number", script: `echo '{"pass":false,"sm":"8.7","elements":4096,"step":"results","wrong":1,"first_bad":{"index":1,"got":"/x","want":"1"}}'; exit 1`,
			detail: "1 wrong and 0 not finite of 4096 values on SM 8.7", want: &evidencespec.Kernel{SM: "8.7", Elements: 4096, Step: "results", Wrong: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := filepath.Join(t.TempDir(), "fake-cudaprobe")
			script := "#!/bin/sh\nif [ \"$1\" = --kernel ]; then\n" + tt.script + "\nfi\necho '{\"major\":8,\"minor\":7,\"driver_version\":12060}'\n"
			require.NoError(t, os.WriteFile(probe, []byte(script), 0o755))
			r := runProbeIn(t, orinRoot(t), "arm64", []string{"--kernel"}, "JETBAKE_CUDAPROBE="+probe)
			c, _ := kernelCheckOf(t, &r.ev)
			require.Equal(t, tt.detail, c.Detail)
			require.Equal(t, tt.want != nil && strings.HasPrefix(tt.detail, "a PTX kernel"), c.Status == evidencespec.Passed)
			require.Equal(t, tt.want, r.ev.Result.Kernel)
			require.NotContains(t, r.stdout, "/home")
		})
	}
}

// TestKernelProbeTimeout: a kernel probe that hangs is stopped when the
// caller's deadline comes before the probe's own kernelTimeout, and the
// detail names the deadline that fired (about 200ms, not 1m0s), in a form
// the evidence takes.
func TestKernelProbeTimeout(t *testing.T) {
	probe := eptest.Script(t, "exec sleep 30")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, exit, err := runKernelProbe(ctx, probe, "/usr/lib/libcuda.so.1", nil, io.Discard)
	require.Equal(t, -1, exit)
	require.Regexp(t, `^the CUDA probe gave no answer within (1[5-9]0|200)ms$`, err.Error())
	require.True(t, evidencespec.ValidDetail(evidencespec.CheckCUDAKernel, err.Error()), "the detail fits the evidence's allow-list")
}
