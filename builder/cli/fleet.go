package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/fleet"
)

// fleetFlags are the flags of `jetbake fleet`.
type fleetFlags struct {
	metadataFile, kind, name, namespace, out, labeller string
	replicas                                           int32
}

// newFleetCommand builds `jetbake fleet`.
func newFleetCommand() *cobra.Command {
	f := &fleetFlags{}
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Write Kubernetes manifests that run each node of a Jetson fleet on the image its JetPack can run",
		Long: "fleet writes, from the report of 'jetbake build --push --metadata-file', one DaemonSet or Deployment\n" +
			"per release, pinned by digest, with runtimeClassName nvidia, the entrypoint's environment and a node\n" +
			"affinity computed from the entrypoint's host rule and pick's preference over the node labels of\n" +
			"'jetbake doctor --node-labels' (or its labelling DaemonSet): a node gets the release pick chooses for\n" +
			"it, and no other. With --out it writes a folder with a kustomization.yaml (kubectl apply -k DIR);\n" +
			"without, one YAML stream on standard output. A new build's report gives new digests: apply them and\n" +
			"the controllers roll the pods (docs/fleets.md).",
		Example: "  jetbake fleet --metadata-file build.json --out deploy/\n" +
			"  jetbake fleet --metadata-file build.json --kind deployment --replicas 2 | kubectl apply --server-side -f -",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFleet(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.metadataFile, "metadata-file", "", "report of 'jetbake build --push --metadata-file': each release's digest and metadata (required)")
	fl.StringVar(&f.kind, "kind", "daemonset", "the workload of each release: daemonset (one pod on every node it fits) or deployment")
	fl.StringVar(&f.name, "name", "router", "the app's name: workloads are NAME-RELEASE")
	fl.Int32Var(&f.replicas, "replicas", 1, "each Deployment's replicas (with --kind deployment)")
	fl.StringVar(&f.namespace, "namespace", "", "the kustomization's namespace")
	fl.StringVar(&f.labeller, "labeller-image", "", "add the labelling DaemonSet and its RBAC (for clusters without node-feature-discovery), running jetbake from this image")
	fl.StringVarP(&f.out, "out", "o", "", "write the manifests and kustomization.yaml into this folder")
	return cmd
}

// runFleet writes the manifests.
func runFleet(cmd *cobra.Command, f *fleetFlags) error {
	kinds := map[string]string{"daemonset": fleet.KindDaemonSet, "deployment": fleet.KindDeployment}
	kind, ok := kinds[strings.ToLower(f.kind)]
	if !ok {
		return usageErrorf("--kind %q is neither daemonset nor deployment", f.kind)
	}
	if f.metadataFile == "" {
		return usageErrorf("--metadata-file is required: give the report 'jetbake build --push --metadata-file FILE' wrote")
	}
	md, err := evidence.ReadMetadata(f.metadataFile)
	if err != nil {
		return err
	}
	releases, err := fleet.ReleasesFromReport(f.metadataFile, md.Report)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err} // the file is not what fleet needs
	}
	objs, err := fleet.Objects(releases, fleet.Options{App: f.name, Kind: kind, Replicas: f.replicas, Namespace: f.namespace})
	if err != nil {
		return usageErrorf("%v", err)
	}
	if f.labeller != "" {
		maps.Copy(objs, fleet.Labeller(f.labeller, f.namespace))
	}
	files, err := fleet.Render(objs, f.namespace)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	if f.out == "" {
		_, err = cmd.OutOrStdout().Write(fleet.Stream(files))
		return err
	}
	if err := fleet.WriteDir(f.out, files); err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(cmd.ErrOrStderr(), "jetbake: wrote", f.out+"/"+n)
	}
	return nil
}
