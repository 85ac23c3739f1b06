package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetbake/jetbake/builder/imageaudit"
	"github.com/jetbake/jetbake/computecap"
)

// auditTimeout is how long `jetbake audit` may take in all by default: it
// reads every layer of images of several GB.
const auditTimeout = 30 * time.Minute

// auditFlags are the flags of `jetbake audit`.
type auditFlags struct {
	gpus      []string
	explain   bool
	strict    bool
	quiet     bool
	mirrors   []string
	getFormat func() (format, error)
	deadline  func(parent context.Context) (context.Context, context.CancelFunc, error)
}

// newAuditCommand builds `jetbake audit`.
func newAuditCommand() *cobra.Command {
	f := &auditFlags{}
	cmd := &cobra.Command{
		Use:   "audit IMAGE|PATH",
		Short: "Tell which GPUs can run an image or ELF files, from the CUDA code inside them",
		Long: "audit reads each layer of IMAGE once (whiteouts and later layers applied), looks at its ELF files only,\n" +
			"reads the CUDA fat binaries in them (cubins and PTX, and their SM) and judges each file for each GPU:\n" +
			"runs (a cubin for its SM, or an older one on a desktop GPU), JIT (PTX for it or an older compute\n" +
			"capability), partial (some of its fat binaries hold code for it, the others only other GPUs' kernels,\n" +
			"as NVIDIA's own libraries do: it loads, and those kernels fail if launched), or no code. Only the fat\n" +
			"binaries the CUDA runtime loads (.nv_fatbin) are judged, never __nv_relfatbin's relocatable copies.\n" +
			"A Jetson runs only cubins built for its own SM. IMAGE is a reference in a registry (credentials\n" +
			"from the Docker config; --mirror), an OCI layout folder or a Docker tarball.\n" +
			"PATH is files before they are an image, judged the same way: one ELF file (an executable or a shared\n" +
			"library), or a folder that is not an OCI layout, whose ELF files are all read, other files skipped,\n" +
			"and shown by their paths in it (symbolic links are not followed, nor are pipes or devices read).\n" +
			"Without --gpu it audits an image for its own SM targets (the io.jetbake.sm-targets annotation); a\n" +
			"PATH needs --gpu.\n" +
			"Exit status: 0 if every GPU has code in every CUDA file (a partial file warns on stderr; --strict\n" +
			"makes it 1), 1 if some file has no code for a GPU, 2 on bad input (a --gpu jetbake's table does not know\n" +
			"is one: the error lists the SMs it knows; a PATH that is none of the above is another: the error says\n" +
			"what it is).",
		Example: "  jetbake audit ghcr.io/jetbake/text-embeddings-router:1.8-jetpack6.2\n" +
			"  jetbake audit --gpu 8.7 --gpu 11.0 nvcr.io/nvidia/pytorch:25.08-py3-igpu\n" +
			"  jetbake audit --gpu 8.7 --explain ./image.tar\n  jetbake audit --gpu 8.7 --format json ./oci-layout\n" +
			"  jetbake audit --gpu 8.7 ./build/libkernels.so\n  jetbake audit --gpu 8.7 --gpu 11.0 --strict ./venv/lib/python3.12/site-packages",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("%s takes one IMAGE or PATH, such as ghcr.io/acme/app:1.0, ./image.tar, ./oci-layout, ./libkernels.so or ./build; run '%s --help'",
					cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runAudit(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.gpus, "gpu", nil, "a GPU's compute capability to audit for, such as 8.7 (repeatable; default: the image's SM targets)")
	fl.BoolVar(&f.explain, "explain", false, "print the verdict of each file for each GPU, and why")
	fl.BoolVar(&f.strict, "strict", false, "exit 1 when a file is partial for a GPU (some fat binaries without code for it), not only when it has none")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not print progress on stderr")
	fl.StringArrayVar(&f.mirrors, "mirror", nil, "read a registry through a mirror: REGISTRY=HOST[:PORT] (repeatable)")
	f.getFormat = addFormatFlag(cmd)
	f.deadline = addTimeoutFlag(cmd)
	_ = fl.Set("timeout", auditTimeout.String())
	fl.Lookup("timeout").DefValue = auditTimeout.String()
	return cmd
}

// runAudit audits one image and prints the report.
func runAudit(cmd *cobra.Command, src string, f *auditFlags) error {
	fm, err := f.getFormat()
	if err != nil {
		return err
	}
	gpus, err := parseGPUs(f.gpus)
	if err != nil {
		return err
	}
	m, err := parseMirrors(f.mirrors)
	if err != nil {
		return err
	}
	opts := []imageaudit.Option{imageaudit.WithMirrors(m)}
	if !f.quiet {
		stderr := cmd.ErrOrStderr()
		opts = append(opts, imageaudit.WithProgress(func(line string) { fmt.Fprintln(stderr, "audit: "+line) }))
	}
	ctx, cancel, err := registryContext(cmd.Context(), f.deadline)
	if err != nil {
		return err
	}
	defer cancel()
	im, err := imageaudit.Open(ctx, src, opts...)
	if err != nil {
		return err
	}
	if gpus == nil {
		if gpus, err = imageTargets(im); err != nil {
			return err
		}
	}
	report, err := imageaudit.Audit(ctx, im, gpus, opts...)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	switch {
	case fm == formatJSON:
		err = report.WriteJSON(out)
	case f.explain:
		err = report.WriteExplain(out)
	default:
		err = report.WriteText(out)
	}
	if err != nil {
		return err
	}
	if !report.OK {
		return &ExitError{Code: ExitFailure} // the sentence is the output's last line
	}
	if report.Partial {
		if f.strict {
			return &ExitError{Code: ExitFailure} // the sentence says it
		}
		fmt.Fprintln(cmd.ErrOrStderr(), "audit: warning: some files are partial: their fat binaries without code for a GPU load, "+
			"and their kernels fail if launched there (--strict fails on it)")
	}
	return nil
}

// parseGPUs reads the --gpu values; nil when none is given.
func parseGPUs(values []string) ([]computecap.Capability, error) {
	var out []computecap.Capability
	tab := computecap.DefaultTable()
	for _, v := range values {
		c, err := parseSM(tab, "--gpu", v, "--gpu 8.6")
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// imageTargets are the image's own SM targets, for an audit without --gpu.
func imageTargets(im *imageaudit.Opened) ([]computecap.Capability, error) {
	targets, err := im.Targets()
	var nt *imageaudit.NoTargetsError
	if errors.As(err, &nt) {
		return nil, usageErrorf("%w: pass --gpu, such as --gpu 8.7 --gpu 11.0", err)
	}
	if err != nil {
		return nil, err
	}
	out := make([]computecap.Capability, 0, len(targets))
	for _, s := range targets {
		c, err := computecap.Parse(s)
		if err != nil {
			return nil, usageErrorf("IMAGE %s: its io.jetbake.sm-targets annotation holds %w: pass --gpu instead", im.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}
