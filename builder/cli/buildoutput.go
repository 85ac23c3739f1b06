package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/tonistiigi/go-csvvalue"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/plan"
)

// listedRelease is one release of `build --list releases`, in the shape of
// `docker buildx bake --list type=targets,format=json`.
type listedRelease struct {
	// Name is the release, the name --release and --set take.
	Name string `json:"name"`
	// Description says what the release is for.
	Description string `json:"description,omitempty"`
}

// parseList parses a --list value as buildx bake parses its own: a type
// (releases, or targets as bake calls them), or type=TYPE,format=FORMAT.
// The format defaults to --format's.
func parseList(v string, defaultFormat format) (format, error) {
	fields, err := csvvalue.Fields(v, nil)
	if err != nil || len(fields) == 0 {
		return "", usageErrorf("--list %q: write releases, or type=releases,format=json", v)
	}
	typ, f := "", defaultFormat
	if len(fields) == 1 && !strings.Contains(v, "=") {
		typ, fields = v, nil
	}
	for _, field := range fields {
		k, val, ok := strings.Cut(field, "=")
		switch {
		case !ok:
			return "", usageErrorf("--list %q: %q is not KEY=VALUE: write releases, or type=releases,format=json", v, field)
		case k == "type":
			typ = val
		case k == "format":
			f = format(val)
		default:
			return "", usageErrorf("--list %q: unknown key %q: the keys are type and format", v, k)
		}
	}
	if typ != "releases" && typ != "targets" {
		return "", usageErrorf("--list %q: jetbake lists releases: write releases, or type=releases,format=json", v)
	}
	if f != formatText && f != formatJSON && f != "table" {
		return "", usageErrorf("--list %q: format %q is not known: use table or json", v, f)
	}
	return f, nil
}

// listReleases prints the releases of p, one line each or as JSON, and
// builds nothing.
func listReleases(cmd *cobra.Command, p *plan.Plan, list string, getFormat func() (format, error)) error {
	defaultFormat, err := getFormat()
	if err != nil {
		return err
	}
	f, err := parseList(list, defaultFormat)
	if err != nil {
		return err
	}
	out := make([]listedRelease, len(p.Releases))
	for i, r := range p.Releases {
		sms := make([]string, len(r.Targets))
		for k, t := range r.Targets {
			sms[k] = t.SM
		}
		out[i] = listedRelease{Name: r.Name, Description: fmt.Sprintf("JetPack %s (L4T %s, CUDA %s, Ubuntu %s), SM %s, %s",
			r.JetPack, r.L4T, r.CUDA, r.Ubuntu, strings.Join(sms, " "), r.Tier)}
	}
	if f == formatJSON {
		return writeJSON(cmd, out)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 1, 8, 1, '\t', 0)
	fmt.Fprintln(tw, "RELEASE\tDESCRIPTION")
	for _, r := range out {
		fmt.Fprintf(tw, "%s\t%s\n", r.Name, r.Description)
	}
	return tw.Flush()
}

// printReport prints what the build did: on stderr the warnings of
// BuildKit's Dockerfile checks, which ran while the routers were converted
// as in a docker build, one line per release, the router's commit and,
// with --timings, where the time went; then it writes --metadata-file and
// the report for --format json.
func (f *buildFlags) printReport(cmd *cobra.Command, report *imagebuild.Report, buildErr error) error {
	stderr := cmd.ErrOrStderr()
	for _, rr := range report.Releases {
		for _, finding := range rr.Findings {
			fmt.Fprintln(stderr, "jetbake: check:", finding)
		}
	}
	printSummary(stderr, report)
	printRouterSource(stderr, report)
	if f.timings && report.Timings != nil {
		_ = report.Timings.WriteTable(stderr)
	}
	if f.metadataFile != "" {
		if err := report.WriteFile(f.metadataFile); err != nil {
			return errors.Join(buildErr, err)
		}
	}
	return f.writeReport(cmd, report, buildErr)
}

// printSummary prints one line per release; the full report is what
// --metadata-file writes.
func printSummary(w io.Writer, r *imagebuild.Report) {
	for _, rel := range r.Releases {
		line := fmt.Sprintf("%-12s %-17s %6.1fs", rel.Name, rel.Outcome, rel.DurationSeconds)
		if rel.Digest != "" {
			line += " " + rel.Digest
		}
		if len(rel.Tags) > 0 {
			line += " tags: " + strings.Join(rel.Tags, ", ")
		}
		if rel.Facts != "" {
			line += " facts: " + rel.Facts
		}
		if rel.Error != "" {
			line += " error: " + rel.Error
		}
		fmt.Fprintln(w, line)
	}
}

// writeReport prints the report on stdout for --format json, the document
// --metadata-file writes. The build's error then goes to stderr only, so
// that stdout holds one JSON document.
func (f *buildFlags) writeReport(cmd *cobra.Command, report *imagebuild.Report, buildErr error) error {
	if fm, err := f.format(); err != nil || fm != formatJSON {
		return buildErr
	}
	data, err := report.MarshalWithBakeKeys()
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), string(data))
	if buildErr == nil {
		return nil
	}
	fmt.Fprintln(cmd.ErrOrStderr(), buildErr)
	return &ExitError{Code: ExitCode(buildErr)}
}
