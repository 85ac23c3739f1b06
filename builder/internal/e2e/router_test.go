package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/dockercheck"
	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// only keeps one release: jetpack6.2 renamed to name, tagged
// "{version}-{release}", with change applied to it.
func only(name string, change func(r map[string]any)) func(map[string]any) {
	return func(m map[string]any) {
		onlyVariant(name)(m)
		if change != nil {
			change(m["releases"].([]any)[0].(map[string]any))
		}
	}
}

// edited builds the shipped Dockerfile with edit, into the run's folder.
func (f *fixture) edited(t *testing.T, edit DockerfileEdit) func(map[string]any) {
	t.Helper()
	set, err := WriteDockerfile(f.env.RepoRoot, filepath.Join(f.work, "dockerfiles"), edit)
	require.NoError(t, err)
	return set
}

// pushBases pushes the stand-ins of p's bases, then the bases given,
// which replace the plan's of the same name.
func (f *fixture) pushBases(t *testing.T, p *plan.Plan, bases []standin.Base) {
	t.Helper()
	_, err := f.env.PushStandins(t.Context(), p)
	require.NoError(t, err)
	for _, b := range bases {
		_, err := f.env.Kit().Push(t.Context(), f.env.Registry, b)
		require.NoError(t, err)
	}
}

// buildOne builds and pushes the one release of p, on the stand-ins of its
// bases and the bases given, and returns its unpacked image.
func (f *fixture) buildOne(t *testing.T, p *plan.Plan, bases ...standin.Base) Unpacked {
	t.Helper()
	ctx := t.Context()
	f.pushBases(t, p, bases)
	report, err := f.build(ctx, p, imagebuild.WithPush(true))
	require.NoError(t, err)
	require.Equal(t, imagebuild.Succeeded, report.Releases[0].Outcome, report.Releases[0].Error)
	rel := p.Releases[0]
	images, err := Images(ctx, filepath.Join(f.work, "rootfs-"+rel.Name), map[string]string{rel.Name: rel.Tags[0]})
	require.NoError(t, err)
	return images[rel.Name]
}

// buildFails builds the one release of p, on the stand-ins of its bases
// and the bases given, and returns its error.
func (f *fixture) buildFails(t *testing.T, p *plan.Plan, bases []standin.Base, opts ...imagebuild.Option) string {
	t.Helper()
	f.pushBases(t, p, bases)
	report, err := f.build(t.Context(), p, opts...)
	require.Error(t, err)
	require.Equal(t, imagebuild.Failed, report.Releases[0].Outcome)
	return report.Releases[0].Error
}

// runOn runs img on host with args and the environment env.
func (f *fixture) runOn(t *testing.T, img Unpacked, host runimage.Host, args []string, env ...string) runimage.Result {
	t.Helper()
	runner, err := runimage.NewRunner(filepath.Join(f.work, "bundles"))
	require.NoError(t, err)
	res, err := runner.Run(t.Context(), img.Rootfs, img.Config, host, args, env...)
	require.NoError(t, err)
	return res
}

// The router side of the contract, on the shipped Dockerfile run by the
// stand-in toolchain: each way the real build or the device would fail
// fails here with the real tool's sentence.
func TestRouterContract(t *testing.T) {
	f := newFixture(t)
	hostsByName := f.hosts(t, "hosts")

	t.Run("leaving jetson-compute-cap.sh out makes the Orin run fail", func(t *testing.T) {
		variant, err := OnlyNoComputeCap(f.env.RepoRoot, filepath.Join(f.work, "dockerfiles"))
		require.NoError(t, err)
		img := f.buildOne(t, f.demoPlan(t, "no-compute-cap.json", variant))
		res := f.runOn(t, img, hostsByName["orin-jp6"], nil)
		require.Equal(t, 1, res.ExitCode)
		require.Contains(t, res.Stderr, "Error: Could not create backend\n\nCaused by:\n    Could not start backend: "+RefusalOnOrin)
		// The same image gets past the entrypoint; --version never asks the driver.
		res = f.runOn(t, img, hostsByName["orin-jp6"], []string{"--version"})
		require.Equal(t, 0, res.ExitCode, res.Stderr)
		require.Equal(t, "text-embeddings-router 1.9.3\n", res.Stdout)
		// A driver whose cuInit fails: TEI warns and carries on on the CPU.
		res = f.runOn(t, img, hostsByName["orin-jp6"], nil, "FAKE_CUDA_INIT_RESULT=100")
		require.Equal(t, 0, res.ExitCode, res.Stderr)
		require.Contains(t, res.Stdout, "Could not find a compatible CUDA device on host: CUDA is not available")
		require.Contains(t, res.Stdout, "Using CPU instead")
		// The probe's serving check meets the refusal at model load, where
		// TEI meets it, before the router listens: its smoke run passed.
		model := filepath.Join(f.work, "model-no-compute-cap")
		require.NoError(t, WriteModel(model))
		host := hostsByName["orin-jp6"]
		host.Volumes = []runimage.Volume{{Source: model, Destination: "/model"}}
		res = f.runOn(t, img.Probe(), host, ServeArgs("2m"))
		require.Equal(t, 1, res.ExitCode, res.Stderr)
		ev, err := evidence.Parse([]byte(res.Stdout))
		require.NoError(t, err, res.Stdout)
		require.Equal(t, evidencespec.Passed, checkNamed(ev, "smoke").Status, "--version never touches CUDA")
		serve := checkNamed(ev, evidencespec.CheckServe)
		require.Equal(t, evidencespec.Check{Name: "serve", Status: evidencespec.Failed, Detail: "the router exited 1 before its health route answered"}, *serve)
		require.Equal(t, evidencespec.ServeStepStart, ev.Result.Serve.Step)
		require.Contains(t, res.Stderr, "Could not start backend: "+RefusalOnOrin)
		require.NotContains(t, res.Stderr, "Starting HTTP server")
	})

	t.Run("Thor: TEI's flash gate left as it is fails at the health check; the shipped one serves", func(t *testing.T) {
		model := filepath.Join(f.work, "model-flash")
		require.NoError(t, WriteModel(model))
		host := hostsByName["thor-jp7.0"]
		host.Volumes = []runimage.Volume{{Source: model, Destination: ModelPath}}
		for _, c := range []struct {
			name    string
			variant func(map[string]any)
		}{
			{"no-flash-gate", func() func(map[string]any) {
				v, err := OnlyNoFlashGate(f.env.RepoRoot, filepath.Join(f.work, "dockerfiles"))
				require.NoError(t, err)
				return v
			}()},
			{"flash-gate", func(m map[string]any) { onlyVariantOf("jetpack7.0", "jetpack7.0-shipped")(m) }},
		} {
			img := f.buildOne(t, f.demoPlan(t, c.name+".json", c.variant))
			facts, err := tei.ReadFacts(filepath.Join(img.Rootfs, "usr/local/bin/router-110"))
			require.NoError(t, err)
			require.True(t, facts.FlashAttn, "candle-cuda compiles candle-flash-attn")
			require.True(t, facts.Table.Accepts(110, 110), "the compute-cap arm is there in both")
			require.Equal(t, c.name == "flash-gate", facts.FlashGate.Accepts(110))
			res := f.runOn(t, img.Probe(), host, ServeArgs("2m"))
			o := Outcome{Check: Check{WantServe: true}, Result: res}
			if c.name == "flash-gate" {
				require.True(t, o.OK(), "the serving check passed: %s\n%s", res.Stdout, res.Stderr)
				require.Contains(t, o.Summary(), "serve: 20 requests to the embed route gave finite vectors")
				continue
			}
			require.Equal(t, 1, res.ExitCode, res.Stderr)
			require.Contains(t, res.Stderr, "Error: Model backend is not healthy\n\nCaused by:\n    "+FlashRefusalOnThor)
			ev, err := evidence.Parse([]byte(res.Stdout))
			require.NoError(t, err, res.Stdout)
			require.Equal(t, evidencespec.Failed, checkNamed(ev, evidencespec.CheckServe).Status)
			require.Equal(t, evidencespec.ServeStepStart, ev.Result.Serve.Step)
		}
	})

	t.Run("the linking feature removed: cudarc's build script panics", func(t *testing.T) {
		p := f.demoPlan(t, "no-linking.json", f.edited(t, withoutLinkingFeature), only("no-linking", nil))
		msg := f.buildFails(t, p, nil)
		require.Contains(t, msg, "failed to run custom build command for `cudarc v0.13.5 (https://github.com/Narsil/cudarc?rev=8b4f18b4bcd5e4b1a9daf40abc3a2e27f83f06e9#8b4f18b4)`")
		require.Contains(t, msg, "None between 'dynamic-loading', 'dynamic-linking' and 'static-linking' features are active, this is a bug")
	})

	t.Run("the cross path: aarch64 routers compiled on linux/amd64; a cross base with the host's OpenSSL is refused", func(t *testing.T) {
		checkCross(t, f)
	})

	t.Run("the QEMU path with NVIDIA's arm64 nvcc: cicc and ptxas compile the router's kernels under QEMU", func(t *testing.T) {
		checkNativeNvcc(t, f)
	})

	t.Run("a router compiled for the wrong SM: the audit refuses the release before any tag", func(t *testing.T) {
		checkAudit(t, f)
	})

	t.Run("target-cpu=native back in effect: SIGILL on the Orin", func(t *testing.T) {
		variant, err := OnlyNativeCPU(f.env.RepoRoot, filepath.Join(f.work, "dockerfiles"))
		require.NoError(t, err)
		img := f.buildOne(t, f.demoPlan(t, "native.json", variant))
		facts, err := tei.ReadFacts(filepath.Join(img.Rootfs, "usr/local/bin/router-87"))
		require.NoError(t, err)
		require.Equal(t, "native", facts.TargetCPU)
		require.Contains(t, facts.CPUFeatures, "sve", "tuned for QEMU's emulated CPU, which the smoke run on the builder passed")
		res := f.runOn(t, img, hostsByName["orin-jp6"], nil)
		require.Equal(t, ExitSIGILL, res.ExitCode, "stdout: %s\nstderr: %s", res.Stdout, res.Stderr)
		res = f.runOn(t, img, hostsByName["orin-jp6"], []string{"--version"})
		require.Equal(t, ExitSIGILL, res.ExitCode, "the code dies wherever it starts")
	})

	t.Run("a runtime image without libssl fails the build naming every library", func(t *testing.T) {
		const noSSL = "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime-nossl"
		p := f.demoPlan(t, "nossl.json", f.edited(t, withoutRuntimeSSL), only("nossl", func(r map[string]any) { r["runtime_base"] = noSSL }))
		bases := []standin.Base{{Ref: noSSL, CUDA: "12.6", Ubuntu: "22.04",
			Flavour: "tegra", Libs: []string{"libgcc_s.so.1", "libstdc++.so.6"}}}
		want := []string{"router-87: the smoke run's loader finds no libssl.so.3, libcrypto.so.3 in the runtime image (stage runtime-base of Dockerfile-jetson.no-runtime-ssl on " + noSSL + ")",
			"error while loading shared libraries: libssl.so.3: cannot open shared object file: No such file or directory"}
		// Pushed: the smoke run goes beside the export, in a build of its
		// own; the release fails before anything is tagged.
		msg := f.buildFails(t, p, bases, imagebuild.WithPush(true))
		for _, w := range want {
			require.Contains(t, msg, w)
		}
		for _, tag := range p.Releases[0].Tags {
			ref, err := name.ParseReference(tag)
			require.NoError(t, err)
			_, err = remote.Head(ref)
			require.Error(t, err, "%s must not be tagged", tag)
		}
		// A local output: the smoke run comes before the export; nothing is written.
		dest := filepath.Join(f.work, "nossl-oci")
		msg = f.buildFails(t, p, bases, imagebuild.WithOutputs(localoutput.Output{Type: "oci", Dest: dest}))
		require.Contains(t, msg, want[0])
		require.NoDirExists(t, dest)
		// The smoke run's refusal held until the release was pushed by digest.
		checkRefusedAfterPush(t, f, "nossl-late.json", want[0], f.edited(t, withoutRuntimeSSL), only("nossl", func(r map[string]any) { r["runtime_base"] = noSSL }))

		// The shipped Dockerfile's runtime stage installs what the base
		// lacks: OpenSSL and the CA bundle.
		q := f.demoPlan(t, "nossl-shipped.json", only("nossl-shipped", func(r map[string]any) { r["runtime_base"] = noSSL }))
		img := f.buildOne(t, q, bases...)
		for _, file := range []string{"usr/lib/aarch64-linux-gnu/libssl.so.3", "usr/lib/aarch64-linux-gnu/libcrypto.so.3", strings.TrimPrefix(standin.CABundlePath, "/")} {
			require.FileExists(t, filepath.Join(img.Rootfs, file))
		}
		res := f.runOn(t, img, hostsByName["orin-jp6"], nil)
		require.Equal(t, 0, res.ExitCode, res.Stderr)
	})

	t.Run("a smoke run without the driver stub: the loader names libcuda.so.1", func(t *testing.T) {
		const odd = "nvcr.io/nvidia/l4t-jetpack:r36.4.0-opt-cuda"
		p := f.demoPlan(t, "nostub.json", only("nostub", func(r map[string]any) { r["build_base"] = odd }))
		// CUDA where cudarc finds it through CUDA_ROOT, but not where
		// NVIDIA's images keep it, which the smoke run looks in.
		msg := f.buildFails(t, p, []standin.Base{{Ref: odd, L4T: "36.4.0", CUDA: "12.6", Ubuntu: "22.04",
			Flavour: "tegra", Devel: true, CUDARoot: "/opt/nvidia/cuda-12.6", Libs: standin.UbuntuLibs("22.04"), CABundle: true}})
		require.Contains(t, msg, "router-87: the smoke run's loader finds no libcuda.so.1 in the runtime image")
		require.Contains(t, msg, "error while loading shared libraries: libcuda.so.1: cannot open shared object file")
		require.Contains(t, msg, "the build base "+odd+" has none")
	})

	t.Run("dynamic linking: CUDA's libraries from the runtime stage", func(t *testing.T) {
		p := f.demoPlan(t, "dynamic.json", only("dynamic", func(r map[string]any) {
			r["build_args"] = map[string]any{"CUDA_LINKING": "dynamic-linking"}
		}))
		img := f.buildOne(t, p)
		facts, err := tei.ReadFacts(filepath.Join(img.Rootfs, "usr/local/bin/router-87"))
		require.NoError(t, err)
		require.Equal(t, tei.LinkDynamic, facts.Linking)
		require.FileExists(t, filepath.Join(img.Rootfs, "usr/local/cuda-12.6/targets/aarch64-linux/lib/libcublas.so.12"),
			"the l4t-cuda runtime base has none; the runtime stage installed them")
		res := f.runOn(t, img, hostsByName["orin-jp6"], nil)
		require.Equal(t, 0, res.ExitCode, res.Stderr)
		require.Contains(t, res.Stdout, "linking: dynamic-linking")
	})
}

// `jetbake check` runs BuildKit's Dockerfile checks for each release and SM
// (and the runtime stage): warnings with file and line, exit 1 on errors.
// `build` runs the same checks while it converts the Dockerfile: the
// warnings are in its report, and a Dockerfile that cannot be built fails
// it, naming file and line.
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

	warnEdit := DockerfileEdit{Name: "warn", Old: "FROM ${TOOLCHAIN} AS router\n", New: "FROM ${TOOLCHAIN} as router\n"}
	warnLine := lineOf(t, f.env.RepoRoot, warnEdit.Old)
	warn := f.demoPlanFile(t, "warn.json", f.edited(t, warnEdit))
	warnFile := filepath.Join(f.work, "dockerfiles", "Dockerfile-jetson.warn")
	code, out, errOut = run(warn, "check", "--release", "jetpack7.2", "--format", "json")
	require.Equal(t, 0, code, out+errOut)
	var report struct {
		OK       bool                  `json:"ok"`
		Findings []dockercheck.Finding `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	require.True(t, report.OK)
	var sms []string
	for _, fd := range report.Findings {
		require.Equal(t, "FromAsCasing", fd.Rule)
		require.Equal(t, dockercheck.SeverityWarning, fd.Severity)
		require.Equal(t, warnFile, fd.File)
		require.Equal(t, warnLine, fd.Line)
		sms = append(sms, fd.SM)
	}
	require.Subset(t, sms, []string{"8.7", "11.0"}, "one per SM target: %+v", report.Findings)

	metadata := filepath.Join(f.work, "warn-metadata.json")
	code, _, errOut = run(warn, "build", "--release", "jetpack7.2", "--entrypoint-dir", f.entrypointDir, "--metadata-file", metadata)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "jetbake: check: "+warnFile+":"+itoa(warnLine)+": warning: FromAsCasing")
	var built imagebuild.Report
	data, err := os.ReadFile(metadata)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &built))
	require.Len(t, built.Releases, 1)
	for _, fd := range report.Findings {
		require.Contains(t, built.Releases[0].Findings, fd, "build finds what check finds")
	}

	brokenEdit := DockerfileEdit{Name: "broken", Old: "COPY router router\n", New: "COPY --chmod router router\n"}
	brokenLine := lineOf(t, f.env.RepoRoot, brokenEdit.Old)
	broken := f.demoPlanFile(t, "broken.json", f.edited(t, brokenEdit))
	brokenFile := filepath.Join(f.work, "dockerfiles", "Dockerfile-jetson.broken")
	code, out, errOut = run(broken, "check", "--release", "jetpack6.2")
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, out, brokenFile)
	require.Contains(t, out, ": error: ")

	code, _, errOut = run(broken, "build", "--release", "jetpack6.2", "--entrypoint-dir", f.entrypointDir)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, brokenFile+": dockerfile parse error on line "+itoa(brokenLine))
}

// lineOf is the line of the shipped Dockerfile that text starts.
func lineOf(t *testing.T, root, text string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ShippedDockerfile))
	require.NoError(t, err)
	i := strings.Index(string(data), text)
	require.GreaterOrEqual(t, i, 0)
	return strings.Count(string(data[:i]), "\n") + 1
}

func itoa(n int) string { return strconv.Itoa(n) }
