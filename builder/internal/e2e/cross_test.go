package e2e

import (
	"bytes"
	"debug/elf"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/builder/internal/runimage"
)

// checkCross builds JetPack 6.2 (Tegra, SM 8.7) and 7.0 (SBSA, 11.0)
// through the cross path on the test bed's amd64 buildkitd: the router
// stage runs in the stand-in cross build bases on linux/amd64, not under
// QEMU, and writes aarch64 routers with the DT_NEEDED of the native
// path's, which pass the smoke run under QEMU, the audit and the NEEDED
// check, and run on the host views. Then JetPack 6.2 with a cross base
// that holds the build machine's OpenSSL: the real aarch64 linker refuses
// it, and jetbake says which release, which base and the fix, with no tag.
func checkCross(t *testing.T, f *fixture) {
	ctx := t.Context()
	path := filepath.Join(f.work, "cross.json")
	require.NoError(t, WriteRecipeMatrix(f.env.RepoRoot, f.env.Registry, path, func(m map[string]any) { keepReleases(m, "jetpack6.2", "jetpack7.0") }))
	p, err := LoadPlan(path, AllowStandin(f.env.RepoRoot))
	require.NoError(t, err)
	f.pushBases(t, p, nil)
	// The shipped matrix's recipe, built for real: the stand-in devel
	// images and the test bed's repositories, only their addresses in
	// build_args.
	bed, p, err := f.env.StartRecipeBed(ctx, path, p, nil)
	require.NoError(t, err)
	defer bed.Close()
	want := map[string]string{"jetpack6.2": "nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04", "jetpack7.0": "nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04"}
	for _, rel := range p.Releases {
		require.Equal(t, want[rel.Name], rel.CrossBuildBase, "the table's devel image, through --mirror")
		require.Equal(t, "jetbake", rel.CrossBuildRecipe.Dockerfile)
	}
	var log bytes.Buffer
	report, err := f.build(ctx, p, imagebuild.WithPush(true), imagebuild.WithProgress("plain", &log))
	require.NoError(t, err, log.String())
	// The recipe's lines ran on the build platform: apt installed the
	// cross package, the cross compiler of each line's Ubuntu and the
	// target's OpenSSL from the test bed's repositories.
	for _, line := range []string{"Setting up cuda-cross-aarch64-12-6", "Setting up cuda-cross-sbsa-13-0", "Setting up gcc-11-aarch64-linux-gnu",
		"Setting up gcc-13-aarch64-linux-gnu", "Setting up libssl-dev:arm64"} {
		require.Contains(t, log.String(), line)
	}
	tags := map[string]string{}
	needed := map[string][]string{"jetpack6.2/router-87": crossNeeds("libcudart.so.12"), "jetpack7.0/router-110": crossNeeds("libcudart.so.13")}
	for _, rr := range report.Releases {
		require.Equal(t, imagebuild.Succeeded, rr.Outcome, rr.Error)
		require.Equal(t, "cross", rr.BuildPath, rr.Name)
		require.Contains(t, rr.CrossBuildBase, "the base jetbake's Dockerfile-cross-base builds FROM "+f.env.Registry+"/nvidia/cuda:", rr.Name)
		require.Equal(t, "linux/amd64", rr.BuildPlatform)
		require.NotNil(t, rr.Emulated)
		require.False(t, *rr.Emulated, "the routers compiled on linux/amd64")
		require.Len(t, rr.Binaries, 1)
		for _, b := range rr.Binaries {
			require.Equal(t, needed[rr.Name+"/"+b.Binary], b.Needed, "the native path's DT_NEEDED")
			require.Equal(t, "/lib/ld-linux-aarch64.so.1", b.Interpreter)
		}
		require.Len(t, rr.Audit, 1)
		require.Equal(t, "runs", rr.Audit[0].Verdict, rr.Name)
		rel, _ := p.Release(rr.Name)
		tags[rr.Name] = rel.Tags[0]
	}
	for _, row := range report.Timings.Releases {
		require.Equal(t, "cross", row.BuildPath, row.Name)
		require.False(t, row.Emulated)
	}
	// rustup installs the toolchain of the machine the stage runs on
	// (uname -m): x86_64, not QEMU's aarch64.
	require.Contains(t, log.String(), "1.92.0-x86_64-unknown-linux-gnu installed")
	require.NotContains(t, log.String(), "1.92.0-aarch64-unknown-linux-gnu installed")
	require.Contains(t, log.String(), "installing component 'rust-std' for 'aarch64-unknown-linux-gnu'")
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "build path on") {
			t.Log(line)
		}
	}

	images, err := Images(ctx, filepath.Join(f.work, "rootfs-cross"), tags)
	require.NoError(t, err)
	for rel, bin := range map[string]string{"jetpack6.2": "router-87", "jetpack7.0": "router-110"} {
		ef, err := elf.Open(filepath.Join(images[rel].Rootfs, "usr/local/bin", bin))
		require.NoError(t, err)
		require.Equal(t, elf.EM_AARCH64, ef.Machine, rel)
		require.NoError(t, ef.Close())
	}
	// JetPack 6.2's cross base carries NVIDIA's nvcc 11.8: the router's
	// kernels are nvcc's, as cuobjdump lists them (the oracle), one module
	// of sm_87 cubin and PTX for each of the stand-in candle-flash-attn's
	// two kernel files; JetPack 7.0's (CUDA 13, sm_110) keeps the
	// stand-in nvcc, and the template's module written for sm_110.
	parts, err := nvreal.Find(f.env.RepoRoot)
	require.NoError(t, err)
	for rel, bin := range map[string]string{"jetpack6.2": "router-87", "jetpack7.0": "router-110"} {
		cmp, err := parts.Compare(ctx, filepath.Join(images[rel].Rootfs, "usr/local/bin", bin), t.TempDir())
		require.NoError(t, err)
		require.True(t, cmp.Agrees(), "%s: jetbake %s; cuobjdump %s; %v", rel, cmp.Jetbake, cmp.Cuobjdump, cmp.ModuleFaults)
		t.Logf("%s/%s, as cuobjdump lists it: %s", rel, bin, cmp.Cuobjdump)
		if rel == "jetpack6.2" {
			require.GreaterOrEqual(t, len(cmp.Cuobjdump), 4)
			require.Equal(t, "sm_87 cubin, sm_87 PTX, sm_87 cubin, sm_87 PTX", cmp.Cuobjdump[:4].String(), "nvcc's code of each kernel file")
		} else {
			require.Contains(t, cmp.Cuobjdump, nvreal.Code{Kind: "cubin", SM: "sm_110"}, "the template's module, written for the SM")
		}
	}
	runner, err := runimage.NewRunner(filepath.Join(f.work, "bundles-cross"))
	require.NoError(t, err)
	var checks []Check
	for _, c := range append(DefaultChecks(), ReleaseChecks()...) {
		if _, ok := tags[c.Release]; ok && !c.Model {
			checks = append(checks, c)
		}
	}
	require.NotEmpty(t, checks)
	for _, o := range RunChecks(ctx, runner, images, f.hosts(t, "hosts-cross"), checks) {
		require.Truef(t, o.OK(), "%s on %s: %s\nstdout: %s\nstderr: %s", o.Release, o.Host, o.Summary(), o.Result.Stdout, o.Result.Stderr)
	}

	t.Run("nvcc asked for an SM its CUDA cannot target is refused, with no tag", func(t *testing.T) {
		path := filepath.Join(f.work, "cross-sm110.json")
		require.NoError(t, WriteCrossThorSMMatrix(f.env.RepoRoot, f.env.Registry, filepath.Join(f.work, "dockerfiles"), path))
		thor, err := LoadPlan(path, AllowStandin(f.env.RepoRoot))
		require.NoError(t, err)
		rel := thor.Releases[0]
		f.pushBases(t, thor, nil)
		refused, err := f.build(ctx, thor, imagebuild.WithPush(true))
		require.Error(t, err)
		rr := refused.Releases[0]
		require.Equal(t, imagebuild.Failed, rr.Outcome)
		t.Logf("refusal: %s", rr.Error)
		require.True(t, strings.HasPrefix(rr.Error, "release "+CrossThorSMRelease+": the CUDA compiler of its build base cannot target SM 11.0 "+
			"(it targets sm_35 to sm_90): sm_110 needs CUDA >= 13.0"), "jetbake's sentence first: %s", rr.Error)
		require.Contains(t, rr.Error, "compile each router for the CUDA_COMPUTE_CAP jetbake passes, not a fixed SM")
		require.Contains(t, rr.Error, "nvcc cannot target gpu arch 110. Available nvcc targets are [35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90].",
			"bindgen_cuda's words over NVIDIA's nvcc 11.8's own list")
		require.Empty(t, rr.Digest)
		for _, tag := range rel.Tags {
			_, err := remote.Head(mustRef(t, tag))
			require.Error(t, err, "tag %s must not exist", tag)
		}
	})

	t.Run("a cross build base with the build machine's OpenSSL is refused, with no tag", func(t *testing.T) {
		path := filepath.Join(f.work, "cross-host-openssl.json")
		require.NoError(t, WriteCrossHostSSLMatrix(f.env.RepoRoot, f.env.Registry, path))
		wrong, err := LoadPlan(path, AllowStandin(f.env.RepoRoot))
		require.NoError(t, err)
		rel := wrong.Releases[0]
		require.Equal(t, HostSSLCrossBaseRef(f.env.Registry), rel.CrossBuildBase)
		require.NoError(t, f.env.PushHostSSLCrossBases(ctx, wrong))
		refused, err := f.build(ctx, wrong, imagebuild.WithPush(true))
		require.Error(t, err)
		rr := refused.Releases[0]
		require.Equal(t, imagebuild.Failed, rr.Outcome)
		t.Logf("refusal: %s", rr.Error)
		require.True(t, strings.HasPrefix(rr.Error, "release "+CrossHostSSLRelease+": the cross build base "+rel.CrossBuildBase+
			" gave the aarch64 linker a file of the build machine's architecture, /usr/lib/x86_64-linux-gnu/libssl.so: "+
			"install the target's package of libssl in that image (the :arm64 one, e.g. libssl-dev:arm64 for OpenSSL, not libssl-dev), "+
			`or build the release under QEMU (build_path "qemu")`), "jetbake's sentence first: %s", rr.Error)
		require.Contains(t, rr.Error, "skipping incompatible /usr/lib/x86_64-linux-gnu/libssl.so when searching for -lssl", "the real linker's words")
		require.Empty(t, rr.Digest)
		require.NotEmpty(t, rel.Tags)
		for _, tag := range rel.Tags {
			_, err := remote.Head(mustRef(t, tag))
			require.Error(t, err, "tag %s must not exist", tag)
		}
	})
}

// crossNeeds is the DT_NEEDED of a candle-cuda router on Ubuntu 22.04 or
// 24.04 (OpenSSL 3) with libcudart of the CUDA major, as on the native
// path (TestEndToEnd).
func crossNeeds(cudart string) []string {
	return []string{"libcuda.so.1", cudart, "libssl.so.3", "libcrypto.so.3", "libgcc_s.so.1", "libstdc++.so.6", "libc.so.6"}
}
