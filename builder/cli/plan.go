package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/bake"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/dockerfiles"
)

// newPlanCommand builds `jetbake plan`.
func newPlanCommand() *cobra.Command {
	var releases []string
	var repository string
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Print what a build would produce, without building",
		Long: "plan resolves the matrix like `docker buildx bake --print`: per release the platform, the build and\n" +
			"runtime bases, the SM targets with their nvcc arch and binary names, the tags, and the labels and\n" +
			"annotations. Each base shows its CUDA flavour (Tegra or SBSA) and version as the table of Jetson\n" +
			"facts knows them from its reference, or \"unknown until read\": the build reads every base itself and\n" +
			"fails a release whose base does not match it. The build adds the revision, creation time and base digest.\n" +
			"For an app's matrix it shows one app per release: its framework container (with the torch and Python\n" +
			"the table knows), the GPUs its image must run on, and its stage's build args (BASE, JETPACK, L4T,\n" +
			"CUDA, CUDA_ARCH_LIST and the matrix's).",
		Example: "  jetbake plan\n  jetbake plan --release jetpack6.2 --release jetpack7.0\n" +
			"  jetbake plan --format json --repository 127.0.0.1:5000/jetbake/tei\n" +
			"  jetbake plan --build-arg CARGO_FEATURES=candle-cuda --set 'jetpack7.*.no-cache=true' --set '*.tags+={version}-{release}-rc'",
		Args: noArgs,
	}
	cmd.Flags().StringSliceVar(&releases, "release", nil, "plan only this release (repeatable, or comma-separated)")
	cmd.Flags().StringVar(&repository, "repository", "",
		"plan the images in this repository instead of the matrix's image.repository: the tags and annotations name it (plan pushes nothing; 'jetbake build --push' pushes to image.repository)")
	var overrides overrideFlags
	addOverrideFlags(cmd, &overrides)
	getFormat := addFormatFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		f, err := getFormat()
		if err != nil {
			return err
		}
		m, err := LoadMatrix(cmd)
		if err != nil {
			return &ExitError{Code: ExitCode(err), Err: err}
		}
		opts := []plan.Option{plan.WithReleases(releases...)}
		if repository != "" {
			opts = append(opts, plan.WithRepository(repository))
		}
		p, err := plan.New(m, opts...)
		if err != nil {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		if err := overrides.apply(p, overrideInput{revision: func() (string, error) {
			src, err := bake.ReadSource(cmd.Context(), MatrixPath(cmd), "", "")
			return src.Revision, err
		}}); err != nil {
			return err
		}
		if f == formatJSON {
			return writeJSON(cmd, p)
		}
		return writePlanText(cmd.OutOrStdout(), p)
	}
	AddMatrixFlags(cmd, "")
	return cmd
}

// loadPlan loads the matrix of -f, plans every release and parses the
// --mirror values, for build, check and lock.
func loadPlan(cmd *cobra.Command, mirrorFlags []string) (*plan.Plan, refs.Mirrors, error) {
	m, err := LoadMatrix(cmd)
	if err != nil {
		return nil, nil, err
	}
	p, err := plan.New(m)
	if err != nil {
		return nil, nil, err
	}
	mirrors, err := parseMirrors(mirrorFlags)
	if err != nil {
		return nil, nil, err
	}
	return p, mirrors, nil
}

// writePlanText writes a plan for people to read.
func writePlanText(w io.Writer, p *plan.Plan) error {
	var b strings.Builder
	if p.App != nil {
		writeAppText(&b, p.App)
	} else {
		writeRouterText(&b, p)
	}
	for _, r := range p.Releases {
		b.WriteByte('\n')
		writeReleaseText(&b, &r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAppText writes what an app's plan builds and execs.
func writeAppText(b *strings.Builder, a *plan.App) {
	stage := a.Target
	if stage == "" {
		stage = "the last"
	}
	fmt.Fprintf(b, "app %s %s (%s)\n", a.Name, a.Version, a.Framework)
	fmt.Fprintf(b, "  context:    %s\n  dockerfile: %s (stage %s, on each release's base)\n", a.Context, a.Dockerfile, stage)
	fmt.Fprintf(b, "  command:    %s\n", strings.Join(a.Command, " "))
	writeKindCommon(b, a.Env, a.Cmd, a.Ports)
}

// writeRouterText writes what a router's plan compiles.
func writeRouterText(b *strings.Builder, p *plan.Plan) {
	fmt.Fprintf(b, "router %s %s\n", p.Router.Name, p.Router.Version)
	fmt.Fprintf(b, "  context:    %s\n  dockerfile: %s (stage %s, binary %s)\n",
		p.Router.Context, p.Router.Dockerfile, p.Router.Target, p.Router.Output)
	if p.Router.Commit != "" {
		fmt.Fprintf(b, "  commit:     %s (GIT_SHA)\n", p.Router.Commit)
	}
	if p.Router.RuntimeTarget != "" {
		fmt.Fprintf(b, "  runtime:    stage %s of the Dockerfile, on each release's runtime base\n", p.Router.RuntimeTarget)
	}
	writeKindCommon(b, p.Router.Env, p.Router.Cmd, p.Router.Ports)
}

// writeKindCommon writes the env, cmd and ports of a router or an app.
func writeKindCommon(b *strings.Builder, envMap map[string]string, cmd, ports []string) {
	if len(envMap) > 0 {
		var env []string
		for _, k := range slices.Sorted(maps.Keys(envMap)) {
			env = append(env, k+"="+envMap[k])
		}
		fmt.Fprintf(b, "  env:        %s\n", strings.Join(env, " "))
	}
	if len(cmd) > 0 {
		fmt.Fprintf(b, "  cmd:        %s\n", strings.Join(cmd, " "))
	}
	if len(ports) > 0 {
		fmt.Fprintf(b, "  ports:      %s\n", strings.Join(ports, " "))
	}
}

// writeReleaseText writes one release of a plan.
func writeReleaseText(b *strings.Builder, r *plan.Release) {
	fmt.Fprintf(b, "release %s: JetPack %s, L4T %s, CUDA %s, Ubuntu %s, tier %s\n",
		r.Name, r.JetPack, r.L4T, r.CUDA, r.Ubuntu, r.Tier)
	if r.FactsNote != "" {
		fmt.Fprintf(b, "  facts:        %s (%s=%s)\n", r.FactsNote, matrix.KeyFacts, r.Facts)
	}
	fmt.Fprintf(b, "  platform:     %s\n", r.Platform)
	fmt.Fprintf(b, "  hardware:     %s\n", strings.Join(r.Hardware, ", "))
	if r.AppBuildArgs != nil {
		writeAppReleaseText(b, r)
	} else {
		writeRouterReleaseText(b, r)
	}
	writeReleaseTail(b, r)
}

// writeAppReleaseText writes an app release's base, the GPUs its image
// must run on, and its stage's build args.
func writeAppReleaseText(b *strings.Builder, r *plan.Release) {
	note := baseNote(r, 0)
	if len(r.Bases) > 0 && r.Bases[0].PyTorch != "" {
		note += ", torch " + r.Bases[0].PyTorch + ", Python " + r.Bases[0].Python
	}
	fmt.Fprintf(b, "  base:         %s%s\n", r.Base, note)
	for i, t := range r.Targets {
		writeField(b, "targets:", i, t.SM+"  "+t.Arch+"  runs "+t.Path)
	}
	for i, k := range slices.Sorted(maps.Keys(r.AppBuildArgs)) {
		writeField(b, "app args:", i, k+"="+r.AppBuildArgs[k])
	}
}

// writeRouterReleaseText writes a router release's bases and SM targets.
func writeRouterReleaseText(b *strings.Builder, r *plan.Release) {
	fmt.Fprintf(b, "  build base:   %s%s\n", r.BuildBase, baseNote(r, 0))
	fmt.Fprintf(b, "  runtime base: %s%s\n", r.RuntimeBase, baseNote(r, 1))
	if line := buildPathText(r); line != "" {
		fmt.Fprintf(b, "  build path:   %s\n", line)
	}
	for i, k := range slices.Sorted(maps.Keys(r.RuntimeBuildArgs)) {
		writeField(b, "runtime args:", i, k+"="+r.RuntimeBuildArgs[k])
	}
	for i, t := range r.Targets {
		line := fmt.Sprintf("%s  %s  CUDA_COMPUTE_CAP=%s  %s", t.SM, t.Arch, t.ComputeCap, t.Path)
		for _, k := range slices.Sorted(maps.Keys(t.BuildArgs)) {
			line += "  " + k + "=" + t.BuildArgs[k]
		}
		writeField(b, "targets:", i, line)
	}
}

// writeReleaseTail writes the tags, build args, caches, annotations and
// labels of a release of either kind.
func writeReleaseTail(b *strings.Builder, r *plan.Release) {
	for i, tag := range r.Tags {
		writeField(b, "tags:", i, tag)
	}
	for i, k := range slices.Sorted(maps.Keys(r.BuildArgs)) {
		writeField(b, "build args:", i, k+"="+r.BuildArgs[k])
	}
	for i, c := range r.CacheFrom {
		writeField(b, "cache from:", i, c.String())
	}
	for i, c := range r.CacheTo {
		writeField(b, "cache to:", i, c.String())
	}
	if r.NoCache != nil {
		fmt.Fprintf(b, "  %-13s %t\n", "no cache:", *r.NoCache)
	}
	for i, k := range slices.Sorted(maps.Keys(r.Annotations)) {
		writeField(b, "annotations:", i, k+"="+r.Annotations[k])
	}
	if !maps.Equal(r.Labels, r.Annotations) {
		for i, k := range slices.Sorted(maps.Keys(r.Labels)) {
			writeField(b, "labels:", i, k+"="+r.Labels[k])
		}
	} else {
		fmt.Fprintf(b, "  labels:       same as annotations\n")
	}
}

// writeField writes one line of a multi-line field, naming the field on the first.
func writeField(b *strings.Builder, name string, i int, value string) {
	if i > 0 {
		name = ""
	}
	fmt.Fprintf(b, "  %-13s %s\n", name, value)
}

// baseNote says what the table tells of base i of r: " (Tegra CUDA 12.6,
// from the table)", or that the build reads it.
func baseNote(r *plan.Release, i int) string {
	if i >= len(r.Bases) {
		return ""
	}
	b := r.Bases[i]
	if b.From != plan.FromTable {
		return " (flavour and CUDA " + plan.UnknownUntilRead + ")"
	}
	name := computecap.Flavour(b.Flavour).Name()
	switch b.CUDA {
	case plan.NoCUDA:
		return " (" + name + ", no CUDA, from the table)"
	case plan.UnknownUntilRead:
		return " (" + name + " CUDA, its version " + plan.UnknownUntilRead + ")"
	}
	return " (" + name + " CUDA " + b.CUDA + ", from the table)"
}

// buildPathText says which path the router stage takes on each kind of
// node (imagebuild/emulation.ChoosePath), for a release with a cross
// build base or a forced path; "" otherwise (QEMU on amd64, as always).
// jetbake build says the path it took per release, and --timings shows it.
func buildPathText(r *plan.Release) string {
	const arm64 = "; arm64 nodes: native"
	switch {
	case r.BuildPath == "qemu":
		return "amd64 nodes: QEMU (build_path)" + arm64
	case r.CrossBuildRecipe != nil:
		rc := r.CrossBuildRecipe
		file := rc.Dockerfile
		if file == matrix.BuiltinRecipe {
			file = "jetbake's " + dockerfiles.CrossBaseRecipe
		}
		return "amd64 nodes: cross in the base " + file + " builds FROM " + r.CrossBuildBase + " (" +
			rc.Args[computecap.RecipeArgCrossPackage] + ", GCC " + rc.Args[computecap.RecipeArgGCC] + ", targets/" + r.CUDATargetDir +
			"), the routers compiled on linux/amd64 and run under QEMU only for the smoke run" + arm64
	case r.CrossBuildBase != "":
		// What jetbake build does on such a node (--build-path qemu
		// overrides it for one build).
		return "amd64 nodes: cross in " + r.CrossBuildBase + " (targets/" + r.CUDATargetDir + "), the routers compiled on linux/amd64 and run under QEMU only for the smoke run" + arm64
	case r.BuildPath != "":
		return "amd64 nodes: " + r.BuildPath + " (build_path)" + arm64
	}
	row, ok := computecap.DefaultTable().CrossRecipeOf(r.JetPack)
	if !ok || r.Base != "" {
		return ""
	}
	if row.Unsupported != "" {
		return "amd64 nodes: QEMU, as JetPack " + r.JetPack + " has no cross build recipe (" + row.Unsupported + ")" + arm64
	}
	// A release newer than the recipe's row (a declared JetPack 7.3 with
	// CUDA 13.3): the recipe has no devel image of its CUDA.
	if v, err := computecap.ParseCUDAVersion(r.CUDA); err == nil {
		if _, has := row.DevelImageFor(v); !has {
			return "amd64 nodes: QEMU, as jetbake's cross build recipe has no CUDA " + r.CUDA + " devel image for JetPack " + row.Line +
				" (it has " + strings.Join(row.DevelImages, ", ") + "; declare a cross_recipes row that lists one, or name a cross_build_base image of your own)" + arm64
		}
	}
	return ""
}
