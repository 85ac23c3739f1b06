package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/nvreal"
	"github.com/jetbake/jetbake/builder/plan"
)

// printRecipeBed says where the demo's cross build bases come from: the
// shipped matrix's recipe, built by jetbake, with only its repositories'
// addresses swapped for the test bed's.
func printRecipeBed(out io.Writer, p *plan.Plan) {
	fmt.Fprintln(out, "==> the shipped matrix names jetbake's cross build recipe (Dockerfile-cross-base) for JetPack 6 and 7: jetbake builds each base on this linux/amd64 machine "+
		"FROM the table's NVIDIA devel image (its stand-in: a real Debian root with NVIDIA's nvcc 11.8 for CUDA 12.6), apt installing from the test bed's signed repositories on 127.0.0.1 "+
		"(Debian's real gcc-11/13-aarch64-linux-gnu and libssl-dev:arm64, a cuda-cross package laid out as NVIDIA's), only their addresses in cross_build_base.build_args")
	for _, rel := range p.Releases {
		if rc := rel.CrossBuildRecipe; rc != nil {
			fmt.Fprintf(out, "    %s: FROM %s, %s, GCC %s, %s\n", rel.Name, rel.CrossBuildBase, rc.Args["CUDA_CROSS_PACKAGE"], rc.Args["CROSS_GCC"], rc.Args["UBUNTU_PORTS"])
		} else {
			fmt.Fprintf(out, "    %s: no cross build recipe (JetPack %s): QEMU\n", rel.Name, rel.JetPack)
		}
	}
}

// requireCross fails unless every release of report with a cross build
// recipe took the cross path on linux/amd64 (and one without it QEMU), and
// prints each release's path.
func requireCross(out io.Writer, report *imagebuild.Report, p *plan.Plan) error {
	fmt.Fprintln(out, "==> the router stage's path of each release (--metadata-file: releases[].build_path, cross_build_base)")
	for _, rr := range report.Releases {
		emulated := rr.Emulated != nil && *rr.Emulated
		fmt.Fprintf(out, "    %s: %s on %s, emulated %v", rr.Name, rr.BuildPath, rr.BuildPlatform, emulated)
		if rr.CrossBuildBase != "" {
			fmt.Fprintf(out, ", in %s", rr.CrossBuildBase)
		}
		fmt.Fprintln(out)
		rel, _ := p.Release(rr.Name)
		want := "cross"
		if rel.CrossBuildRecipe == nil {
			want = "qemu"
		}
		if rr.BuildPath != want || emulated != (want == "qemu") {
			return fmt.Errorf("release %s took the %s path (emulated %v), not the %s path", rr.Name, rr.BuildPath, emulated, want)
		}
	}
	return nil
}

// crossRefused builds CrossHostSSLRelease, whose cross build base holds
// the build machine's OpenSSL: the real aarch64 linker must refuse it and
// jetbake the release, before any tag, with its sentence, which it returns.
func crossRefused(ctx context.Context, root string, env *e2e.Env, work, progress string, out io.Writer) (string, error) {
	release := e2e.CrossHostSSLRelease
	variantMatrix := filepath.Join(work, "matrix-"+release+".json")
	if err := e2e.WriteCrossHostSSLMatrix(root, env.Registry, variantMatrix); err != nil {
		return "", err
	}
	p, err := e2e.LoadPlan(variantMatrix, e2e.AllowStandin(root))
	if err != nil {
		return "", err
	}
	if err := env.PushHostSSLCrossBases(ctx, p); err != nil {
		return "", err
	}
	metadata := filepath.Join(work, "build-"+release+".json")
	fmt.Fprintf(out, "==> jetbake build of %s (a cross build base with libssl-dev, the build machine's OpenSSL, in place of libssl-dev:arm64): the aarch64 linker must refuse it\n", release)
	if err := jetbakeBuild(ctx, root, env.Registry, variantMatrix, metadata, progress); err == nil {
		return "", fmt.Errorf("jetbake build of %s succeeded: the cross link took the x86_64 OpenSSL", release)
	}
	r, err := readReport(metadata)
	if err != nil {
		return "", err
	}
	const end = `(build_path "qemu")`
	prefix := "release " + release + ": the cross build base " + e2e.HostSSLCrossBaseRef(env.Registry)
	if len(r.Releases) != 1 || r.Releases[0].Outcome != imagebuild.Failed || r.Releases[0].Digest != "" ||
		!strings.HasPrefix(r.Releases[0].Error, prefix) || !strings.Contains(r.Releases[0].Error, end) {
		return "", fmt.Errorf("jetbake build of %s failed, but not with jetbake's sentence on the cross link (%q...): %+v", release, prefix, r.Releases)
	}
	sentence, _, _ := strings.Cut(r.Releases[0].Error, end)
	return sentence + end, nil
}

// printCompilerOracle holds the routers the cross path built against
// NVIDIA's cuobjdump (package nvreal's oracle): jetbake's fat-binary
// reader, which the audit uses, must list each one's cubins and PTX as
// cuobjdump does. The Tegra releases' kernels come from NVIDIA's nvcc 11.8
// in their cross bases (an sm_XX cubin and PTX a kernel file, first); the
// SBSA ones' from the stand-in nvcc.
func printCompilerOracle(ctx context.Context, out io.Writer, root, work string, report *imagebuild.Report, images map[string]e2e.Unpacked) error {
	parts, err := nvreal.Find(root)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "==> the routers' CUDA code as NVIDIA's cuobjdump lists it, beside jetbake's reader (the Tegra releases' kernels are NVIDIA's nvcc 11.8's)")
	for _, rr := range report.Releases {
		img, ok := images[rr.Name]
		if !ok || rr.BuildPath != "cross" {
			continue
		}
		for _, b := range rr.Binaries {
			scratch, err := os.MkdirTemp(work, "oracle-")
			if err != nil {
				return err
			}
			cmp, err := parts.Compare(ctx, filepath.Join(img.Rootfs, "usr/local/bin", b.Binary), scratch)
			if err != nil {
				return fmt.Errorf("cuobjdump on %s/%s: %w", rr.Name, b.Binary, err)
			}
			if !cmp.Agrees() {
				return fmt.Errorf("%s/%s: jetbake reads %s, cuobjdump lists %s (%v)", rr.Name, b.Binary, cmp.Jetbake, cmp.Cuobjdump, cmp.ModuleFaults)
			}
			head := cmp.Cuobjdump
			if len(head) > 4 {
				head = head[:4]
			}
			fmt.Fprintf(out, "    %s/%s: %s, ... (%d entries in %d fat binaries): cuobjdump and jetbake agree\n",
				rr.Name, b.Binary, head, len(cmp.Cuobjdump), cmp.Modules)
		}
	}
	return nil
}
