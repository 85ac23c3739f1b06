package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/fleet/labellerimage"
	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// fleetFlags are the flags of `jetbake fleet`.
type fleetFlags struct {
	metadataFile, kind, name, namespace, out string
	replicas                                 int32
	args, env                                []string
	cacheVolume, cachePath, healthPath       string
	resources                                map[string]*string
	mirrors                                  []string
	deadline                                 func(context.Context) (context.Context, context.CancelFunc, error)
	labeller                                 labellerFlags
}

// newFleetCommand builds `jetbake fleet`.
func newFleetCommand() *cobra.Command {
	f := &fleetFlags{resources: map[string]*string{}}
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Write Kubernetes manifests that run each node of a Jetson fleet on the image its JetPack can run",
		Long: "fleet writes, from the report of 'jetbake build --push --metadata-file' (or, without it, from the\n" +
			"digests the registry gives each release's first tag now), one DaemonSet or Deployment per release,\n" +
			"pinned by digest, with runtimeClassName nvidia, the entrypoint's environment and a node\n" +
			"affinity computed from the entrypoint's host rule and pick's preference over the node labels of\n" +
			"'jetbake doctor --node-labels' (or its labelling DaemonSet): a node gets the release pick chooses for\n" +
			"it, and no other. Each pod serves: the ports the matrix exposes in the image, probes on the router's\n" +
			"health route (TEI's /health; --health-path for another), the router's arguments and environment\n" +
			"(--arg, --env), a model cache (--cache-volume) and resources (--cpu, --memory); one Service selects\n" +
			"every release's pods, and --namespace adds the Namespace. With --out it writes a folder with a\n" +
			"kustomization.yaml (kubectl apply -k DIR); without, one YAML stream on standard output. A new\n" +
			"build's report gives new digests: apply them and the controllers roll the pods (docs/fleets.md).\n\n" +
			"--labeller adds the DaemonSet that labels the nodes, from the image jetbake's release workflow\n" +
			"publishes for this version (" + labellerimage.Repository + ":VERSION) or --labeller-image.\n" +
			"--push-labeller REF makes that image and pushes it, and writes no manifests: the static jetbake\n" +
			"for linux/amd64 and linux/arm64 in one index, FROM scratch, built with BuildKit as 'jetbake build'\n" +
			"builds (--addr, BUILDKIT_HOST or a local buildkitd; the Docker config's credentials), stamped with\n" +
			"this jetbake's commit time (SOURCE_DATE_EPOCH) so that two pushes give one digest.",
		Example: "  jetbake fleet --metadata-file build.json --arg=--model-id --arg=BAAI/bge-small-en-v1.5 \\\n" +
			"      --cache-volume hostPath:/var/lib/jetbake/models --memory 2Gi --out deploy/\n" +
			"  jetbake fleet --metadata-file build.json --kind deployment --replicas 2 --namespace edge | kubectl apply --server-side -f -\n" +
			"  jetbake fleet --push-labeller registry.example/jetbake-labeller:v0.3.0 --labeller-binaries dist/",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFleet(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.metadataFile, "metadata-file", "", "report of 'jetbake build --push --metadata-file': each release's digest and metadata (default: ask the registry)")
	fl.StringArrayVar(&f.mirrors, "mirror", nil, "without --metadata-file, read a registry through a mirror: REGISTRY=HOST[:PORT] (repeatable); the manifests keep the image's own name")
	f.deadline = addTimeoutFlag(cmd)
	fl.StringVar(&f.kind, "kind", "daemonset", "the workload of each release: daemonset (one pod on every node it fits) or deployment")
	fl.StringVar(&f.name, "name", "router", "the app's name: the Service is NAME, the workloads NAME-RELEASE")
	fl.Int32Var(&f.replicas, "replicas", 1, "each Deployment's replicas (with --kind deployment)")
	fl.StringVar(&f.namespace, "namespace", "", "the namespace of every object, written as a Namespace too")
	fl.StringVarP(&f.out, "out", "o", "", "write the manifests and kustomization.yaml into this folder")
	fl.StringArrayVar(&f.args, "arg", nil, "an argument of the router after the image's own (repeatable, in order), e.g. --arg=--model-id --arg=BAAI/bge-small-en-v1.5")
	fl.StringArrayVar(&f.env, "env", nil, "NAME=VALUE in the router's environment (repeatable), e.g. --env MODEL_ID=BAAI/bge-small-en-v1.5")
	fl.StringVar(&f.cacheVolume, "cache-volume", "", "the model cache: hostPath:/FOLDER on each node, or pvc:NAME, mounted at --cache-path")
	fl.StringVar(&f.cachePath, "cache-path", fleet.DefaultCachePath, "where the container sees the model cache (TEI's HUGGINGFACE_HUB_CACHE)")
	fl.StringVar(&f.healthPath, "health-path", "", "the HTTP route of the startup, readiness and liveness probes (default: TEI's /health for TEI's router, none for another; \"\" for none)")
	for _, r := range []struct{ name, usage string }{
		{"cpu", "the CPU each pod requests, e.g. 2 or 500m"},
		{"memory", "the memory each pod requests, e.g. 4Gi"},
		{"cpu-limit", "the CPU limit of each pod"},
		{"memory-limit", "the memory limit of each pod (the model and its batches must fit)"},
	} {
		f.resources[r.name] = fl.String(r.name, "", r.usage)
	}
	addLabellerFlags(cmd, &f.labeller)
	AddMatrixFlags(cmd, "the matrix the images were built from: their ports and default arguments")
	return cmd
}

// runFleet writes the manifests.
func runFleet(cmd *cobra.Command, f *fleetFlags) error {
	if err := f.labeller.checkModeFlags(cmd); err != nil {
		return err
	}
	if f.labeller.push != "" {
		return runPushLabeller(cmd, &f.labeller)
	}
	if form, err := f.labeller.format(); err != nil || form != formatText {
		if err == nil {
			err = usageErrorf("--format %s: fleet writes its manifests as YAML; --format json is for --push-labeller's report", form)
		}
		return err
	}
	labeller, err := f.labeller.labellerImage()
	if err != nil {
		return err
	}
	kinds := map[string]string{"daemonset": fleet.KindDaemonSet, "deployment": fleet.KindDeployment}
	kind, ok := kinds[strings.ToLower(f.kind)]
	if !ok {
		return usageErrorf("--kind %q is neither daemonset nor deployment", f.kind)
	}
	if err := fleet.CheckName(f.name); err != nil {
		return usageErrorf("%v", err)
	}
	m, err := LoadMatrix(cmd)
	if err != nil {
		return err
	}
	serving, err := f.serving(cmd, m)
	if err != nil {
		return usageErrorf("%v", err)
	}
	releases, err := f.releases(cmd, m)
	if err != nil {
		return err
	}

	objs, err := fleet.Objects(releases, fleet.Options{App: f.name, Kind: kind, Replicas: f.replicas, Namespace: f.namespace, Serving: serving})
	if err != nil {
		return usageErrorf("%v", err)
	}
	if labeller != "" {
		maps.Copy(objs, fleet.Labeller(labeller, f.namespace, fleet.DeclaredJetPacks(releases)...))
	}
	if err := writeFleet(cmd, f.out, objs, f.namespace); err != nil {
		return err
	}
	if w := fleet.ServingWarning(m, serving); w != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "jetbake: warning:", w)
	}
	return nil
}

// releases are the releases to write, pinned by digest: from the metadata
// file, or from the registry.
func (f *fleetFlags) releases(cmd *cobra.Command, m *matrix.Matrix) ([]fleet.Release, error) {
	if f.metadataFile != "" {
		md, err := evidence.ReadMetadata(f.metadataFile)
		if err != nil {
			return nil, err
		}
		releases, err := fleet.ReleasesFromReport(f.metadataFile, md.Report)
		if err != nil {
			return nil, &ExitError{Code: ExitUsage, Err: err} // the file is not what fleet needs
		}
		return releases, nil
	}
	mirrors, err := parseMirrors(f.mirrors)
	if err != nil {
		return nil, err
	}
	p, err := plan.New(m)
	if err != nil {
		return nil, err
	}
	var tags []fleet.Tag
	for _, r := range p.Releases {
		if len(r.Tags) > 0 {
			tags = append(tags, fleet.Tag{Release: r.Name, Repository: p.Repository, Tag: strings.TrimPrefix(r.Tags[0], p.Repository+":")})
		}
	}
	ctx, cancel, err := registryContext(cmd.Context(), f.deadline)
	if err != nil {
		return nil, err
	}
	defer cancel()
	stderr := cmd.ErrOrStderr()
	// Progress is a line per release read; a registry's failure stays one sentence.
	releases, left, err := fleet.ReleasesFromRegistry(ctx, tags, imagepick.WithMirrors(mirrors))
	for _, l := range left {
		fmt.Fprintln(stderr, "jetbake: warning:", refs.Printable(l))
	}
	if err != nil {
		return nil, err
	}
	for _, r := range releases {
		fmt.Fprintf(stderr, "jetbake: %s is %s\n", r.Name, r.Image)
	}
	return releases, nil
}

// serving reads the serving flags over what the matrix builds into the image.
func (f *fleetFlags) serving(cmd *cobra.Command, m *matrix.Matrix) (fleet.Serving, error) {
	var s fleet.Serving
	var err error
	if s.Ports, err = fleet.ImagePorts(m); err != nil {
		return s, err
	}
	s.HealthPath = fleet.DefaultHealthPath(m)
	if cmd.Flags().Changed("health-path") {
		s.HealthPath = f.healthPath
	}
	if s.HealthPath != "" && !strings.HasPrefix(s.HealthPath, "/") {
		return s, fmt.Errorf("--health-path %q is not an HTTP route: write it from the root, e.g. /health, or \"\" for no probe", f.healthPath)
	}
	if s.HealthPath != "" && len(s.Ports) == 0 {
		return s, fmt.Errorf("--health-path %q needs a TCP port, and the matrix exposes none: add \"ports\": [\"80/tcp\"] to the matrix's router or app, or give --health-path \"\"", s.HealthPath)
	}
	if len(f.args) > 0 {
		s.Args = append(slices.Clone(fleet.ImageCmd(m)), f.args...)
	}
	for _, e := range f.env {
		v, err := fleet.ParseEnv(e)
		if err != nil {
			return s, err
		}
		s.Env = append(s.Env, v)
	}
	if f.cacheVolume != "" {
		if s.Cache, err = fleet.ParseCacheVolume(f.cacheVolume, f.cachePath); err != nil {
			return s, err
		}
	}
	values := map[string]string{}
	for k, v := range f.resources {
		values[k] = *v
	}
	s.Resources, err = fleet.Resources(values)
	return s, err
}

// writeFleet renders the objects into folder out, or as one stream on
// standard output when out is "".
func writeFleet(cmd *cobra.Command, out string, objs map[string]any, namespace string) error {
	files, err := fleet.Render(objs, namespace)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = cmd.OutOrStdout().Write(fleet.Stream(files))
		return err
	}
	if err := fleet.WriteDir(out, files); err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(files))
	for _, n := range names {
		fmt.Fprintln(cmd.ErrOrStderr(), "jetbake: wrote", out+"/"+n)
	}
	return nil
}
