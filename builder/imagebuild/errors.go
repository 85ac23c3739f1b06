package imagebuild

import "errors"

// The errors of this file are a build's options that it cannot take. Their
// text names the option as this package does; a command that set the
// option from a flag reads their fields and names its flag instead. The
// selection's unknown releases are a *plan.UnknownReleaseError, a release
// selected twice a *selection.DuplicateError.

// ErrNoRepository is WithPush on a plan without image.repository.
var ErrNoRepository = errors.New("pushing needs image.repository in the matrix")
