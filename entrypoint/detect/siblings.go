package detect

import (
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// siblingQuery says which release of the image's family would do.
type siblingQuery struct {
	// gpu, when set, must be run by one of the release's targets.
	gpu *computecap.Capability
	// host, when set, is the host: the release must meet its host rule, and
	// the newest release not newer than the host's L4T is preferred.
	host *Host
}

// bestSibling finds the release of the image's family that fits q, other
// than the image's own; ok is false when the family knows none.
func bestSibling(img *ParsedDescription, q siblingQuery) (imagespec.Sibling, bool) {
	var best imagespec.Sibling
	var bestL4T computecap.L4TVersion
	found := false
	var hostL4T *computecap.L4TVersion
	if q.host != nil && q.host.HasL4T {
		hostL4T = &q.host.L4T
	}
	for _, s := range img.Family {
		v, ok := siblingL4T(tableOf(q), s)
		if s.Release == img.Release || !ok || !siblingFits(s, v, q) {
			continue
		}
		if !found || betterSibling(v, bestL4T, hostL4T) {
			best, bestL4T, found = s, v, true
		}
	}
	return best, found
}

// tableOf is the table of the query's host, else the shipped one.
func tableOf(q siblingQuery) *computecap.Table {
	if q.host != nil && q.host.table != nil {
		return q.host.table
	}
	return computecap.DefaultTable()
}

// siblingL4T is a sibling's L4T version, from its l4t or jetpack field.
func siblingL4T(t *computecap.Table, s imagespec.Sibling) (computecap.L4TVersion, bool) {
	if v, err := computecap.ParseL4TVersion(s.L4T); err == nil {
		return v, true
	}
	if major, ok := t.L4TMajorForJetPack(s.JetPack); ok {
		return computecap.L4TVersion{Major: major}, true
	}
	return computecap.L4TVersion{}, false
}

// siblingFits reports whether a sibling with L4T v meets q: the host rule,
// with the sibling's CUDA and forward-compatibility folders from the table
// (a sibling's description names neither), and a target that runs on the GPU.
func siblingFits(s imagespec.Sibling, v computecap.L4TVersion, q siblingQuery) bool {
	t := tableOf(q)
	if q.host != nil && q.host.HasL4T {
		needs := computecap.ImageNeeds{L4T: v}
		if cuda, ok := t.DriverCUDAForL4T(v); ok {
			needs.CUDA = cuda
			if f, _, ok := t.FlavourOfL4T(v.Major); ok {
				needs.CompatDirs = t.ShippedCompat(f, cuda)
			}
		}
		if vd := t.CheckHost(needs, q.host.ruleState(t, q.gpu)); !vd.OK {
			return false
		}
	}
	if q.gpu == nil {
		return true
	}
	for _, target := range s.Targets {
		if c, err := computecap.Parse(target); err == nil {
			if runs, _ := t.RunsOn(c, *q.gpu); runs {
				return true
			}
		}
	}
	return false
}

// betterSibling reports whether L4T v beats the best so far: with a host
// known, the newest not newer than the host, else the oldest newer one;
// without, the newest.
func betterSibling(v, best computecap.L4TVersion, hostL4T *computecap.L4TVersion) bool {
	if hostL4T == nil {
		return best.Less(v)
	}
	vFits, bestFits := !hostL4T.Less(v), !hostL4T.Less(best)
	switch {
	case vFits != bestFits:
		return vFits
	case vFits:
		return best.Less(v)
	default:
		return v.Less(best)
	}
}

// siblingName is how a message names a sibling: its first tag, else its
// release name.
func siblingName(s imagespec.Sibling) string {
	if len(s.Tags) > 0 {
		return s.Tags[0]
	}
	return "the " + s.Release + " image"
}
