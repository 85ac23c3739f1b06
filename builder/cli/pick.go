package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/builder/refs"
)

// pickFlags are the flags of `jetbake pick`.
type pickFlags struct {
	sysroot   string
	explain   bool
	quiet     bool
	mirrors   []string
	getFormat func() (format, error)
	deadline  func(parent context.Context) (context.Context, context.CancelFunc, error)
}

// newPickCommand builds `jetbake pick`.
func newPickCommand() *cobra.Command {
	f := &pickFlags{}
	cmd := &cobra.Command{
		Use:   "pick REPOSITORY",
		Short: "Print the image of a repository that runs on this Jetson, fully qualified by digest",
		Long: "pick lists the repository's tags, reads each image's io.jetbake.* annotations or labels (manifest\n" +
			"and config only, no layers), applies the host rules of the entrypoint and prints the best image as\n" +
			"REPOSITORY:TAG@DIGEST. It prefers the host's exact JetPack release, then the newest compatible one,\n" +
			"then the supported tier over candidate. --explain says why each image was taken or refused. When\n" +
			"nothing fits it exits 1 with one sentence naming what the host would need; on a machine that is not\n" +
			"a Jetson it says so before it asks the registry anything (--sysroot reads a board's root file system\n" +
			"mounted elsewhere). Credentials come from the Docker config (docker login); --mirror reads the\n" +
			"repository through a mirror.",
		Example: "  docker run --runtime nvidia $(jetbake pick ghcr.io/jetbake/text-embeddings-router)\n" +
			"  jetbake pick --explain ghcr.io/jetbake/text-embeddings-router\n" +
			"  jetbake pick --mirror ghcr.io=registry.local:5000 --format json ghcr.io/jetbake/text-embeddings-router",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("%s takes one REPOSITORY, such as ghcr.io/jetbake/text-embeddings-router; run '%s --help'",
					cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runPick(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.sysroot, "sysroot", "/", "the host's root file system")
	fl.BoolVar(&f.explain, "explain", false, "print why each image was taken or refused")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not print progress on stderr")
	fl.StringArrayVar(&f.mirrors, "mirror", nil, "read a registry through a mirror: REGISTRY=HOST[:PORT] (repeatable)")
	f.getFormat = addFormatFlag(cmd)
	f.deadline = addTimeoutFlag(cmd)
	return cmd
}

// runPick picks the image of repository for this host and prints it.
func runPick(cmd *cobra.Command, repository string, f *pickFlags) error {
	fm, err := f.getFormat()
	if err != nil {
		return err
	}
	m, err := parseMirrors(f.mirrors)
	if err != nil {
		return err
	}
	opts := []imagepick.Option{imagepick.WithSysroot(f.sysroot), imagepick.WithMirrors(m),
		imagepick.WithNotJetsonFix("run jetbake pick on the Jetson itself, or pass --sysroot DIR with the board's root file system")}
	if !f.quiet {
		// The progress lines hold tags a registry chose: escape them.
		stderr := cmd.ErrOrStderr()
		opts = append(opts, imagepick.WithProgress(func(line string) { fmt.Fprintln(stderr, refs.Printable(line)) }))
	}
	ctx, cancel, err := registryContext(cmd.Context(), f.deadline)
	if err != nil {
		return err
	}
	defer cancel()
	res, err := imagepick.Pick(ctx, repository, opts...)
	var noFit *imagepick.NoFitError
	if err != nil && !errors.As(err, &noFit) {
		return sysrootFlagError(err)
	}
	out := cmd.OutOrStdout()
	switch {
	case fm == formatJSON:
		err = res.WriteJSON(out)
	case f.explain:
		err = res.WriteExplain(out)
	default:
		err = res.WriteText(out)
	}
	if err != nil {
		return err
	}
	if noFit != nil && fm == formatJSON {
		return &ExitError{Code: ExitFailure} // the sentence is in the JSON document
	}
	if noFit != nil {
		return &ExitError{Code: ExitFailure, Err: noFit}
	}
	return nil
}
