package main

import (
	computecap "github.com/jetbake/jetbake/compute_cap"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// siblingQuery says which release of the image's family would do.
type siblingQuery struct {
	// gpu, when set, must be run by one of the release's targets.
	gpu *computecap.Capability
	// host, when set, is the host's L4T: the release must share its major,
	// and the newest release not newer than the host is preferred.
	host *l4tVersion
}

// bestSibling finds the release of the image's family that fits q, other
// than the image's own; ok is false when the family knows none.
func bestSibling(img *image, q siblingQuery) (imagespec.Sibling, bool) {
	var best imagespec.Sibling
	var bestL4T l4tVersion
	found := false
	for _, s := range img.Family {
		v, ok := siblingL4T(s)
		if s.Release == img.Release || !ok || !siblingFits(s, v, q) {
			continue
		}
		if !found || betterSibling(v, bestL4T, q.host) {
			best, bestL4T, found = s, v, true
		}
	}
	return best, found
}

// siblingL4T is a sibling's L4T version, from its l4t or jetpack field.
func siblingL4T(s imagespec.Sibling) (l4tVersion, bool) {
	if v, err := parseL4TVersion(s.L4T); err == nil {
		return v, true
	}
	if major, ok := computecap.L4TMajorForJetPack(s.JetPack); ok {
		return l4tVersion{Major: major}, true
	}
	return l4tVersion{}, false
}

// siblingFits reports whether a sibling with L4T v meets q.
func siblingFits(s imagespec.Sibling, v l4tVersion, q siblingQuery) bool {
	if q.host != nil && v.Major != q.host.Major {
		return false
	}
	if q.gpu == nil {
		return true
	}
	for _, t := range s.Targets {
		if c, err := computecap.Parse(t); err == nil {
			if runs, _ := computecap.RunsOn(c, *q.gpu); runs {
				return true
			}
		}
	}
	return false
}

// betterSibling reports whether L4T v beats the best so far: with a host
// known, the newest not newer than the host, else the oldest newer one;
// without, the newest.
func betterSibling(v, best l4tVersion, host *l4tVersion) bool {
	if host == nil {
		return best.less(v)
	}
	vFits, bestFits := !host.less(v), !host.less(best)
	switch {
	case vFits != bestFits:
		return vFits
	case vFits:
		return best.less(v)
	default:
		return v.less(best)
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
