package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/dockercheck"
	"github.com/jetbake/jetbake/builder/internal/pyindex"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// appRepo is a user's repository of its own (WriteAppRepo); it returns
// the repository's folder.
func appRepo(t *testing.T, indexURL, repository string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, WriteAppRepo(t.Context(), dir, indexURL, repository))
	return dir
}

// appBuild runs `jetbake build --push` of the matrix at path and returns
// its exit code, standard error and report.
func (f *fixture) appBuild(t *testing.T, path string, args ...string) (int, string, imagebuild.Report) {
	t.Helper()
	metadata := filepath.Join(t.TempDir(), "build.json")
	start := time.Now()
	code, _, errOut := jetbake(t.Context(), append([]string{"build", "-f", path, "--addr", f.env.Daemon.Addr,
		"--mirror", "nvcr.io=" + f.env.Registry, "--push", "--entrypoint-dir", f.entrypointDir,
		"--metadata-file", metadata, "--progress", "plain"}, args...)...)
	t.Logf("jetbake build %s: exit %d in %s", filepath.Base(path), code, time.Since(start).Round(time.Second))
	var report imagebuild.Report
	data, err := os.ReadFile(metadata)
	require.NoError(t, err, errOut)
	require.NoError(t, json.Unmarshal(data, &report))
	return code, errOut, report
}

// variant writes a variant of the repository's matrix (AppVariant) and
// returns its path.
func variant(t *testing.T, repo, name, step string, replace bool) string {
	t.Helper()
	path, err := AppVariant(repo, name, step, replace)
	require.NoError(t, err)
	return path
}

// refusedVariant builds the JetPack 6.2 release of a variant of the
// repository's matrix (AppVariant) and requires it refused in jetbake's
// own sentence, with nothing exported and none of its tags; it returns the
// release's report.
func (f *fixture) refusedVariant(t *testing.T, repo, repository, name, step string, replace bool) imagebuild.ReleaseReport {
	t.Helper()
	path := variant(t, repo, name, step, replace)
	code, errOut, report := f.appBuild(t, path, "--release", "jetpack6.2")
	require.Equal(t, 1, code, errOut)
	rr := report.Releases[0]
	require.Equal(t, imagebuild.Failed, rr.Outcome)
	t.Logf("refusal: %s", rr.Error)
	require.NotContains(t, rr.Error, "failed to solve", "jetbake's sentence, not BuildKit's wrapping of it")
	require.Empty(t, rr.Digest, "nothing was exported")
	requireNoTags(t, report, repository+"-"+name)
	return rr
}

// requireNoTags requires that none of the releases' tags exist.
func requireNoTags(t *testing.T, report imagebuild.Report, repository string) {
	t.Helper()
	for _, rr := range report.Releases {
		require.Empty(t, rr.Tags, rr.Name)
		for _, tag := range []string{repository + ":0.1.0-" + rr.Name, repository + ":" + rr.Name} {
			_, err := remote.Head(mustRef(t, tag))
			require.Error(t, err, "%s must not be tagged", tag)
		}
	}
}

// TestApp builds an app from a repository of its own, as a user's would:
// what `jetbake init --app pytorch` writes, on the stand-in JetPack 6.2 and
// 7.0 PyTorch containers, with Debian's real pip installing OBLITERATUS
// from the local package index under QEMU. The image keeps the vendor
// torch, passes its own smoke run (init's --help), runs on an Orin and a
// Thor, and tells a wrong host why not; a step of the user's that changes
// a pin NGC set on a package that cannot break torch (tqdm) is a warning,
// and the build tags; a build whose pip shadows torch and torchvision,
// one whose app fails its smoke run, and one that installs bitsandbytes'
// SBSA wheel, are refused before any tag.
func TestApp(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	kit := f.env.Kit()
	index, err := StartAppBed(ctx, kit, f.env.Registry)
	require.NoError(t, err)
	t.Cleanup(func() { _ = index.Close() })
	repository := f.env.Registry + "/" + AppRepository
	repo := appRepo(t, index.URL, repository)

	t.Run("a build whose pip shadows the vendor torch and torchvision is refused before any tag", func(t *testing.T) {
		rr := f.refusedVariant(t, repo, repository, AppShadow, AppShadowStep, true)
		for _, want := range []string{"torch", "2.8.0a0+5228986c39.nv25.06", standin.SitePackages + "/torch-2.8.0a0+5228986c39.nv25.06.dist-info",
			"2.9.0", "/opt/venv/lib/python3.11/site-packages/torch-2.9.0.dist-info", "--no-deps"} {
			require.Contains(t, rr.Error, want)
		}
		// torchvision is built against torch: PyPI's, which the helper
		// pulled with PyPI's torch, refuses the build in a sentence of its own.
		require.Contains(t, rr.Error, "the base's torchvision "+standin.VendorTorchVision+" at "+standin.SitePackages+"/torchvision-"+
			standin.VendorTorchVision+".dist-info is shadowed by torchvision "+pyindex.PyPITorchVision+" at /opt/venv/lib/python3.11/site-packages/torchvision-"+
			pyindex.PyPITorchVision+".dist-info, which is in the venv /opt/venv, whose python imports it first: install the app with --no-deps or with "+
			"PIP_CONSTRAINT=/etc/pip/constraint.txt (it pins torchvision=="+standin.VendorTorchVision+"), and keep torchvision out of the lock export "+
			"(uv export --no-emit-package torchvision)")
		require.NotContains(t, rr.Error, "tqdm", "the helper's tqdm is the base's: no pin changed")
	})

	t.Run("an app whose smoke run fails is refused before any tag", func(t *testing.T) {
		rr := f.refusedVariant(t, repo, repository, AppBroken, AppBrokenStep, false)
		require.Contains(t, rr.Error, "the app's smoke run, /opt/venv/bin/obliteratus --help (exit 1), fails on stage app of Dockerfile."+AppBroken)
		require.Contains(t, rr.Error, "No module named 'obliteratus.cli'")
	})

	t.Run("bitsandbytes' SBSA wheel is refused by the audit for Orin", func(t *testing.T) {
		rr := f.refusedVariant(t, repo, repository, AppBitsandbytes, AppBitsandbytesStep, false)
		require.Contains(t, rr.Error, "audit: /opt/venv/lib/python3.11/site-packages/"+pyindex.BitsandbytesLib+
			" holds sm_75 cubin and sm_80 cubin and sm_90 cubin and compute_90 PTX in one of its CUDA fat binaries and no code for Jetson Orin, SM 8.7")
		require.Len(t, rr.Audit, 1)
		require.Equal(t, "no code", rr.Audit[0].Verdict)
	})

	// The user's own step after init's: a newer tqdm than NGC pins. It
	// cannot break torch: a warning on each release, and the build goes on
	// to tag both.
	dockerfile := filepath.Join(repo, "Dockerfile")
	data, err := os.ReadFile(dockerfile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dockerfile, append(data, []byte(AppTqdmStep+"\n")...), 0o644))
	code, errOut, report := f.appBuild(t, filepath.Join(repo, "matrix.json"))
	require.Equal(t, 0, code, errOut)
	require.Len(t, report.Releases, 2)
	for _, rr := range report.Releases {
		require.Contains(t, errOut, "jetbake: check: /etc/pip/constraint.txt: warning: FrameworkPin: the base's tqdm "+standin.VendorTqdm+" at "+
			standin.SitePackages+"/tqdm-"+standin.VendorTqdm+".dist-info is shadowed by tqdm "+pyindex.Tqdm+" at /opt/venv/lib/python3.11/site-packages/tqdm-"+
			pyindex.Tqdm+".dist-info, which is in the venv /opt/venv, whose python imports it first: the base's /etc/pip/constraint.txt pins it (tqdm=="+
			standin.VendorTqdm+"), but it is neither torch nor built against torch's libraries, so the build goes on; install the app with -c "+
			"/etc/pip/constraint.txt to keep the version NVIDIA tested with the container (release "+rr.Name+")")
		require.True(t, slices.ContainsFunc(rr.Findings, func(f dockercheck.Finding) bool { return f.Rule == "FrameworkPin" }), "%s: %v", rr.Name, rr.Findings)
		require.NotEmpty(t, rr.Tags, "a warning tags the release: %s", rr.Name)
	}
	for _, rr := range report.Releases {
		require.Equal(t, imagebuild.Succeeded, rr.Outcome, rr.Error)
		require.Equal(t, matrix.KindApp, rr.Kind)
		require.Equal(t, matrix.KindApp, rr.Annotations[matrix.KeyKind])
		require.Equal(t, "app", rr.Bases[0].Role)
		require.NotEmpty(t, rr.Bases[0].Digest)
		require.NotEmpty(t, rr.Bases[0].ReadFrom, "the base's CUDA marker files were read")
	}
	require.Equal(t, []string{"tegra", "sbsa"}, []string{report.Releases[0].Bases[0].Flavour, report.Releases[1].Bases[0].Flavour})
	require.True(t, strings.HasPrefix(report.Releases[0].Bases[0].CUDA, "12.9"), report.Releases[0].Bases[0].CUDA)
	require.Equal(t, "8.7", report.Releases[0].Annotations[matrix.KeySMTargets])
	require.Equal(t, "8.7=runs", report.Releases[0].Annotations[matrix.KeyAudit])
	// The JetPack 7 torch holds a module with Hopper's sm_90 code only, as
	// NVIDIA's builds do: partial on Thor, which does not refuse the build.
	require.Equal(t, "11.0=partial", report.Releases[1].Annotations[matrix.KeyAudit])
	require.Equal(t, "partial", report.Releases[1].Audit[0].Verdict)
	t.Logf("Thor's torch: %+v", report.Releases[1].Audit[0].Files[0])
	require.Equal(t, standin.SitePackages+"/torch/lib/libtorch_cuda.so", report.Releases[0].Audit[0].Files[0].Path)

	hosts := f.hosts(t, "app-hosts")
	runner, err := runimage.NewRunner(filepath.Join(f.work, "app-runs"))
	require.NoError(t, err)
	unpacked := map[string]standin.Unpacked{}
	for _, rel := range []string{"jetpack6.2", "jetpack7.0"} {
		img := pullArm64(t, repository+":0.1.0-"+rel)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		dir := filepath.Join(f.work, "app-"+rel)
		require.NoError(t, runimage.Unpack(img, dir))
		unpacked[rel] = standin.Unpacked{Rootfs: dir, Config: cf}
	}

	t.Run("the image's config and image.json", func(t *testing.T) {
		u := unpacked["jetpack7.0"]
		require.Equal(t, []string{imagebuild.EntrypointPath}, u.Config.Config.Entrypoint)
		require.Equal(t, []string{"--help"}, u.Config.Config.Cmd)
		require.Equal(t, matrix.KindApp, u.Config.Config.Labels[matrix.KeyKind])
		require.True(t, slices.ContainsFunc(u.Config.Config.Env, func(e string) bool { return strings.HasPrefix(e, "PATH=/opt/venv/bin:") }),
			"the stage's ENV: %v", u.Config.Config.Env)
		data, err := os.ReadFile(filepath.Join(u.Rootfs, "etc/jetbake/image.json"))
		require.NoError(t, err)
		img, err := imagespec.Parse(data)
		require.NoError(t, err)
		require.Equal(t, imagespec.KindApp, img.Kind)
		require.Equal(t, imagespec.SchemaVersionApp, img.SchemaVersion)
		require.Equal(t, []string{"/opt/venv/bin/obliteratus"}, img.Command)
		require.Equal(t, "pytorch", img.Check)
		require.Equal(t, []imagespec.Target{{SM: "11.0", Path: "/opt/venv/bin/obliteratus"}}, img.Targets)
	})

	t.Run("the image keeps the vendor torch", func(t *testing.T) {
		u := unpacked["jetpack6.2"]
		cf := *u.Config
		cf.Config.Entrypoint = []string{"/opt/venv/bin/python", "-c", "import torch; print('TORCH', torch.__version__, torch.__file__)"}
		res, err := runner.Run(ctx, u.Rootfs, &cf, hosts["orin-jp6"], []string{})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, res.Stderr)
		require.Contains(t, res.Stdout, "TORCH 2.8.0a0+5228986c39.nv25.06 "+standin.SitePackages+"/torch/__init__.py")
	})

	// The demo's rows: the app's gate on an Orin and a Thor, and the 6.2
	// image refused on a Thor with the tag that would run there.
	images := map[string]Unpacked{}
	for rel, u := range unpacked {
		images[AppReleasePrefix+rel] = Unpacked{Rootfs: u.Rootfs, Config: u.Config}
	}
	t.Run("through NVIDIA's container runtime", func(t *testing.T) {
		tags := map[string]string{}
		for rel := range unpacked {
			tags[AppReleasePrefix+rel] = repository + ":0.1.0-" + rel
		}
		outcomes, err := RunAppNVIDIARuntime(ctx, f.env, filepath.Join(f.work, "app-nv"), tags)
		require.NoError(t, err)
		require.Len(t, outcomes, 4)
		for _, o := range outcomes {
			t.Logf("%-18s %-12s %-13s %s", o.Release, o.Host, o.RuntimeName(), o.Summary())
			require.Truef(t, o.OK(), "docker run %s on %s: %s\nstdout: %s\nstderr: %s", o.Release, o.Host, o.Summary(), o.Result.Stdout, o.Result.Stderr)
		}
		require.Equal(t, "requirements not met: unsatisfied condition: cuda>=12.9 (cuda=12.6)", outcomes[3].WantRefusal, "the runtime's own refusal")
	})

	for _, o := range RunChecks(ctx, runner, images, hosts, AppChecks(repository)) {
		t.Run(o.Release+" on "+o.Host, func(t *testing.T) {
			require.NoError(t, o.Err)
			t.Logf("%s", o.Summary())
			require.True(t, o.OK(), "stdout: %s\nstderr: %s", o.Result.Stdout, o.Result.Stderr)
			if !o.WantApp {
				require.Contains(t, o.Result.Stderr, "jetbake")
				require.NotContains(t, o.Result.Stdout, "cuda available", "the app never started")
			}
		})
	}
}
