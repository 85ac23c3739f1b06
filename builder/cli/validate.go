package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/matrix"
)

// validateReport is the JSON output of `jetbake validate --format json`.
type validateReport struct {
	File    string              `json:"file"`
	OK      bool                `json:"ok"`
	Summary string              `json:"summary,omitempty"`
	Errors  []matrix.FieldError `json:"errors"`
	// Warnings are what a valid matrix should still change (the
	// placeholders jetbake init writes); they do not fail validate.
	Warnings []matrix.FieldError `json:"warnings"`
	// Declared are the releases that rest on facts the matrix declares.
	Declared []declaredRelease `json:"declared,omitempty"`
}

// declaredRelease is a release that rests on declared facts.
type declaredRelease struct {
	Release string `json:"release"`
	// Facts is matrix.FactsDeclared.
	Facts string `json:"facts"`
	// Note names the declared rows and where they are.
	Note string `json:"note"`
}

// declaredReleases lists the releases of m that rest on declared facts.
func declaredReleases(m *matrix.Matrix) []declaredRelease {
	var out []declaredRelease
	for i := range m.Releases {
		if note := m.FactsNote(&m.Releases[i]); note != "" {
			out = append(out, declaredRelease{Release: m.Releases[i].Name, Facts: matrix.FactsDeclared, Note: note})
		}
	}
	return out
}

// newValidateCommand builds `jetbake validate`.
func newValidateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the matrix and list every problem with its fix",
		Long: "validate reads the matrix file and checks its shape (the rules of matrix.schema.json) and the\n" +
			"Jetson facts: the L4T of each JetPack, the SMs its modules have, the SMs its CUDA can build, pinned\n" +
			"git contexts, unique release names and tags. The router's local context and Dockerfile must lie in\n" +
			"the matrix's repository (its git work tree, or its folder outside git) unless --allow fs.read=PATH\n" +
			"grants more, as 'docker buildx bake --allow' does. It prints one line per problem, naming the JSON\n" +
			"path, the value and the fix, and exits 1 if there is any. For an app's matrix it also checks each\n" +
			"release's framework container against NVIDIA's PyTorch containers by JetPack line (docs/apps.md).\n" +
			"Facts the matrix declares (under \"facts\", or in the file it names; docs/facts.md) are checked by the\n" +
			"rules of jetbake's own table, and the releases that rest on them are named.\n" +
			"A valid matrix that still holds the placeholders 'jetbake init' writes (image.repository\n" +
			"ghcr.io/example/router, image.source https://github.com/example/router) gets a warning naming the\n" +
			"field and the fix, on stderr (in JSON, \"warnings\"), and exits 0.",
		Example: "  jetbake validate\n  jetbake validate -f ci/matrix.json --format json\n" +
			"  jetbake validate --format github   # annotations on the matrix's lines in a GitHub Actions run\n" +
			"  jetbake validate --strict --metadata-file build.json   # 'supported' needs fresh hardware evidence\n" +
			"  jetbake validate --allow fs.read=../router   # a router folder outside the repository",
		Args: noArgs,
	}
	getFormat := addFormatFlag(cmd, formatText, formatJSON, formatGitHub)
	strict := addStrictFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		f, err := getFormat()
		if err != nil {
			return err
		}
		return runValidate(cmd, f, strict)
	}
	AddMatrixFlags(cmd, "")
	return cmd
}

// runValidate loads the matrix and reports the result in format f.
func runValidate(cmd *cobra.Command, f format, strict strictCheck) error {
	path := MatrixPath(cmd)
	m, err := LoadMatrix(cmd)
	var verr *matrix.ValidationError
	if err != nil && !errors.As(err, &verr) {
		return &ExitError{Code: ExitCode(err), Err: err}
	}
	if err == nil {
		extra, serr := strict(cmd.Context(), m)
		if serr != nil {
			return serr
		}
		if len(extra) > 0 {
			verr = &matrix.ValidationError{File: path, Errors: extra}
			err = verr
		}
	}
	if f == formatJSON {
		report := validateReport{File: path, OK: err == nil, Errors: []matrix.FieldError{}, Warnings: []matrix.FieldError{}}
		if verr != nil {
			report.Errors = verr.Errors
		} else {
			report.Summary = m.Summary()
			report.Declared = declaredReleases(m)
			if m.Warnings != nil {
				report.Warnings = m.Warnings
			}
		}
		if werr := writeJSON(cmd, report); werr != nil {
			return werr
		}
		if err != nil {
			return &ExitError{Code: ExitFailure}
		}
		return nil
	}
	if err != nil && f == formatGitHub {
		_, werr := io.WriteString(cmd.OutOrStdout(), verr.GitHubAnnotations())
		return errors.Join(werr, &ExitError{Code: ExitFailure})
	}
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err} // validate's finding, not bad input
	}
	if f == formatGitHub {
		if _, werr := io.WriteString(cmd.OutOrStdout(), matrix.WarningAnnotations(path, m.Warnings)); werr != nil {
			return werr
		}
	} else {
		// Warnings leave the matrix valid: stderr, and exit 0.
		_, _ = io.WriteString(cmd.ErrOrStderr(), matrix.WarningLines(path, m.Warnings))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: ok\n", path, m.Summary())
	for _, d := range declaredReleases(m) {
		fmt.Fprintf(&b, "%s: release %s %s: %s=%s\n", path, d.Release, d.Note, matrix.KeyFacts, d.Facts)
	}
	_, werr := io.WriteString(cmd.OutOrStdout(), b.String())
	return werr
}

// writeJSON writes v as indented JSON to the command's output.
func writeJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// noArgs refuses positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q; run '%s --help'", cmd.CommandPath(), args[0], cmd.CommandPath())
	}
	return nil
}
