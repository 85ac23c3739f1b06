// Package fleet writes the Kubernetes objects that run a built matrix on a
// fleet of Jetsons: one workload per release, pinned by digest, whose node
// affinity is the host rule of the entrypoint and the preference of `jetbake
// pick`, written over the node labels `jetbake doctor --node-labels` gives
// (builder/doctor's Label* keys). A node gets a release's pod only where the
// entrypoint would start it, and only the release pick would choose there:
// no node gets two, and no node that one fits gets none.
package fleet

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/jetbake/jetbake/builder/doctor"
	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/imagepick"
	"github.com/jetbake/jetbake/computecap"
)

// Release is one built release: its name, the image pinned by digest and
// what the image says of itself.
type Release struct {
	// Name is the matrix release, such as "jetpack6.2".
	Name string
	// Image is REPOSITORY@sha256:..., the image by digest.
	Image string
	// Meta is the image's io.jetbake.* metadata (JetPack, L4T, CUDA, SM
	// targets, tier, version, audit).
	Meta imagepick.Meta
}

// maxProbe bounds the minor versions probed for a rule's threshold.
const maxProbe = 100

// fitTerm is where release r runs on a GPU of capability sm, as the host
// rule (hostfit.Compatible, the entrypoint's computecap.Table.CheckHost)
// says: the release's line (the L4T major for JetPack 6 and earlier, the
// driver's CUDA major for JetPack 7 and later) and the lowest minor of it
// that passes, found by asking the rule itself. ok is false when the
// release never runs on sm.
func fitTerm(r Release, sm computecap.Capability) (atoms []atom, ok bool) {
	claims, err := claimsOf(r.Meta)
	if err != nil {
		return nil, false
	}
	t := computecap.DefaultTable()
	if claims.Declared != nil {
		t, _ = t.Declare(computecap.Facts{JetPacks: []computecap.JetPackRelease{*claims.Declared}})
	}
	if _, err := t.Pick(sm, claims.Targets); err != nil {
		return nil, false
	}
	_, rule, known := t.FlavourOfL4T(claims.L4T.Major)
	driverRule := known && rule == computecap.RuleDriverCUDA && !claims.CUDA.IsZero()
	for minor := 0; minor < maxProbe; minor++ {
		h := hostfit.Host{GPU: sm}
		if driverRule {
			h.DriverCUDA = computecap.CUDAVersion{Major: claims.CUDA.Major, Minor: minor}
		} else {
			h.L4T = computecap.L4TVersion{Major: claims.L4T.Major, Minor: minor}
		}
		if !hostfit.Compatible(h, claims).OK {
			continue
		}
		if driverRule {
			atoms = []atom{in(doctor.LabelDriverCUDAMajor, strconv.Itoa(claims.CUDA.Major))}
			if minor > 0 {
				atoms = append(atoms, gt(doctor.LabelDriverCUDAMinor, minor-1))
			}
			return atoms, true
		}
		atoms = []atom{in(doctor.LabelL4TMajor, strconv.Itoa(claims.L4T.Major))}
		if minor > 0 {
			atoms = append(atoms, gt(doctor.LabelL4TMinor, minor-1))
		}
		return atoms, true
	}
	return nil, false
}

// claimsOf is the host rule's view of an image's metadata.
func claimsOf(m imagepick.Meta) (hostfit.ImageClaims, error) {
	l4t, err := computecap.ParseL4TVersion(m.L4T)
	if err != nil {
		return hostfit.ImageClaims{}, err
	}
	cuda, err := computecap.ParseCUDAVersion(m.CUDA)
	if err != nil {
		return hostfit.ImageClaims{}, err
	}
	c := hostfit.ImageClaims{JetPack: m.JetPack, L4T: l4t, CUDA: cuda, Declared: m.DeclaredJetPack()}
	for _, s := range m.Targets {
		sm, err := computecap.Parse(s)
		if err != nil {
			return c, err
		}
		c.Targets = append(c.Targets, sm)
	}
	return c, nil
}

// everyOK is a rule under which every image runs: it leaves pick's
// preference alone to compare two releases.
func everyOK(hostfit.Host, hostfit.ImageClaims) hostfit.Verdict { return hostfit.Verdict{OK: true} }

// preferred reports whether pick prefers b to a on a host with GPU sm
// whose JetPack release is jetpack ("" for neither's).
func preferred(b, a Release, sm computecap.Capability, jetpack string) bool {
	order := imagepick.Order(hostfit.Host{GPU: sm, JetPack: jetpack}, []imagepick.Meta{a.Meta, b.Meta}, everyOK)
	return len(order) == 2 && order[0] == 1
}

// Affinities computes each release's node affinity, by release name. A
// release no labelled node would get has none in the map.
func Affinities(releases []Release) (map[string]*corev1.NodeAffinity, error) {
	var sms []computecap.Capability
	for _, r := range releases {
		c, err := claimsOf(r.Meta)
		if err != nil {
			return nil, fmt.Errorf("release %s: %w", r.Name, err)
		}
		for _, sm := range c.Targets {
			if !slices.Contains(sms, sm) {
				sms = append(sms, sm)
			}
		}
	}
	slices.SortFunc(sms, func(a, b computecap.Capability) int { return a.Compare(b) })
	out := map[string]*corev1.NodeAffinity{}
	for _, a := range releases {
		var terms []corev1.NodeSelectorTerm
		for _, sm := range sms {
			for _, t := range placeTerms(a, releases, sm) {
				terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: t.requirements()})
			}
		}
		if len(terms) > 0 {
			out[a.Name] = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}
		}
	}
	return out, nil
}

// placeTerms are the nodes with GPU sm that get release a: a fits, and
// every other release b that fits too is one pick ranks below a there.
func placeTerms(a Release, releases []Release, sm computecap.Capability) dnf {
	fitA, ok := fitTerm(a, sm)
	if !ok {
		return nil
	}
	base := term{}
	for _, at := range append([]atom{in(doctor.LabelJetson, "true"), in(doctor.LabelNVIDIARuntime, "true"), in(doctor.LabelSM, sm.String())}, fitA...) {
		base, _ = base.with(at)
	}
	d := dnf{base}
	for _, b := range releases {
		if b.Name == a.Name {
			continue
		}
		fitB, ok := fitTerm(b, sm)
		if !ok {
			continue
		}
		// b does not take the node from a: b does not fit, or the node's
		// JetPack is one where pick ranks a first.
		var clause [][]atom
		for _, at := range fitB {
			clause = append(clause, []atom{at.negate()})
		}
		clause = append(clause, notPreferredRegions(a, b, sm)...)
		d = d.and(clause)
	}
	return d
}

// notPreferredRegions are the node JetPack releases (as label
// requirements) where pick ranks a before b.
func notPreferredRegions(a, b Release, sm computecap.Capability) [][]atom {
	var out [][]atom
	ja, jb := a.Meta.JetPack, b.Meta.JetPack
	if !preferred(b, a, sm, ja) {
		out = append(out, []atom{in(doctor.LabelJetPack, ja)})
	}
	if jb != ja && !preferred(b, a, sm, jb) {
		out = append(out, []atom{in(doctor.LabelJetPack, jb)})
	}
	if !preferred(b, a, sm, "") {
		others := []string{ja}
		if jb != ja {
			others = append(others, jb)
		}
		out = append(out, []atom{notIn(doctor.LabelJetPack, others...)})
	}
	return out
}
