// Command demo is `make demo`: on a machine with no GPU and no internet it
// starts a registry on 127.0.0.1, pushes stand-ins for NVIDIA's bases (with
// the stand-in Rust toolchain in the build bases) and a stand-in cross
// build base per line (amd64, Debian's aarch64 cross gcc), builds the real
// matrix, each release given its cross base, and a fictional JetPack 7.3
// that jetbake's table lacks, declared in a facts file beside the matrix
// (built under QEMU: the cross recipe knows no CUDA 13.3), with the shipped
// Dockerfile-jetson on a TEI-shaped source with `jetbake build` through
// the cross path (the routers compile on this amd64 machine), and a
// release whose cross base holds the build machine's OpenSSL, which the
// aarch64 linker refuses; then it runs the images on fake Jetsons, with runc and through
// NVIDIA's container runtime (`docker run --runtime nvidia`), and prints which
// binary each one chose, or why none, and the runtime that ran it. Then it
// builds a PyTorch app from a repository of its own (what `jetbake init --app
// pytorch` writes) with a real pip on stand-in PyTorch bases, and the two
// builds jetbake refuses (pip shadowing the vendor torch, bitsandbytes'
// SBSA wheel), and runs the app on an Orin, a Thor and a wrong host. Everything
// it starts it stops; bin/ keeps the build cache for next time.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/builder/internal/standin"
)

func main() {
	progress := flag.String("progress", "auto", "progress of the build: auto, tty, plain, rawjson or quiet")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, *progress, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, progress string, out io.Writer) error {
	root, err := e2e.FindRepoRoot()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "jetbake-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	env, err := e2e.Start(root, work)
	if err != nil {
		return err
	}
	defer env.Close()
	if err := env.CheckPrerequisites(); err != nil {
		return err
	}
	fmt.Fprintf(out, "==> registry on %s\n", env.Registry)
	matrixPath := filepath.Join(work, "matrix.json")
	// The shipped releases and a JetPack 7.3 on facts the matrix declares.
	declared, err := e2e.WithDeclaredJetPack(work)
	if err != nil {
		return err
	}
	if err := e2e.WriteRecipeMatrix(root, env.Registry, matrixPath, declared); err != nil {
		return err
	}
	p, err := e2e.LoadPlan(matrixPath, e2e.AllowStandin(root))
	if err != nil {
		return err
	}
	pushed, err := env.PushStandins(ctx, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "==> pushed %d stand-in bases (%s, ...)\n", len(pushed), pushed[0])
	// The repositories keep last run's address when it is free, so that
	// the kept buildkitd (bin/state) finds the recipe's steps in its cache.
	addrFile := filepath.Join(root, "bin", "state", "recipe-repos.addr")
	var bedOpts []standin.RecipeBedOption
	if addr, err := os.ReadFile(addrFile); err == nil {
		bedOpts = append(bedOpts, standin.WithRepoAddr(strings.TrimSpace(string(addr))))
	}
	bed, p, err := env.StartRecipeBed(ctx, matrixPath, p, nil, bedOpts...)
	if err != nil {
		return err
	}
	defer bed.Close()
	if err := os.MkdirAll(filepath.Dir(addrFile), 0o755); err == nil {
		_ = os.WriteFile(addrFile, []byte(bed.Addr()+"\n"), 0o644)
	}
	printRecipeBed(out, p)
	if err := printDeclared(ctx, out, root, work, matrixPath); err != nil {
		return err
	}
	metadata := filepath.Join(work, "build.json")
	fmt.Fprintf(out, "==> jetbake build of %d releases from the shipped %s on %s\n", len(p.Releases), e2e.ShippedDockerfile, e2e.TEISource)
	if err := jetbakeBuild(ctx, root, env.Registry, matrixPath, metadata, progress); err != nil {
		return err
	}
	report, err := readReport(metadata)
	if err != nil {
		return err
	}
	if err := requireCross(out, report, p); err != nil {
		return err
	}
	printLibraries(out, report)
	if err := printAudits(ctx, out, root, report); err != nil {
		return err
	}
	if err := printFleet(ctx, out, root, work, metadata, report); err != nil {
		return err
	}
	// The Orin image built from Dockerfile-jetson as a user might change it:
	// without jetson-compute-cap.sh, as upstream's Dockerfile builds it (TEI's
	// refusal on an Orin), and with TEI's .cargo folder copied
	// (target-cpu=native: SIGILL on an Orin).
	for _, v := range []struct {
		release, what string
		variant       func(root, dir string) (func(map[string]any), error)
	}{
		{release: e2e.NoComputeCapRelease, what: "Dockerfile-jetson without jetson-compute-cap.sh", variant: e2e.OnlyNoComputeCap},
		{release: e2e.NativeCPURelease, what: "Dockerfile-jetson copying TEI's .cargo (target-cpu=native)", variant: e2e.OnlyNativeCPU},
		{release: e2e.NoFlashGateRelease, what: "Dockerfile-jetson leaving TEI's flash_attn.rs as it is", variant: e2e.OnlyNoFlashGate},
	} {
		mutate, err := v.variant(root, filepath.Join(work, "dockerfiles"))
		if err != nil {
			return err
		}
		variantMatrix := filepath.Join(work, "matrix-"+v.release+".json")
		if err := e2e.WriteDemoMatrix(root, env.Registry, variantMatrix, mutate); err != nil {
			return err
		}
		variantMetadata := filepath.Join(work, "build-"+v.release+".json")
		fmt.Fprintf(out, "==> jetbake build of %s (%s)\n", v.release, v.what)
		if err := jetbakeBuild(ctx, root, env.Registry, variantMatrix, variantMetadata, progress); err != nil {
			return err
		}
		variant, err := readReport(variantMetadata)
		if err != nil {
			return err
		}
		report.Releases = append(report.Releases, variant.Releases...)
	}
	refused, err := refusedBuild(ctx, root, env, work, progress, out)
	if err != nil {
		return err
	}
	crossRefusal, err := crossRefused(ctx, root, env, work, progress, out)
	if err != nil {
		return err
	}
	app, err := appBuilds(ctx, root, env, work, progress, out)
	if err != nil {
		return err
	}
	return runChecks(ctx, env, work, report, refusals{audit: refused, cross: crossRefusal}, app, out)
}

// refusals are the sentences of the router builds jetbake refused.
type refusals struct {
	// audit is the audit's (a router compiled for another SM), cross
	// jetbake's on the cross link that met the build machine's OpenSSL.
	audit, cross string
}

// refusedBuild builds the Orin image from Dockerfile-jetson compiling the
// router for sm_80: the build-time audit must refuse it, before any tag,
// with its sentence, which it returns.
func refusedBuild(ctx context.Context, root string, env *e2e.Env, work, progress string, out io.Writer) (string, error) {
	mutate, err := e2e.OnlyWrongComputeCap(root, filepath.Join(work, "dockerfiles"))
	if err != nil {
		return "", err
	}
	release := e2e.WrongComputeCapRelease
	variantMatrix := filepath.Join(work, "matrix-"+release+".json")
	if err := e2e.WriteDemoMatrix(root, env.Registry, variantMatrix, mutate); err != nil {
		return "", err
	}
	metadata := filepath.Join(work, "build-"+release+".json")
	fmt.Fprintf(out, "==> jetbake build of %s (Dockerfile-jetson compiling the router with CUDA_COMPUTE_CAP=80 for Orin's 8.7): the audit must refuse it\n", release)
	if err := jetbakeBuild(ctx, root, env.Registry, variantMatrix, metadata, progress); err == nil {
		return "", fmt.Errorf("jetbake build of %s succeeded: the audit did not refuse router-87 compiled for sm_80", release)
	}
	r, err := readReport(metadata)
	if err != nil {
		return "", err
	}
	if len(r.Releases) != 1 || r.Releases[0].Outcome != imagebuild.Failed || !strings.Contains(r.Releases[0].Error, e2e.AuditRefusalOfWrongSM) {
		return "", fmt.Errorf("jetbake build of %s failed, but not with the audit's sentence (%q): %+v", release, e2e.AuditRefusalOfWrongSM, r.Releases)
	}
	// From the audit's own words: BuildKit puts "failed to solve: " before them.
	msg := r.Releases[0].Error
	sentence, _, _ := strings.Cut(msg[strings.Index(msg, "audit: "):], "\n")
	return sentence, nil
}

// jetbakeBuild runs bin/jetbake build as a user would, with the cache kept in bin/state.
func jetbakeBuild(ctx context.Context, root, registry, matrixPath, metadata, progress string) error {
	revision, epoch := e2e.GitSource(root)
	// The demo matrix is in a temporary folder; it reads the checkout's
	// stand-in router only because the flag grants it, as a user would.
	args := append([]string{"build", "--matrix", matrixPath}, e2e.AllowStandinFlags(root)...)
	return jetbakeRun(ctx, root, root, append(args,
		"--mirror", "nvcr.io="+registry, "--push",
		"--revision", revision, "--source-date-epoch", epoch,
		"--progress", progress, "--metadata-file", metadata,
		"--state-dir", filepath.Join(root, "bin", "state", "buildkitd"),
		"--entrypoint-dir", filepath.Join(root, "bin", "linux-arm64"))...)
}

// jetbakeRun runs bin/jetbake with args in dir, its output the demo's.
func jetbakeRun(ctx context.Context, root, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "bin", "jetbake"), args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "BUILDKIT_HOST=")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("jetbake %s: %w", args[0], err)
	}
	return nil
}

func readReport(path string) (*imagebuild.Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r imagebuild.Report
	return &r, json.Unmarshal(data, &r)
}

// runChecks runs every built image on the fake hosts and prints the table.
func runChecks(ctx context.Context, env *e2e.Env, work string, report *imagebuild.Report, refused refusals, app *appRun, out io.Writer) error {
	tags := map[string]string{}
	for _, rr := range report.Releases {
		if len(rr.Tags) > 0 {
			tags[rr.Name] = rr.Tags[0]
		}
	}
	for release, tag := range app.tags {
		tags[release] = tag
	}
	images, err := e2e.Images(ctx, filepath.Join(work, "rootfs"), tags)
	if err != nil {
		return err
	}
	if err := printCompilerOracle(ctx, out, env.RepoRoot, work, report, images); err != nil {
		return err
	}
	hosts, err := e2e.WriteHosts(ctx, env.Kit().Cache, filepath.Join(work, "hosts"))
	if err != nil {
		return err
	}
	runner, err := runimage.NewRunner(filepath.Join(work, "bundles"))
	if err != nil {
		return err
	}
	checks := append(append(e2e.DemoChecks(), e2e.DemoDeclaredChecks()...), e2e.AppChecks(app.repository)...)
	outcomes := e2e.RunChecks(ctx, runner, images, hosts, checks)
	fmt.Fprintln(out, "==> the images through NVIDIA's container runtime (docker run --runtime nvidia)")
	nvOutcomes, err := e2e.RunNVIDIARuntime(ctx, env, work, tags)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\n==> the images on fake Jetsons (arm64 through QEMU)")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tHOST\tRUNTIME\tCHECK\tRESULT")
	failed := 0
	row := func(release, host, runtime string, ok bool, summary string) {
		verdict := "ok"
		if !ok {
			verdict, failed = "UNEXPECTED", failed+1
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", shortTag(tags[release]), host, runtime, verdict, oneLine(summary))
	}
	// The build the audit refused: no image, so no host ran it.
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e2e.WrongComputeCapRelease+" (not tagged)", "-", "jetbake build", "ok", "refused by the "+oneLine(refused.audit))
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e2e.CrossHostSSLRelease+" (not tagged)", "-", "jetbake build", "ok", "refused: "+oneLine(refused.cross))
	for _, r := range app.refused {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.image+" (not tagged)", "-", "jetbake build", "ok", "refused: "+oneLine(r.sentence))
	}
	for _, o := range outcomes {
		row(o.Release, o.Host, "runc", o.OK(), o.Summary())
	}
	for _, o := range nvOutcomes {
		row(o.Release, o.Host, o.RuntimeName(), o.OK(), o.Summary())
	}
	tw.Flush()
	if failed > 0 {
		return fmt.Errorf("%d of %d runs did not do what they should", failed, len(outcomes)+len(nvOutcomes))
	}
	refusals := []string{e2e.WrongComputeCapRelease + " (by the audit)", e2e.CrossHostSSLRelease + " (by the aarch64 linker)"}
	for _, r := range app.refused {
		refusals = append(refusals, r.image+" (by "+r.by+")")
	}
	fmt.Fprintf(out, "\nthe builds of %s refused before any tag, and all %d runs as expected (%d with runc and a bind-mounted host view, %d with docker run, %d of them through NVIDIA's runtime). "+
		"Explain a choice: JETBAKE_EXPLAIN=1, or the entrypoint's --explain.\n", strings.Join(refusals, ", "),
		len(outcomes)+len(nvOutcomes), len(outcomes), len(nvOutcomes), nvidiaRuns(nvOutcomes))
	return nil
}

// nvidiaRuns counts the runs that went through NVIDIA's runtime.
func nvidiaRuns(outcomes []e2e.NVOutcome) int {
	n := 0
	for _, o := range outcomes {
		if o.Runtime != e2e.RuntimeNone {
			n++
		}
	}
	return n
}

// printLibraries prints, from the build's metadata, where each router's
// DT_NEEDED entries resolved in its release's runtime image.
func printLibraries(out io.Writer, report *imagebuild.Report) {
	fmt.Fprintln(out, "==> where each router's DT_NEEDED entries resolve in its runtime image (the build's smoke run, binaries[].resolved)")
	for _, rr := range report.Releases {
		for _, b := range rr.Binaries {
			var libs []string
			for _, l := range b.Resolved {
				where := l.Path
				switch {
				case l.FromHost:
					where = "the host (NVIDIA's runtime)"
				case where == "":
					where = "NOT FOUND"
				}
				libs = append(libs, l.Name+" => "+where)
			}
			fmt.Fprintf(out, "    %s %s: %s\n", rr.Name, b.Binary, strings.Join(libs, ", "))
		}
	}
}

// printAudits runs `jetbake audit` on each image of the shipped matrix, as
// a user would on a pushed image: every CUDA file of the image, not only
// the routers and their libraries the build audited, for its own SM targets.
func printAudits(ctx context.Context, out io.Writer, root string, report *imagebuild.Report) error {
	for _, rr := range report.Releases {
		if len(rr.Tags) == 0 {
			continue
		}
		fmt.Fprintf(out, "==> jetbake audit %s\n", shortTag(rr.Tags[0]))
		cmd := exec.CommandContext(ctx, filepath.Join(root, "bin", "jetbake"), "audit", "--quiet", rr.Tags[0])
		cmd.Stdout, cmd.Stderr = out, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("jetbake audit %s: %w", rr.Tags[0], err)
		}
	}
	return nil
}

// shortTag drops the registry and repository, which every row shares.
func shortTag(ref string) string {
	return ref[strings.LastIndex(ref, "/")+1:]
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
