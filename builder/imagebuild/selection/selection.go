// Package selection selects the releases of a build from a plan by name
// (jetbake build --release), refusing the names the plan lacks and a name
// given twice.
package selection

import (
	"fmt"
	"slices"

	"github.com/jetbake/jetbake/builder/plan"
)

// Releases returns the releases of p that names select, in the order
// given, or all of p's when names is empty. Names p lacks are a
// *plan.UnknownReleaseError, a name given twice a *DuplicateError.
// imagebuild's Build checks WithReleases with it; a caller checks them
// before it connects to BuildKit.
func Releases(p *plan.Plan, names []string) ([]plan.Release, error) {
	if len(names) == 0 {
		return p.Releases, nil
	}
	known := make([]string, len(p.Releases))
	for i, r := range p.Releases {
		known[i] = r.Name
	}
	var unknown []string
	for _, n := range names {
		if !slices.Contains(known, n) && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, &plan.UnknownReleaseError{Names: unknown, Valid: known}
	}
	var out []plan.Release
	for k, n := range names {
		if slices.Contains(names[:k], n) {
			return nil, &DuplicateError{Name: n}
		}
		out = append(out, p.Releases[slices.Index(known, n)])
	}
	return out, nil
}

// DuplicateError is a release that a selection (imagebuild.WithReleases)
// names twice.
type DuplicateError struct {
	// Name is the release.
	Name string
}

// Error names the release.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("release %q is selected twice: select each release once", e.Name)
}
