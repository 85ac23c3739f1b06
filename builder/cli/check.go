package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/bake"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/dockercheck"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// checkReport is the JSON output of `jetbake check --format json`.
type checkReport struct {
	OK       bool                  `json:"ok"`
	Findings []dockercheck.Finding `json:"findings"`
}

// newCheckCommand builds `jetbake check`.
func newCheckCommand() *cobra.Command {
	var releases, mirrorFlags []string
	var d daemonFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Run BuildKit's Dockerfile checks on the router's Dockerfile for every release and SM",
		Long: "check asks BuildKit's Dockerfile frontend to check the router's Dockerfile (as 'docker build --check'\n" +
			"does) with the build args of each release and SM target. It prints every warning with its file and\n" +
			"line and exits 1 when the Dockerfile has errors. 'jetbake build' runs the same checks while it builds and reports their warnings.",
		Example: "  jetbake check\n  jetbake check --release jetpack6.2 --format json\n  jetbake check --mirror nvcr.io=127.0.0.1:5000",
		Args:    noArgs,
	}
	getFormat := addFormatFlag(cmd)
	cmd.Flags().StringSliceVar(&releases, "release", nil, "check only this release (repeatable, or comma-separated)")
	cmd.Flags().StringArrayVar(&mirrorFlags, "mirror", nil, "rewrite a base registry: REGISTRY=HOST[:PORT] (repeatable)")
	addDaemonFlags(cmd, &d)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		fm, err := getFormat()
		if err != nil {
			return err
		}
		p, mirrors, err := loadPlan(cmd, mirrorFlags)
		if err != nil {
			return err
		}
		if err := imagebuild.CheckOptions(p, imagebuild.WithReleases(releases...)); err != nil {
			return flagError(err) // an unknown --release, before any daemon is dialed
		}
		daemons, err := d.daemons()
		if err != nil {
			return err
		}
		opts, err := checkOptions(cmd, releases, mirrors)
		if err != nil {
			return err
		}
		logf := func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), "jetbake: "+format+"\n", args...) }
		nodes, closeNodes, err := bake.Connect(cmd.Context(), daemons, logf)
		if err != nil {
			return daemonFlagError(err)
		}
		defer closeNodes()
		findings, err := runCheck(cmd.Context(), nodes, p, opts...)
		if err != nil {
			return &ExitError{Code: ExitFailure, Err: flagError(err)}
		}
		if fm == formatJSON {
			report := checkReport{OK: !dockercheck.HasErrors(findings), Findings: findings}
			if report.Findings == nil {
				report.Findings = []dockercheck.Finding{}
			}
			if err := writeJSON(cmd, report); err != nil {
				return err
			}
		} else {
			printFindings(cmd.OutOrStdout(), findings)
		}
		if dockercheck.HasErrors(findings) {
			return &ExitError{Code: ExitFailure}
		}
		return nil
	}
	AddMatrixFlags(cmd, "")
	return cmd
}

// checkOptions are the imagebuild options check needs: releases, mirrors,
// the matrix's folder and the session's credentials.
func checkOptions(cmd *cobra.Command, releases []string, mirrors refs.Mirrors) ([]imagebuild.Option, error) {
	matrixDir, err := filepath.Abs(filepath.Dir(MatrixPath(cmd)))
	if err != nil {
		return nil, fmt.Errorf("the folder of matrix file %s: %w", MatrixPath(cmd), err)
	}
	return []imagebuild.Option{
		imagebuild.WithReleases(releases...),
		imagebuild.WithMirrors(mirrors),
		imagebuild.WithBaseDir(matrixDir),
		imagebuild.WithSession(bake.DockerAuth()),
		imagebuild.WithRemoteOptions(remote.WithAuthFromKeychain(authn.DefaultKeychain)),
	}, nil
}

// runCheck runs the Dockerfile checks of p on the first of nodes.
func runCheck(ctx context.Context, nodes []imagebuild.Node, p *plan.Plan, opts ...imagebuild.Option) ([]dockercheck.Finding, error) {
	return imagebuild.NewCluster(nodes, opts...).Check(ctx, p)
}

// printFindings prints one line per finding, or that there is none.
func printFindings(w io.Writer, findings []dockercheck.Finding) {
	if len(findings) == 0 {
		fmt.Fprintln(w, "jetbake: the router's Dockerfile passes BuildKit's checks for every release and SM")
		return
	}
	for _, f := range findings {
		fmt.Fprintln(w, f)
	}
}
