package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/version"
)

func newVersionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print jetbake's module version and commit",
		Long: "version prints the version of jetbake's Go module, a semantic version such as v0.3.0 when this\n" +
			"jetbake was built from a release or installed with 'go install ...@VERSION', else (devel), and the\n" +
			"commit it was built from when known. 'jetbake --version' prints the same line.",
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
		_, err = io.WriteString(cmd.OutOrStdout(), versionLine(cmd.Root().Version))
		return err
	}
	return cmd
}

// versionLine is the line 'jetbake version' and 'jetbake --version' print,
// for the version text v (version.Info's String, or a template's field).
func versionLine(v string) string {
	return "jetbake " + v + "\n"
}
