package imagepick

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/computecap"
)

// tierRank orders the support tiers, best first; unknown tiers come last.
func tierRank(tier string) int {
	if i := slices.Index([]string{"supported", "candidate", "evaluate-later", "legacy"}, tier); i >= 0 {
		return i
	}
	return 4
}

// judge applies the rule to every image and sorts the candidates: the ones
// that run first, in preference order (those whose build-time audit covers
// the host's GPU, then the host's exact JetPack release,
// then the newest L4T and CUDA, then the better tier, then the newest
// router version), then the refused ones by tag.
func judge(repository string, h hostfit.Host, images []image, rule hostfit.Rule) []Candidate {
	out := make([]Candidate, 0, len(images))
	h.JetPack = hostJetPack(h, images)
	for _, img := range images {
		c := Candidate{Tags: img.tags, Digest: img.digest, Meta: img.meta}
		c.Tag = slices.MaxFunc(img.tags, func(a, b string) int {
			return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(b, a))
		})
		c.Reference = repository + ":" + c.Tag + "@" + c.Digest
		switch {
		case img.err != nil:
			c.Verdict = hostfit.Verdict{Reason: img.err.Error()}
		default:
			c.Verdict = rule(h, img.meta.image)
			c.ExactJetPack = h.JetPack != "" && img.meta.JetPack == h.JetPack
			c.AuditCovers = img.meta.auditCovers(h.GPU)
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, prefer)
	return out
}

// hostJetPack is the host's JetPack release: the one an image's declared
// row names for the host's exact L4T when jetbake's table has no row for
// it (a release newer than this jetbake), else what the table says.
func hostJetPack(h hostfit.Host, images []image) string {
	if _, known := computecap.DefaultTable().ReleaseForL4T(h.L4T); known || h.L4T.IsZero() {
		return h.JetPack
	}
	for _, img := range images {
		if d := img.meta.image.Declared; d != nil && img.err == nil {
			if l, err := computecap.ParseL4TVersion(d.L4T); err == nil && l == h.L4T {
				return d.JetPack
			}
		}
	}
	return h.JetPack
}

// prefer orders two candidates, the preferred one first.
func prefer(a, b Candidate) int {
	if a.Verdict.OK != b.Verdict.OK {
		return boolFirst(a.Verdict.OK)
	}
	if !a.Verdict.OK {
		return strings.Compare(a.Tag, b.Tag)
	}
	if a.AuditCovers != b.AuditCovers {
		return boolFirst(a.AuditCovers)
	}
	if a.ExactJetPack != b.ExactJetPack {
		return boolFirst(a.ExactJetPack)
	}
	ai, bi := a.Meta.image, b.Meta.image
	return cmp.Or(
		compareL4T(bi.L4T, ai.L4T),
		compareCUDA(bi.CUDA, ai.CUDA),
		cmp.Compare(tierRank(a.Meta.Tier), tierRank(b.Meta.Tier)),
		compareDotted(b.Meta.Version, a.Meta.Version),
		strings.Compare(a.Tag, b.Tag),
	)
}

func boolFirst(a bool) int {
	if a {
		return -1
	}
	return 1
}

func compareL4T(a, b computecap.L4TVersion) int {
	return cmp.Or(cmp.Compare(a.Major, b.Major), cmp.Compare(a.Minor, b.Minor), cmp.Compare(a.Patch, b.Patch))
}

func compareCUDA(a, b computecap.CUDAVersion) int {
	return cmp.Or(cmp.Compare(a.Major, b.Major), cmp.Compare(a.Minor, b.Minor))
}

// compareDotted compares versions such as "1.8.0" part by part, numerically
// where both parts are numbers.
func compareDotted(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, errA := strconv.Atoi(pa[i])
		nb, errB := strconv.Atoi(pb[i])
		if errA == nil && errB == nil {
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
		} else if c := strings.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}
