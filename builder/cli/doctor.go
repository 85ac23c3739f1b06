package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/doctor"
	"github.com/jetbake/jetbake/builder/hostfit"
)

// newDoctorCommand builds `jetbake doctor`.
func newDoctorCommand() *cobra.Command {
	var sysroot string
	var getFormat func() (format, error)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that this Jetson can run jetbake images with docker run --runtime nvidia",
		Long: "doctor reports, as a short table, the Jetson model and SoC, its L4T and JetPack release, the\n" +
			"driver's CUDA version, the NVIDIA container toolkit (known-bad releases named), Docker's nvidia\n" +
			"runtime and default runtime in /etc/docker/daemon.json, and the CDI spec in /etc/cdi or /var/run/cdi.\n" +
			"Each problem comes with the command that fixes it. It exits 0 when the host can run jetbake images,\n" +
			"1 otherwise. --sysroot reads a board's root file system mounted elsewhere.",
		Example: "  jetbake doctor\n  jetbake doctor --sysroot /mnt/jetson-rootfs --format json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := getFormat()
			if err != nil {
				return err
			}
			r, err := doctor.Run(cmd.Context(), doctor.WithSysroot(sysroot),
				doctor.WithNotJetsonFix("run jetbake doctor on the Jetson itself, or pass --sysroot DIR with the board's root file system"))
			if err != nil {
				return sysrootFlagError(err)
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
	getFormat = addFormatFlag(cmd)
	return cmd
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
