package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// TestKernelCheckInImage builds the shipped matrix's JetPack 6.2 release
// with jetbake and runs `jetbake-probe --kernel --smoke` in it with runc, on the
// fake Orin Nano Super whose driver is the aarch64 stand-in libcuda, where
// NVIDIA's runtime mounts the host's on JetPack 6. The arm64 probe and
// CUDA probe run under QEMU: the kernel passes, each failure mode of the
// driver fails the cuda-kernel check with its step and CUDA error, and the
// evidence is what builder/evidence reads. The same image then runs the
// serving check (testServeInImage).
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
			ev, res := probeOn(t, runner, img, withKnobs(orin, tt.knobs), []string{"--kernel", "--smoke"}, rr.Digest)
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
	t.Run("the serving check", func(t *testing.T) {
		m, err := matrix.Load(filepath.Join(f.work, "matrix.json"), AllowStandin(f.env.RepoRoot))
		require.NoError(t, err)
		testServeInImage(t, f, img, orin, report, m)
	})
}

// testServeInImage runs `jetbake-probe --smoke --kernel --serve /model` in img
// with runc on the fake Orin, a test model's folder bound at /model: the
// stand-in router (the shipped Dockerfile's, under QEMU) serves it on
// 127.0.0.1 and the evidence reaches level serve, which evidence add
// admits for a supported release; a model folder without config.json, a
// load slower than the bound and NaN in the vectors each fail the serve
// check at their step, with the router's own words on stderr.
func testServeInImage(t *testing.T, f *fixture, img Unpacked, orin runimage.Host, report *imagebuild.Report, m *matrix.Matrix) {
	ctx := t.Context()
	model, noConfig := filepath.Join(f.work, "model"), filepath.Join(f.work, "model-no-config")
	require.NoError(t, WriteModel(model))
	require.NoError(t, WriteModel(noConfig, "config.json"))
	runner, err := runimage.NewRunner(filepath.Join(f.work, "bundles"))
	require.NoError(t, err)
	digest := report.Releases[0].Digest
	tests := []struct {
		name, folder, load string
		knobs              []string
		step, stderr       string
	}{
		{name: "the router serves the model", folder: model, load: "2m", knobs: []string{tei.KnobLoadMillis + "=500"}},
		{name: "a model folder without config.json", folder: noConfig, load: "2m", step: evidencespec.ServeStepStart,
			stderr: "Error: `config.json` not found\n\nCaused by:\n    No such file or directory (os error 2)\n"},
		{name: "a load slower than the bound", folder: model, load: "3s", knobs: []string{tei.KnobLoadMillis + "=60000"},
			step: evidencespec.ServeStepHealth, stderr: "Starting model backend"},
		{name: "NaN in the vectors", folder: model, load: "2m", knobs: []string{tei.KnobEmbed + "=nan"}, step: evidencespec.ServeStepFinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := withKnobs(orin, tt.knobs)
			host.Volumes = []runimage.Volume{{Source: tt.folder, Destination: "/model"}}
			ev, res := probeOn(t, runner, img, host, ServeArgs(tt.load), digest)
			serve := checkNamed(ev, evidencespec.CheckServe)
			require.NotNil(t, serve, res.Stdout)
			require.NotNil(t, ev.Result.Serve, res.Stdout)
			require.Equal(t, tt.step, ev.Result.Serve.Step, "%s\nstderr: %s", serve.Detail, res.Stderr)
			require.Contains(t, res.Stderr, tt.stderr)
			if tt.step != "" {
				require.Equal(t, 1, res.ExitCode)
				require.Equal(t, evidencespec.Failed, serve.Status)
				return
			}
			requireServed(t, ev, res)
			require.GreaterOrEqual(t, ev.Result.Serve.LoadMillis, 500.0, "the slow load is in the load time")
			require.Contains(t, res.Stderr, "Starting HTTP server: 127.0.0.1:", "TEI's --hostname and --port")
			// evidence add takes it for a release that claims supported.
			rel, _ := m.Release("jetpack6.2")
			rel.Tier = evidence.TierSupported
			_, err = evidence.Admit(ctx, ev, m, &evidence.MetadataResolver{File: "build.json", Report: report}, time.Now(), evidence.DefaultMaxAge)
			require.NoError(t, err)
			t.Logf("the evidence of the passing serve run (runc, %s):\n%s", host.Name, res.Stdout)
		})
	}
}

// requireServed checks a passing serving run: every check passed, the
// level is serve, vectors of the model's size, the folder's path nowhere.
func requireServed(t *testing.T, ev *evidence.Evidence, res runimage.Result) {
	t.Helper()
	require.Equal(t, 0, res.ExitCode, res.Stderr)
	require.True(t, ev.Result.Pass, res.Stdout)
	require.Equal(t, evidence.LevelServe, evidence.LevelOf(ev))
	s := ev.Result.Serve
	require.Equal(t, ModelHiddenSize, s.Dimensions)
	require.Equal(t, "float16", s.DType, "the router ran on the GPU the driver reported")
	require.Equal(t, 20, s.Requests)
	require.Empty(t, s.ModelID, "a local folder is not named")
	require.GreaterOrEqual(t, s.P95Millis, s.P50Millis)
	require.NotContains(t, res.Stdout, "/model")
	require.Contains(t, res.Stderr, "signal received, starting graceful shutdown", "stopped by SIGTERM")
}

// withKnobs is host with more environment entries, such as FAKE_CUDA_* knobs.
func withKnobs(host runimage.Host, knobs []string) runimage.Host {
	host.Env = append(append([]string{}, host.Env...), knobs...)
	return host
}

// probeOn runs jetbake-probe with args in img on host with runc, the
// image's digest in JETBAKE_IMAGE_DIGEST, and parses its evidence.
func probeOn(t *testing.T, runner *runimage.Runner, img Unpacked, host runimage.Host, args []string, digest string) (*evidence.Evidence, runimage.Result) {
	t.Helper()
	probe := img.Probe()
	res, err := runner.Run(t.Context(), probe.Rootfs, probe.Config, host, args, "JETBAKE_IMAGE_DIGEST="+digest)
	require.NoError(t, err)
	ev, err := evidence.Parse([]byte(res.Stdout))
	require.NoError(t, err, "stdout: %s\nstderr: %s", res.Stdout, res.Stderr)
	return ev, res
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
