package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/e2e"
)

// crossNote says where the demo's cross build bases come from.
const crossNote = "==> the shipped matrix names no cross_build_base (none is published): the demo gives each release the stand-in cross build base of its line " +
	"(%s/jetbake/cross-build-base:cuda<CUDA>-<targets folder>-ubuntu<UBUNTU>: Debian's real aarch64 cross gcc, linux/amd64), as a user adds theirs, " +
	"so that the routers compile on this linux/amd64 machine and only the smoke runs use QEMU\n"

// requireCross fails unless every release of report took the cross path on
// linux/amd64, and prints each release's path.
func requireCross(out io.Writer, report *imagebuild.Report) error {
	fmt.Fprintln(out, "==> the router stage's path of each release (--metadata-file: releases[].build_path)")
	for _, rr := range report.Releases {
		emulated := rr.Emulated != nil && *rr.Emulated
		fmt.Fprintf(out, "    %s: %s on %s, emulated %v\n", rr.Name, rr.BuildPath, rr.BuildPlatform, emulated)
		if rr.BuildPath != "cross" || emulated {
			return fmt.Errorf("release %s took the %s path (emulated %v), not the cross path", rr.Name, rr.BuildPath, emulated)
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
