package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
)

// withRuntimeBase keeps one release: jetpack6.2 renamed to name, on runtimeBase.
func withRuntimeBase(name, runtimeBase string) func(map[string]any) {
	return func(m map[string]any) {
		OnlyNoComputeCap(m)
		r := m["releases"].([]any)[0].(map[string]any)
		r["name"] = name
		r["runtime_base"] = runtimeBase
		delete(r, "build_args")
	}
}

// The router side of the contract on the real buildkitd: the compute-cap
// step is what lets the Orin image start, and the smoke run of the
// image's binaries on the runtime base catches a base without libssl or a
// CA bundle.
func TestRouterContract(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()

	t.Run("leaving jetson-compute-cap.sh out makes the Orin run fail", func(t *testing.T) {
		p := f.demoPlan(t, "no-compute-cap.json", OnlyNoComputeCap)
		_, err := f.env.PushStandins(ctx, p)
		require.NoError(t, err)
		report, err := f.build(ctx, p, imagebuild.WithPush(true))
		require.NoError(t, err, "the build succeeds: the gate only shows on the device")
		images, err := Images(ctx, filepath.Join(f.work, "rootfs-ncc"), map[string]string{NoComputeCapRelease: p.Releases[0].Tags[0]})
		require.NoError(t, err)
		hostsByName, err := WriteHosts(filepath.Join(f.work, "hosts-ncc"))
		require.NoError(t, err)
		runner, err := runimage.NewRunner(filepath.Join(f.work, "bundles-ncc"))
		require.NoError(t, err)
		checks := []Check{
			{Release: NoComputeCapRelease, Host: "orin-jp6", WantFailure: RefusalOnOrin},
			// The same image gets past the entrypoint; only the router's gate stops it.
			{Release: NoComputeCapRelease, Host: "orin-jp6", Args: []string{"--version"}, WantFailure: ""},
		}
		out := RunChecks(ctx, runner, images, hostsByName, checks)
		require.True(t, out[0].OK(), "%s\nstdout: %s\nstderr: %s", out[0].Summary(), out[0].Result.Stdout, out[0].Result.Stderr)
		require.Equal(t, 0, out[1].Result.ExitCode, out[1].Result.Stderr)
		require.Contains(t, out[1].Result.Stdout, "text-embeddings-router")
		require.Equal(t, imagebuild.Succeeded, report.Releases[0].Outcome)

		// Without a driver answer (no FAKE_CUDA_*), the router fails as TEI does without a CUDA device.
		host := hostsByName["orin-jp6"]
		host.Env = nil
		img := images[NoComputeCapRelease]
		res, err := runner.Run(ctx, img.Rootfs, img.Config, host, nil)
		require.NoError(t, err)
		require.NotEqual(t, 0, res.ExitCode)
		require.Contains(t, res.Stderr, "CUDA is not available")
	})

	t.Run("Xavier's binary is built with its own cargo features and accepts SM 7.2", func(t *testing.T) {
		p := f.demoPlan(t, "matrix.json")
		_, err := f.env.PushStandins(ctx, p)
		require.NoError(t, err)
		_, err = f.build(ctx, p, imagebuild.WithPush(true), imagebuild.WithReleases("jetpack5.1"))
		require.NoError(t, err)
		rel, _ := p.Release("jetpack5.1")
		images, err := Images(ctx, filepath.Join(f.work, "rootfs-jp5"), map[string]string{rel.Name: rel.Tags[0]})
		require.NoError(t, err)
		runner, err := runimage.NewRunner(filepath.Join(f.work, "bundles-jp5"))
		require.NoError(t, err)
		hostsByName, err := WriteHosts(filepath.Join(f.work, "hosts-jp5"))
		require.NoError(t, err)
		// No Xavier among the fake hosts: an Orin's files, a Xavier's driver
		// answers and the capability chosen by hand.
		host := hostsByName["orin-jp6"]
		host.Env = FakeHost{GPU: sm(7, 2), DriverCUDA: cuda(11, 4)}.Env()
		img := images[rel.Name]
		res, err := runner.Run(ctx, img.Rootfs, img.Config, host, nil, "JETBAKE_COMPUTE_CAP=7.2", "JETBAKE_SKIP_L4T_CHECK=1")
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, res.Stderr)
		require.Contains(t, res.Stdout, "router built for sm_72 (SM 72), compute cap: runtime 72 accepted by compile time 72")
		require.Contains(t, res.Stdout, "features: candle-cuda-volta")
		host.Env = FakeHost{GPU: sm(8, 7), DriverCUDA: cuda(11, 4)}.Env()
		res, err = runner.Run(ctx, img.Rootfs, img.Config, host, nil, "JETBAKE_SKIP_L4T_CHECK=1")
		require.NoError(t, err)
		require.Contains(t, res.Stdout, "router built for sm_87 (SM 87), compute cap: runtime 87 accepted by compile time 87")
		require.Contains(t, res.Stdout, "features: candle-cuda\n")
	})

	t.Run("a runtime base without libssl fails the build naming it", func(t *testing.T) {
		const noSSL = "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime-nossl"
		p := f.demoPlan(t, "nossl.json", withRuntimeBase("nossl", noSSL))
		_, err := f.env.PushStandins(ctx, p)
		require.NoError(t, err)
		_, err = f.env.Kit().Push(ctx, f.env.Registry, standin.Base{Ref: noSSL, CUDA: "12.6", CABundle: true})
		require.NoError(t, err)
		want := "router-87 --version (exit 127) fails on the runtime base: it needs libssl.so.3, which the runtime base " + noSSL + " lacks"
		// Pushed: the smoke run goes beside the export, in a build of its
		// own; the release fails before anything is tagged.
		report, err := f.build(ctx, p, imagebuild.WithPush(true))
		require.Error(t, err)
		require.Equal(t, imagebuild.Failed, report.Releases[0].Outcome)
		require.Contains(t, report.Releases[0].Error, want)
		require.Empty(t, report.Releases[0].Tags)
		for _, tag := range p.Releases[0].Tags {
			ref, err := name.ParseReference(tag)
			require.NoError(t, err)
			_, err = remote.Head(ref)
			require.Error(t, err, "%s must not be tagged", tag)
		}
		// A local output: the smoke run comes before the export; nothing is written.
		dest := filepath.Join(f.work, "nossl-oci")
		report, err = f.build(ctx, p, imagebuild.WithOutputs(imagebuild.Output{Type: "oci", Dest: dest}))
		require.Error(t, err)
		require.Contains(t, report.Releases[0].Error, want)
		require.NoDirExists(t, dest)
	})

	t.Run("a runtime base without a CA bundle fails the build naming it", func(t *testing.T) {
		const noCA = "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime-noca"
		p := f.demoPlan(t, "noca.json", withRuntimeBase("noca", noCA))
		_, err := f.env.PushStandins(ctx, p)
		require.NoError(t, err)
		_, err = f.env.Kit().Push(ctx, f.env.Registry, standin.Base{Ref: noCA, CUDA: "12.6", Libs: []string{"libssl.so.3"}})
		require.NoError(t, err)
		report, err := f.build(ctx, p)
		require.Error(t, err)
		require.Contains(t, report.Releases[0].Error, "has no CA bundle at "+standin.CABundlePath)
	})
}

// copyStandinRouter copies the stand-in router's folder to dir with its
// Dockerfile changed by edit, and returns a matrix mutation that builds it.
func copyStandinRouter(t *testing.T, root, dir string, edit func(string) string) func(map[string]any) {
	t.Helper()
	src := filepath.Join(root, StandinRouter)
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	df := filepath.Join(dir, "Dockerfile")
	data, err := os.ReadFile(df)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(df, []byte(edit(string(data))), 0o644))
	return func(m map[string]any) {
		r := m["router"].(map[string]any)
		r["context"], r["dockerfile"] = dir, df
	}
}

// `jetbake check` runs BuildKit's Dockerfile checks for each release and SM:
// warnings with file and line, exit 1 on errors. `build` runs the same
// checks while it converts the Dockerfile: the warnings are in its report,
// and a Dockerfile that cannot be built fails it, naming file and line.
func TestCLICheck(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p := f.demoPlan(t, "matrix.json")
	_, err := f.env.PushStandins(ctx, p)
	require.NoError(t, err)
	mirror := "nvcr.io=" + f.env.Registry
	run := func(matrixPath string, args ...string) (int, string, string) {
		return jetbake(ctx, append(append(args, "--matrix", matrixPath, "--addr", f.env.Daemon.Addr, "--mirror", mirror), f.allow()...)...)
	}

	code, out, errOut := run(filepath.Join(f.work, "matrix.json"), "check", "--release", "jetpack7.2")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "passes BuildKit's checks")

	warn := f.demoPlanFile(t, "warn.json", copyStandinRouter(t, f.env.RepoRoot, filepath.Join(f.work, "warn"),
		func(s string) string {
			return strings.Replace(s, "FROM ${BUILD_BASE} AS router", "FROM ${BUILD_BASE} as router", 1)
		}))
	code, out, errOut = run(warn, "check", "--release", "jetpack7.2", "--format", "json")
	require.Equal(t, 0, code, out+errOut)
	var report struct {
		OK       bool                 `json:"ok"`
		Findings []imagebuild.Finding `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	require.True(t, report.OK)
	require.Len(t, report.Findings, 2, "one per SM target: %+v", report.Findings)
	for _, fd := range report.Findings {
		require.Equal(t, "FromAsCasing", fd.Rule)
		require.Equal(t, imagebuild.SeverityWarning, fd.Severity)
		require.Equal(t, filepath.Join(f.work, "warn", "Dockerfile"), fd.File)
		require.Equal(t, 9, fd.Line)
	}
	require.ElementsMatch(t, []string{"8.7", "11.0"}, []string{report.Findings[0].SM, report.Findings[1].SM})

	metadata := filepath.Join(f.work, "warn-metadata.json")
	code, _, errOut = run(warn, "build", "--release", "jetpack7.2", "--entrypoint-dir", f.entrypointDir, "--metadata-file", metadata)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "jetbake: check: "+filepath.Join(f.work, "warn", "Dockerfile")+":9: warning: FromAsCasing")
	var built imagebuild.Report
	data, err := os.ReadFile(metadata)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &built))
	require.Len(t, built.Releases, 1)
	require.Equal(t, report.Findings, built.Releases[0].Findings, "build finds what check finds")

	broken := f.demoPlanFile(t, "broken.json", copyStandinRouter(t, f.env.RepoRoot, filepath.Join(f.work, "broken"),
		func(s string) string { return strings.Replace(s, "COPY . /src", "COPY --chmod . /src", 1) }))
	code, out, errOut = run(broken, "check", "--release", "jetpack6.2")
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, out, filepath.Join(f.work, "broken", "Dockerfile"))
	require.Contains(t, out, ": error: ")

	code, _, errOut = run(broken, "build", "--release", "jetpack6.2", "--entrypoint-dir", f.entrypointDir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, filepath.Join(f.work, "broken", "Dockerfile")+": dockerfile parse error on line 19")
}
