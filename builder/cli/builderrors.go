package cli

import (
	"errors"
	"fmt"

	"github.com/jetbake/jetbake/builder/entrypoints"
	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/imagebuild/entrypointdir"
	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/selection"
	"github.com/jetbake/jetbake/builder/lock"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
)

// buildAdvice is what a build's warnings and report lines advise, in the
// words of build's flags (see imagebuild.Advice).
func buildAdvice() imagebuild.Advice {
	return imagebuild.Advice{
		ContinueOnError: "use --continue-on-error to build every release",
		Nodes:           "with --node NAME=ADDR",
		Offline:         offlineMirror,
	}
}

// offlineMirror is how a command with --mirror works where a registry's
// name does not resolve.
const offlineMirror = "pass --mirror REGISTRY=HOST[:PORT] naming a registry this machine can reach"

// flagError rewords the typed errors of the packages build and check call
// (imagebuild, lock, entrypoints, daemon), which name their options, as
// sentences that name the flags of build and check. A value of a flag that
// the build cannot take (--release, --push without a repository, --output,
// --progress, --check-lock without a lock file) is a usage error; the
// others keep the exit status of a failed build. Other errors are returned
// as they are.
func flagError(err error) error {
	var (
		unknown    *plan.UnknownReleaseError
		twice      *selection.DuplicateError
		output     *localoutput.Error
		progress   *progress.Error
		entrypoint *entrypointdir.Error
		missing    *entrypoints.MissingError
		noLock     *lock.NoLockFileError
		outside    *lock.OutsideError
	)
	switch {
	case errors.As(err, &unknown):
		return usageErrorf("--release: %w", unknown)
	case errors.As(err, &twice):
		return usageErrorf("--release %q is given twice", twice.Name)
	case errors.Is(err, imagebuild.ErrNoRepository):
		return usageErrorf("--push needs image.repository in the matrix")
	case errors.As(err, &output):
		return outputFlagError(output)
	case errors.As(err, &progress):
		return usageErrorf("--progress %s: %w", progress.Mode, progress.Err)
	case errors.As(err, &entrypoint):
		return entrypointFlagError(entrypoint)
	case errors.As(err, &missing):
		return reword(err, "%s, or give --entrypoint-dir", missing.Problem)
	case errors.As(err, &noLock):
		return usageErrorf("--check-lock: no lock file at %s; run 'jetbake lock' first", noLock.Path)
	case errors.As(err, &outside):
		return lockFileError(outside)
	}
	return daemonFlagError(err)
}

// reworded is a library's error in the words of a command's flags. It
// unwraps to the library's error, so that errors.Is and errors.As still
// reach it and its cause.
type reworded struct {
	text string
	err  error
}

func (e *reworded) Error() string { return e.text }
func (e *reworded) Unwrap() error { return e.err }

// reword returns err with the text format gives it.
func reword(err error, format string, args ...any) error {
	return &reworded{text: fmt.Sprintf(format, args...), err: err}
}

// lockFileError words a default lock file that leads out of the matrix's
// repository: --lock-file names another.
func lockFileError(e *lock.OutsideError) error {
	return usageErrorf("lock file %s %s: replace the link with the file, or name the file with --lock-file", e.Path, e.Leads)
}

// parseMirrors reads the values of --mirror.
func parseMirrors(values []string) (refs.Mirrors, error) {
	mirrors := refs.Mirrors{}
	for _, v := range values {
		if err := mirrors.ParseMirror(v); err != nil {
			return nil, usageErrorf("--mirror %q: want REGISTRY=HOST[:PORT], e.g. --mirror %s", v, refs.MirrorExample)
		}
	}
	return mirrors, nil
}

// outputFlagError words an --output value that imagebuild cannot take.
func outputFlagError(e *localoutput.Error) error {
	if e.Repeated {
		return usageErrorf("--output %s %s", e.Value, e.Problem)
	}
	msg := fmt.Sprintf("--output %q: %s", e.Value, e.Problem)
	if e.NotLocal {
		msg += " (use --push for a registry)"
	}
	return usageErrorf("%s", msg)
}

// entrypointFlagError words an entrypoint folder imagebuild cannot take:
// jetbake's checkout builds the binaries with 'make build'.
func entrypointFlagError(e *entrypointdir.Error) error {
	switch {
	case e.Dir == "":
		return errors.New("no entrypoint binaries: set --entrypoint-dir to the folder with the linux/arm64 jetbake-entrypoint, jetbake-cudaprobe and jetbake-probe ('make build' puts them in bin/linux-arm64)")
	case e.Missing != "":
		return fmt.Errorf("entrypoint folder %s lacks %s: run 'make build' (it cross-compiles them for linux/arm64)", e.Dir, e.Missing)
	}
	return fmt.Errorf("%s was built from jetbake commit %.12s but this jetbake is commit %.12s: run 'make build' so that the image gets the entrypoint of the jetbake that builds it, or leave out --entrypoint-dir",
		e.Binary, e.BuiltFrom, e.Tool)
}
