package matrix

import (
	"strings"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// A floating tag is one that names a JetPack line other than its release's
// own JetPack: "jetpack7" on the 7.2 release covers every JetPack 7.x host.
// Such a tag must not point at an image that refuses a host of a release it
// covers, by the host rule (computecap.Table.CheckHost, the entrypoint's
// rule) or for want of a binary for the host's GPU.

// tagJetPack finds the JetPack version a tag names after "jetpack"
// ("1.8.0-jetpack7" names "7"); false when it names none.
func tagJetPack(tag string) (string, bool) {
	lower := strings.ToLower(tag)
	i := strings.Index(lower, "jetpack")
	if i < 0 {
		return "", false
	}
	rest := lower[i+len("jetpack"):]
	end := 0
	for end < len(rest) && (rest[end] == '.' || (rest[end] >= '0' && rest[end] <= '9')) {
		end++
	}
	v := strings.Trim(rest[:end], ".")
	return v, v != ""
}

// stranded is a host of a covered release that an image refuses.
type stranded struct {
	soc     computecap.SoC
	release computecap.JetPackRelease
	reason  string
}

// releaseNeeds is what the host rule needs of a release's image: its L4T,
// CUDA and the forward-compatibility folders the table says its base ships.
func releaseNeeds(t *computecap.Table, r *Release) (computecap.ImageNeeds, bool) {
	n, err := host.Needs(t, host.ImageFields{L4T: r.L4T, JetPack: r.JetPack, CUDA: r.CUDA}, nil)
	if err != nil {
		return n, false
	}
	if f, _, ok := t.FlavourOfL4T(n.L4T.Major); ok {
		n.CompatDirs = t.ShippedCompat(f, n.CUDA)
	}
	return n, true
}

// strandedHost finds the first host of a JetPack release in line that the
// image of r refuses; false when every such host runs it.
func strandedHost(t *computecap.Table, r *Release, line string) (stranded, bool) {
	needs, ok := releaseNeeds(t, r)
	targets := r.Targets
	if !ok {
		return stranded{}, false
	}
	for _, jp := range t.Releases() {
		if jp.Preview || !computecap.LineCovers(line, jp.JetPack) {
			continue
		}
		l4t, err := computecap.ParseL4TVersion(jp.L4T)
		if err != nil {
			continue
		}
		for _, soc := range t.SoCs {
			if !soc.Supports(jp.JetPack) {
				continue
			}
			st := computecap.HostState{SoC: soc, HasSoC: true, L4T: l4t, HasL4T: true, Driver: jp.CUDA, HasDriver: true}
			if v := t.CheckHost(needs, st); !v.OK {
				return stranded{soc: soc, release: jp, reason: v.Reason()}, true
			}
			if _, err := t.Pick(soc.Capability, targets); err != nil {
				return stranded{soc: soc, release: jp, reason: "the image has no binary for " + t.Describe(soc.Capability)}, true
			}
		}
	}
	return stranded{}, false
}

// checkFloatingTags reports every floating tag template that points an
// image at a host it refuses, once per template and release.
func checkFloatingTags(m *Matrix, errs *checker) {
	if m.Version() == "" { // missing or of the wrong form: reported by the schema
		return
	}
	t := errs.facts()
	for i := range m.Releases {
		r := &m.Releases[i]
		if !tagInputsOK(r) {
			continue
		}
		lookup := func(name string) (string, bool) { return tagValue(m, r, name) }
		for ref, template := range templatesOf(m, i) {
			tag, err := expandTag(template, lookup)
			line, ok := tagJetPack(tag)
			if err != nil || !ok || line == r.JetPack {
				continue
			}
			s, found := strandedHost(t, r, line)
			if !found {
				continue
			}
			errs.addString(ref.path(), template,
				"floating tag \""+tag+"\" points at the "+r.Name+" image, which refuses a Jetson "+s.soc.Family+
					" on JetPack "+s.release.JetPack+" (L4T "+s.release.L4T+"), a host the tag covers: "+s.reason,
				floatingFix(m, t, i, line))
		}
	}
}

// floatingFix names a release every host of line runs, else asks to drop
// the tag.
func floatingFix(m *Matrix, t *computecap.Table, self int, line string) string {
	for j := range m.Releases {
		if j == self {
			continue
		}
		r := &m.Releases[j]
		covered := false
		for _, jp := range t.Releases() {
			covered = covered || (!jp.Preview && computecap.LineCovers(line, jp.JetPack))
		}
		if _, bad := strandedHost(t, r, line); covered && !bad {
			return "move the tag to " + r.Name + ", which every JetPack " + line + " host runs, or drop it"
		}
	}
	return "drop the tag: no release of the matrix runs on every JetPack " + line +
		" host; name the release instead, e.g. \"jetpack" + m.Releases[self].JetPack + "\""
}
