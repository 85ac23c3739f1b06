package imagebuild

import (
	"errors"
	"fmt"
)

// The errors of this file are a build's options that it cannot take. Their
// text names the option as this package does; a command that set the
// option from a flag reads their fields and names its flag instead. The
// selection's unknown releases are a *plan.UnknownReleaseError.

// ErrNoRepository is WithPush on a plan without image.repository.
var ErrNoRepository = errors.New("pushing needs image.repository in the matrix")

// DuplicateReleaseError is a release that WithReleases names twice.
type DuplicateReleaseError struct {
	// Name is the release.
	Name string
}

// Error names the release.
func (e *DuplicateReleaseError) Error() string {
	return fmt.Sprintf("release %q is selected twice: select each release once", e.Name)
}

// EntrypointError is a WithEntrypointDir folder the images cannot take
// their entrypoint binaries from: none given, one that lacks a binary, or
// one whose binaries were built from another jetbake commit than the one
// WithTool names.
type EntrypointError struct {
	// Dir is the folder; "" when none was given.
	Dir string
	// Missing is the binary the folder lacks, if that is the problem.
	Missing string
	// Binary, BuiltFrom and Tool are, when the commits differ, the binary,
	// the commit it was built from and the commit of the jetbake that builds.
	Binary, BuiltFrom, Tool string
}

// Error says what is wrong with the folder and the fix.
func (e *EntrypointError) Error() string {
	switch {
	case e.Dir == "":
		return "no entrypoint binaries: give WithEntrypointDir the folder with the linux/arm64 jetbake-entrypoint, jetbake-cudaprobe and jetbake-probe"
	case e.Missing != "":
		return fmt.Sprintf("entrypoint folder %s lacks %s: cross-compile it for linux/arm64 into that folder", e.Dir, e.Missing)
	}
	return fmt.Sprintf("%s was built from jetbake commit %.12s but this jetbake is commit %.12s: build the entrypoint binaries from this jetbake's commit",
		e.Binary, e.BuiltFrom, e.Tool)
}
