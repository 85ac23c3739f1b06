package cli

import (
	"errors"
	"fmt"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/plan"
)

// buildAdvice is what a build's warnings and report lines advise, in the
// words of build's flags (see imagebuild.Advice).
func buildAdvice() imagebuild.Advice {
	return imagebuild.Advice{
		ContinueOnError: "use --continue-on-error to build every release",
		Nodes:           "with --node NAME=ADDR",
	}
}

// flagError rewords the typed errors of imagebuild, which name its
// options, as sentences that name the flags of build and check. A bad
// --release or --output value is a usage error; the others keep the exit
// status of a failed build. Other errors are returned as they are.
func flagError(err error) error {
	var (
		unknown    *plan.UnknownReleaseError
		twice      *imagebuild.DuplicateReleaseError
		output     *imagebuild.OutputError
		progress   *imagebuild.ProgressError
		entrypoint *imagebuild.EntrypointError
	)
	switch {
	case errors.As(err, &unknown):
		return usageErrorf("--release: %w", unknown)
	case errors.As(err, &twice):
		return usageErrorf("--release %q is given twice", twice.Name)
	case errors.Is(err, imagebuild.ErrNoRepository):
		return errors.New("--push needs image.repository in the matrix")
	case errors.As(err, &output):
		return outputFlagError(output)
	case errors.As(err, &progress):
		return fmt.Errorf("--progress %s: %w", progress.Mode, progress.Err)
	case errors.As(err, &entrypoint):
		return entrypointFlagError(entrypoint)
	}
	return err
}

// outputFlagError words an --output value that imagebuild cannot take.
func outputFlagError(e *imagebuild.OutputError) error {
	if e.Repeated {
		return fmt.Errorf("--output %s %s", e.Value, e.Problem)
	}
	msg := fmt.Sprintf("--output %q: %s", e.Value, e.Problem)
	if e.NotLocal {
		msg += " (use --push for a registry)"
	}
	return usageErrorf("%s", msg)
}

// entrypointFlagError words an entrypoint folder imagebuild cannot take:
// jetbake's checkout builds the binaries with 'make build'.
func entrypointFlagError(e *imagebuild.EntrypointError) error {
	switch {
	case e.Dir == "":
		return errors.New("no entrypoint binaries: set --entrypoint-dir to the folder with the linux/arm64 jetbake-entrypoint and jetbake-cudaprobe ('make build' puts them in bin/linux-arm64)")
	case e.Missing != "":
		return fmt.Errorf("entrypoint folder %s lacks %s: run 'make build' (it cross-compiles them for linux/arm64)", e.Dir, e.Missing)
	}
	return fmt.Errorf("%s was built from jetbake commit %.12s but this jetbake is commit %.12s: run 'make build' so that the image gets the entrypoint of the jetbake that builds it, or leave out --entrypoint-dir",
		e.Binary, e.BuiltFrom, e.Tool)
}
