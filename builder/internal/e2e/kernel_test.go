package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// TestKernelCheckInImage builds the shipped matrix's JetPack 6.2 release
// with jetbake and runs `--probe --kernel --smoke` in it with runc, on the
// fake Orin Nano Super whose driver is the aarch64 stand-in libcuda, where
// NVIDIA's runtime mounts the host's on JetPack 6. The arm64 entrypoint
// and CUDA probe run under QEMU: the kernel passes, each failure mode of the
// driver fails the cuda-kernel check with its step and CUDA error, and the
// evidence is what builder/evidence reads.
func TestKernelCheckInImage(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p := f.demoPlan(t, "matrix.json")
	_, err := f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	report, err := f.build(ctx, p, imagebuild.WithPush(true), imagebuild.WithReleases("jetpack6.2"))
	require.NoError(t, err)
	rr := report.Releases[0]
	require.Equal(t, imagebuild.Succeeded, rr.Outcome, rr.Error)
	rel, _ := p.Release("jetpack6.2")
	images, err := Images(ctx, filepath.Join(f.work, "rootfs"), map[string]string{rel.Name: rel.Tags[0]})
	require.NoError(t, err)
	img := images[rel.Name]

	orin := f.hosts(t, "kernel-hosts")["orin-jp6"]
	runner, err := runimage.NewRunner(filepath.Join(f.work, "bundles"))
	require.NoError(t, err)

	tests := []struct {
		name        string
		knobs       []string
		step, error string
	}{
		{name: "the kernel runs and every value is exact"},
		{name: "a driver older than the kernel's PTX ISA", knobs: []string{"FAKE_CUDA_DRIVER_VERSION=10020"},
			step: "cuModuleLoadDataEx", error: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
		{name: "a GPU below the kernel's target", knobs: []string{"FAKE_CUDA_MAJOR=3"}, step: "cuModuleLoadDataEx", error: "CUDA_ERROR_INVALID_PTX"},
		{name: "no binary for the GPU", knobs: []string{"FAKE_CUDA_JIT_RESULT=209"}, step: "cuModuleLoadDataEx", error: "CUDA_ERROR_NO_BINARY_FOR_GPU"},
		{name: "out of memory", knobs: []string{"FAKE_CUDA_MEM_BYTES=4096"}, step: "cuMemAlloc", error: "CUDA_ERROR_OUT_OF_MEMORY"},
		{name: "the kernel faults", knobs: []string{"FAKE_CUDA_LAUNCH_RESULT=719"}, step: "cuCtxSynchronize", error: "CUDA_ERROR_LAUNCH_FAILED"},
		{name: "a wrong value", knobs: []string{"FAKE_CUDA_KERNEL_OUTPUT=wrong"}, step: "results"},
		{name: "a NaN", knobs: []string{"FAKE_CUDA_KERNEL_OUTPUT=nan"}, step: "results"},
		{name: "no device", knobs: []string{"FAKE_CUDA_INIT_RESULT=100"}, step: "cuInit", error: "CUDA_ERROR_NO_DEVICE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := orin
			host.Env = append(append([]string{}, orin.Env...), tt.knobs...)
			res, err := runner.Run(ctx, img.Rootfs, img.Config, host, []string{"--probe", "--kernel", "--smoke"},
				"JETBAKE_IMAGE_DIGEST="+rr.Digest)
			require.NoError(t, err)
			ev, err := evidence.Parse([]byte(res.Stdout))
			require.NoError(t, err, "stdout: %s\nstderr: %s", res.Stdout, res.Stderr)
			kernel := checkNamed(ev, evidencespec.CheckCUDAKernel)
			require.NotNil(t, kernel, res.Stdout)
			require.NotNil(t, ev.Result.Kernel, res.Stdout)
			require.Equal(t, tt.step, ev.Result.Kernel.Step, kernel.Detail)
			require.Equal(t, tt.error, ev.Result.Kernel.Error, kernel.Detail)
			if tt.step == "" {
				require.Equal(t, 0, res.ExitCode, res.Stderr)
				require.True(t, ev.Result.Pass, "every check passes on the fake Orin: %s", res.Stdout)
				require.Equal(t, "8.7", ev.Result.Kernel.SM)
				require.True(t, strings.HasPrefix(kernel.Detail, "a PTX kernel JIT-compiled by the driver ran on SM 8.7: 4096 of 4096 values exact"), kernel.Detail)
				require.Equal(t, rr.Digest, ev.Image.Digest)
				t.Logf("the evidence of the passing run:\n%s", res.Stdout)
				return
			}
			require.Equal(t, 1, res.ExitCode)
			require.Equal(t, evidencespec.Failed, kernel.Status)
			require.Contains(t, kernel.Detail, tt.error)
			require.Contains(t, res.Stderr, "not a pass: failed ")
		})
	}
}

// checkNamed is the check of that name, or nil.
func checkNamed(ev *evidence.Evidence, name string) *evidence.Check {
	for i := range ev.Result.Checks {
		if ev.Result.Checks[i].Name == name {
			return &ev.Result.Checks[i]
		}
	}
	return nil
}
