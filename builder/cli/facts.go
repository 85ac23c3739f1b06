package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/computecap"
)

// newFactsCommand builds `jetbake facts`.
func newFactsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "facts",
		Short: "Print jetbake's table of Jetson facts, in the shape a matrix declares more in",
		Long: "facts prints the table of Jetson facts this jetbake was built with: JetPack releases (L4T, CUDA,\n" +
			"Ubuntu, flavour, host rule, the SMs of the Jetsons that run them, where libcuda lives), SoCs, which CUDA\n" +
			"builds each SM, NVIDIA's base repositories and images, the PyTorch containers by JetPack line and the\n" +
			"cross build rows. Each row is printed as the JSON a matrix declares a row in: for a JetPack release\n" +
			"newer than this jetbake, copy the row of the release before it, edit it from NVIDIA's release notes,\n" +
			"and put it under \"facts\" in matrix.json or in a file \"facts\" names. validate checks declared rows\n" +
			"by the rules every row here passes (docs/facts.md).",
		Example: "  jetbake facts\n  jetbake facts --format json > jetson-facts.json",
		Args:    noArgs,
	}
	getFormat := addFormatFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		f, err := getFormat()
		if err != nil {
			return err
		}
		rows := computecap.DefaultTable().Rows()
		if f == formatJSON {
			return writeJSON(cmd, rows)
		}
		text, err := factsText(rows)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(cmd.OutOrStdout(), text)
		return err
	}
	return cmd
}

// factsText writes the rows kind by kind, one row of JSON a line, ready
// to copy into a facts file.
func factsText(rows computecap.Facts) (string, error) {
	data, err := json.Marshal(rows)
	if err != nil {
		return "", fmt.Errorf("write facts: %w", err)
	}
	var kinds map[string][]json.RawMessage
	if err := json.Unmarshal(data, &kinds); err != nil {
		return "", fmt.Errorf("write facts: %w", err)
	}
	var b strings.Builder
	for _, k := range []struct{ key, what string }{
		{computecap.RowsJetPacks, "JetPack releases"}, {computecap.RowsSoCs, "Jetson SoCs"},
		{computecap.RowsToolchain, "which CUDA builds each SM (Thor's 10.1 and 11.0 by a rule of their own)"},
		{computecap.RowsBaseRepositories, "NVIDIA's base repositories"}, {computecap.RowsBaseImages, "base images known to exist"},
		{computecap.RowsFrameworks, "NVIDIA's PyTorch containers by JetPack line"}, {computecap.RowsCrossTargets, "cross build rows"},
		{computecap.RowsCrossRecipes, "the cross build base recipe's rows, by JetPack line"},
	} {
		fmt.Fprintf(&b, "%s: %s\n", k.key, k.what)
		for _, row := range kinds[k.key] {
			fmt.Fprintf(&b, "  %s\n", row)
		}
		b.WriteString("\n")
	}
	b.WriteString("Declare what this table lacks under \"facts\" in matrix.json, in this shape ({\"jetpacks\": [ROW]}); see docs/facts.md.\n")
	return b.String(), nil
}
