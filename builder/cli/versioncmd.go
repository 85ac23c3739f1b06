package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/version"
)

func newVersionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print jetbake's module version and commit",
		Long:    "version prints the version of jetbake's Go module and the commit it was built from.",
		Example: "  jetbake version\n  jetbake version --format json",
		Args:    noArgs,
	}
	getFormat := addFormatFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		f, err := getFormat()
		if err != nil {
			return err
		}
		info := version.Get()
		if f == formatJSON {
			return writeJSON(cmd, info)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "jetbake %s\n", info)
		return nil
	}
	return cmd
}
