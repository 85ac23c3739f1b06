package cli

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/doctor"
	"github.com/jetbake/jetbake/builder/fleet"
	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
)

// newDoctorCommand builds `jetbake doctor`.
func newDoctorCommand() *cobra.Command {
	var sysroot, nodeLabels, labelNode, factsFile string
	var every time.Duration
	var getFormat func() (format, error)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that this Jetson can run jetbake images with NVIDIA's container runtime",
		Long: "doctor reports, as a short table, the Jetson model and SoC, its L4T and JetPack release, the\n" +
			"driver's CUDA version, the NVIDIA container toolkit (known-bad releases named), the nvidia runtime of\n" +
			"each container engine the host has (Docker's daemon.json and default runtime; containerd's config.toml\n" +
			"or NVIDIA's drop-in; the containerd configuration k3s writes), and the CDI spec in /etc/cdi or\n" +
			"/var/run/cdi.\n" +
			"Each problem comes with the command that fixes it. It exits 0 when the host can run jetbake images,\n" +
			"1 otherwise. --sysroot reads a board's root file system mounted elsewhere.\n\n" +
			"--node-labels FILE writes the host's facts instead, as Kubernetes node labels under\n" +
			doctor.LabelPrefix + " in node-feature-discovery's local feature file format\n" +
			"(FILE in " + doctor.FeaturesDir + ", or - for standard output), and exits 0, with a warning on\n" +
			"standard error when the labels place no pod here (not a Jetson, or no nvidia runtime for pods):\n" +
			"the labels jetbake's manifests place pods by (docs/fleets.md). --label-node NAME applies them to\n" +
			"the node with server-side apply instead, from a pod's service account (the labelling DaemonSet of\n" +
			"'jetbake fleet --labeller-image', for clusters without node-feature-discovery), every --every.\n\n" +
			"--facts FILE reads the Jetson facts a matrix declares (the file its \"facts\" names, rows as\n" +
			"'jetbake facts --format json' prints them; docs/facts.md), checked as validate checks them: a host on\n" +
			"a JetPack release newer than this jetbake then gets its JetPack and driver CUDA from the declared row.",
		Example: "  jetbake doctor\n  jetbake doctor --sysroot /mnt/jetson-rootfs --format json\n" +
			"  jetbake doctor --node-labels " + doctor.FeaturesDir + "/jetbake\n" +
			"  jetbake doctor --facts jetson-facts.json --node-labels -",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := getFormat()
			if err != nil {
				return err
			}
			reader, err := declaredFactsReader(cmd, factsFile)
			if err != nil {
				return err
			}
			if labelNode != "" {
				return labelNodeLoop(cmd, sysroot, labelNode, every, reader)
			}
			r, err := doctor.Run(cmd.Context(), doctor.WithSysroot(sysroot), doctor.WithHostFacts(reader),
				doctor.WithNotJetsonFix("run jetbake doctor on the Jetson itself, or pass --sysroot DIR with the board's root file system"))
			if err != nil {
				return sysrootFlagError(err)
			}
			if nodeLabels != "" {
				return writeNodeLabels(cmd, r, nodeLabels)
			}
			if fm == formatJSON {
				err = r.WriteJSON(cmd.OutOrStdout())
			} else {
				err = r.WriteText(cmd.OutOrStdout())
			}
			if err == nil && !r.OK {
				return &ExitError{Code: ExitFailure}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&sysroot, "sysroot", "/", "the host's root file system")
	cmd.Flags().StringVar(&labelNode, "label-node", "", "apply the host's facts as labels to this Kubernetes node (in a pod, with its service account)")
	cmd.Flags().DurationVar(&every, "every", 0, "with --label-node, label again at this interval until stopped (0: once)")
	cmd.Flags().StringVar(&nodeLabels, "node-labels", "", "write the host's facts as node-feature-discovery labels to this file (- for standard output)")
	cmd.Flags().StringVar(&factsFile, "facts", "", "the Jetson facts a matrix declares (its facts file), for a JetPack release newer than this jetbake")
	getFormat = addFormatFlag(cmd)
	return cmd
}

// writeNodeLabels writes the report's node labels to path ("-": standard
// output), atomically, so that node-feature-discovery never reads half a file.
func writeNodeLabels(cmd *cobra.Command, r *doctor.Report, path string) error {
	var b bytes.Buffer
	if err := doctor.WriteFeatureFile(&b, r.NodeLabels()); err != nil {
		return err
	}
	warnLabels(cmd, r)
	if path == "-" {
		_, err := cmd.OutOrStdout().Write(b.Bytes())
		return err
	}
	if err := inputfile.CheckFolder(path); err != nil {
		return err
	}
	return inputfile.WriteFile(path, b.Bytes(), 0o644)
}

// warnLabels says on standard error why the labels place no pod on this
// host. The exit status stays 0: the labels are right, and a labeller that
// runs on every node must not fail on the nodes that are not Jetsons.
func warnLabels(cmd *cobra.Command, r *doctor.Report) {
	for _, w := range r.LabelWarnings() {
		fmt.Fprintln(cmd.ErrOrStderr(), "jetbake: warning:", w)
	}
}

// labelNodeLoop applies the host's node labels to node, then again every
// interval until the context ends (once when every is 0).
func labelNodeLoop(cmd *cobra.Command, sysroot, node string, every time.Duration, reader hostfit.SysrootReader) error {
	l, err := fleet.InClusterLabeler()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	for {
		r, err := doctor.Run(ctx, doctor.WithSysroot(sysroot), doctor.WithHostFacts(reader))
		if err != nil {
			return sysrootFlagError(err)
		}
		if err := l.Apply(ctx, node, r.NodeLabels()); err != nil {
			return err
		}
		warnLabels(cmd, r)
		fmt.Fprintf(cmd.ErrOrStderr(), "jetbake: labelled node %s (%d labels)\n", node, len(r.NodeLabels()))
		if every <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}

// declaredFactsReader reads the host with jetbake's table and the rows the
// facts file at path declares (matrix.LoadFacts: a file that cannot be
// read, or a row that breaks the table's rules, is bad input), its
// warnings on standard error; with jetbake's table alone when path is "".
func declaredFactsReader(cmd *cobra.Command, path string) (hostfit.SysrootReader, error) {
	if path == "" {
		return hostfit.SysrootReader{}, nil
	}
	t, warnings, err := matrix.LoadFacts(path)
	if err != nil {
		return hostfit.SysrootReader{}, fmt.Errorf("--facts: %w", err)
	}
	fmt.Fprint(cmd.ErrOrStderr(), matrix.WarningLines(path, warnings))
	return hostfit.SysrootReader{Table: t}, nil
}

// sysrootFlagError words a --sysroot of doctor or pick that is not a
// folder (a *hostfit.SysrootError) with the flag; other errors are
// returned as they are.
func sysrootFlagError(err error) error {
	var se *hostfit.SysrootError
	if errors.As(err, &se) {
		return usageErrorf("--sysroot %s %s: %s", se.Path, se.Problem, hostfit.SysrootFix)
	}
	return err
}
