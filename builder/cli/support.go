package cli

import (
	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/evidence"
)

// newSupportCommand builds `jetbake support`.
func newSupportCommand() *cobra.Command {
	var f evidenceFlags
	var getFormat func() (format, error)
	cmd := &cobra.Command{
		Use:   "support",
		Short: "Show each release's tier, hardware and the evidence from real Jetsons",
		Long: "support lists per release the tier it claims, the modules it is for and the evidence stored for it\n" +
			"(device, date, digest, revision, and the level it reached: smoke, cuda-kernel, serve or, for an app, app),\n" +
			"or \"no evidence\".\n" +
			"When the release's current digest is known (--metadata-file, else its first tag in the registry) each\n" +
			"piece says whether it counts: it passed every check on the current image no longer than\n" +
			"--max-evidence-age ago and, for a supported release, reached level serve (a CUDA kernel ran and the\n" +
			"router served embeddings; for an app, level app: a CUDA kernel ran and the app check passed); a supported\n" +
			"release without any is marked \"not backed by evidence\".",
		Example: "  jetbake support\n  jetbake support --format markdown --metadata-file build.json\n  jetbake support --registry=false --format json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := getFormat()
			if err != nil {
				return err
			}
			m, err := LoadMatrix(cmd)
			if err != nil {
				return err
			}
			opts, err := f.options(m)
			if err != nil {
				return err
			}
			ctx, cancel, err := f.deadline(cmd.Context())
			if err != nil {
				return err
			}
			defer cancel()
			table, err := evidence.Support(ctx, m, opts...)
			if err != nil {
				return err
			}
			switch fm {
			case formatJSON:
				return table.WriteJSON(cmd.OutOrStdout())
			case formatMarkdown:
				return table.WriteMarkdown(cmd.OutOrStdout())
			}
			return table.WriteText(cmd.OutOrStdout())
		},
	}
	getFormat = addFormatFlag(cmd, formatText, formatMarkdown, formatJSON)
	addEvidenceFlags(cmd, &f)
	AddMatrixFlags(cmd, "")
	return cmd
}
