package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/computecap"
)

// compatTarget is one compiled target judged against the GPU.
type compatTarget struct {
	SM     string `json:"sm"`
	Runs   bool   `json:"runs"`
	Reason string `json:"reason"`
}

// compatRelease is one matrix release judged against the GPU.
type compatRelease struct {
	Name    string         `json:"name"`
	JetPack string         `json:"jetpack"`
	Pick    string         `json:"pick,omitempty"`
	Binary  string         `json:"binary,omitempty"`
	Error   string         `json:"error,omitempty"`
	Tags    []string       `json:"tags"`
	Targets []compatTarget `json:"targets"`
}

// compatReport is the answer of `jetbake compat`, also its JSON output.
type compatReport struct {
	GPU         string          `json:"gpu"`
	Description string          `json:"description"`
	Compiled    []compatTarget  `json:"compiled,omitempty"`
	Pick        string          `json:"pick,omitempty"`
	Binary      string          `json:"binary,omitempty"`
	Error       string          `json:"error,omitempty"`
	Releases    []compatRelease `json:"releases,omitempty"`
}

// newCompatCommand builds `jetbake compat`.
func newCompatCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compat RUNTIME [COMPILED...]",
		Short: "Tell which compiled SM targets run on a GPU, and which one the entrypoint picks",
		Long: "compat answers, for a GPU of compute capability RUNTIME, which of the COMPILED targets run on it\n" +
			"(with the reason) and which binary the image's entrypoint would pick. Without COMPILED it answers\n" +
			"for every release of the matrix. Tegra GPUs (the SoC rows of computecap's table: Xavier 7.2,\n" +
			"Orin 8.7, Thor 10.1/11.0) run only code built for their own SM. Exit status: 0 if a target runs,\n" +
			"1 if none does, 2 on bad input (an SM jetbake's table does not know is one: the error lists those it knows).",
		Example: "  jetbake compat 8.7 8.0 8.7\n  jetbake compat 10.1 11.0    # Thor with the old driver\n" +
			"  jetbake compat 8.7 --format json",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("%s needs the GPU's compute capability, e.g. 8.7; run '%s --help'", cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
	}
	getFormat := addFormatFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		f, err := getFormat()
		if err != nil {
			return err
		}
		report, err := compat(cmd, args[0], args[1:])
		if err != nil {
			return err
		}
		if f == formatJSON {
			err = writeJSON(cmd, report)
		} else {
			err = writeCompatText(cmd.OutOrStdout(), report)
		}
		if err != nil {
			return err
		}
		if report.Pick == "" && !anyPicked(report.Releases) {
			return &ExitError{Code: ExitFailure}
		}
		return nil
	}
	AddMatrixFlags(cmd, "the matrix file, read when no COMPILED target is given")
	return cmd
}

// compat builds the report for a GPU and the compiled targets, or the
// matrix's releases when there are none.
func compat(cmd *cobra.Command, runtime string, compiled []string) (*compatReport, error) {
	tab := computecap.DefaultTable()
	gpu, err := parseSM(tab, "RUNTIME", runtime, "'jetbake compat 8.6 8.0'")
	if err != nil {
		return nil, err
	}
	report := &compatReport{GPU: gpu.String(), Description: tab.Describe(gpu)}
	if len(compiled) == 0 {
		m, err := LoadMatrix(cmd)
		if err != nil {
			return nil, &ExitError{Code: ExitCode(err), Err: err}
		}
		p, err := plan.New(m)
		if err != nil {
			return nil, &ExitError{Code: ExitFailure, Err: err}
		}
		report.Releases = compatReleases(m.Facts(), gpu, p)
		return report, nil
	}
	targets := make([]computecap.Capability, len(compiled))
	for i, s := range compiled {
		c, err := parseSM(tab, "COMPILED", s, "'jetbake compat 8.7 8.6'")
		if err != nil {
			return nil, err
		}
		targets[i] = c
	}
	report.Compiled = judge(tab, gpu, targets)
	report.Pick, report.Binary, report.Error = pick(tab, gpu, targets)
	return report, nil
}

// compatReleases judges every release of a plan with the table tab.
func compatReleases(tab *computecap.Table, gpu computecap.Capability, p *plan.Plan) []compatRelease {
	out := make([]compatRelease, 0, len(p.Releases))
	for _, r := range p.Releases {
		targets := make([]computecap.Capability, 0, len(r.Targets))
		for _, t := range r.Targets {
			if c, err := computecap.Parse(t.SM); err == nil {
				targets = append(targets, c)
			}
		}
		cr := compatRelease{Name: r.Name, JetPack: r.JetPack, Tags: r.Tags, Targets: judge(tab, gpu, targets)}
		cr.Pick, cr.Binary, cr.Error = pick(tab, gpu, targets)
		out = append(out, cr)
	}
	return out
}

// judge says for each target whether it runs on gpu, by the table tab.
func judge(tab *computecap.Table, gpu computecap.Capability, targets []computecap.Capability) []compatTarget {
	out := make([]compatTarget, len(targets))
	for i, t := range targets {
		ok, reason := tab.RunsOn(t, gpu)
		out[i] = compatTarget{SM: t.String(), Runs: ok, Reason: reason}
	}
	return out
}

// pick returns the target the entrypoint would run and its binary name, or
// the reason there is none.
func pick(tab *computecap.Table, gpu computecap.Capability, targets []computecap.Capability) (sm, binary, reason string) {
	c, err := tab.Pick(gpu, targets)
	if err != nil {
		var nb *computecap.NoBinaryError
		if errors.As(err, &nb) {
			return "", "", nb.Error()
		}
		return "", "", err.Error()
	}
	return c.String(), plan.BinaryName(c), ""
}

// anyPicked reports whether any release has a binary for the GPU.
func anyPicked(rs []compatRelease) bool {
	for _, r := range rs {
		if r.Pick != "" {
			return true
		}
	}
	return false
}

// writeCompatText writes a report for people to read.
func writeCompatText(w io.Writer, r *compatReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "GPU: %s\n", r.Description)
	writeTargets(&b, "  ", r.Compiled)
	if r.Releases == nil {
		if r.Pick != "" {
			fmt.Fprintf(&b, "picks: %s (%s)\n", r.Pick, r.Binary)
		} else {
			fmt.Fprintf(&b, "picks: nothing: %s\n", r.Error)
		}
	}
	for _, rel := range r.Releases {
		if rel.Pick != "" {
			fmt.Fprintf(&b, "%s (JetPack %s): picks %s (%s)\n", rel.Name, rel.JetPack, rel.Pick, rel.Binary)
		} else {
			fmt.Fprintf(&b, "%s (JetPack %s): no binary: %s\n", rel.Name, rel.JetPack, rel.Error)
		}
		writeTargets(&b, "  ", rel.Targets)
		if rel.Pick != "" && len(rel.Tags) > 0 {
			fmt.Fprintf(&b, "  image: %s\n", rel.Tags[0])
		}
	}
	if r.Releases != nil {
		b.WriteString("The image must also meet its JetPack's host rule (L4T release on JetPack 6, driver CUDA on JetPack 7): see docs/operators.md#running-an-image-on-a-jetson.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTargets writes one line per judged target.
func writeTargets(b *strings.Builder, indent string, ts []compatTarget) {
	for _, t := range ts {
		verdict := "does not run"
		if t.Runs {
			verdict = "runs"
		}
		fmt.Fprintf(b, "%s%-5s %s: %s\n", indent, t.SM, verdict, t.Reason)
	}
}
