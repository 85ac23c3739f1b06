package cli

import (
	"github.com/spf13/cobra"
)

// fixedValues are the values shells complete for flags with a closed set.
func fixedValues() map[string][]string {
	return map[string][]string{
		"format":     {"text", "json"},
		"progress":   {"auto", "tty", "plain", "rawjson", "quiet", "none"},
		"sbom":       {"true", "false"},
		"list":       {"releases", "type=releases,format=json"},
		"provenance": {"mode=min", "mode=max", "false"},
	}
}

// addCompletions registers shell completion for every command's flags:
// release names read from the matrix of -f/--file, and the fixed values of
// --format, --progress and --provenance.
func addCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("release") != nil {
			_ = c.RegisterFlagCompletionFunc("release", completeReleases)
		}
		for name, values := range fixedValues() {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeReleases offers the release names of the matrix, or nothing when
// it cannot be read.
func completeReleases(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	m, err := LoadMatrix(cmd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, len(m.Releases))
	for i, r := range m.Releases {
		names[i] = r.Name + "\tJetPack " + r.JetPack
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
