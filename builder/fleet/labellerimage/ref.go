package labellerimage

import (
	"fmt"
	"regexp"

	"github.com/jetbake/jetbake/builder/version"
)

// Repository is where jetbake's release workflow
// (.github/workflows/release.yml) publishes the labeller image of every
// release, tagged with the release's version.
const Repository = "ghcr.io/jetbake/jetbake-labeller"

// releaseVersion is a version `make release` accepts (its release-version
// check): a semantic version with a leading v.
var releaseVersion = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// notRelease are versions that look like one but are not a release: git
// describe's commits after a tag (v0.3.0-5-gabc1234) and Go's
// pseudo-versions (v0.0.0-20261130150000-abcdef123456).
var notRelease = regexp.MustCompile(`(-[0-9]+-g[0-9a-f]{7,40}|[.-][0-9]{14}-[0-9a-f]{12})$`)

// NotReleaseError is a jetbake whose version is not a release, so that no
// labeller image is published for it.
type NotReleaseError struct {
	// Version is the running jetbake's version.
	Version string
}

// Error says why there is no default image.
func (e *NotReleaseError) Error() string {
	return fmt.Sprintf("jetbake %s is not a release, so %s has no image for it", e.Version, Repository)
}

// BadInput marks the error as bad input.
func (e *NotReleaseError) BadInput() bool { return true }

// DefaultRef is the labeller image the release workflow publishes for v:
// Repository tagged with its version. A version that is not a release (a
// build of a checkout, a commit between tags, a modified tree) is a
// *NotReleaseError.
func DefaultRef(v version.Info) (string, error) {
	if v.Modified || !releaseVersion.MatchString(v.Version) || notRelease.MatchString(v.Version) {
		return "", &NotReleaseError{Version: v.String()}
	}
	return Repository + ":" + v.Version, nil
}
