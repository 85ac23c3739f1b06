package matrix

import (
	"github.com/jetbake/jetbake/computecap"
)

// checkBases checks each base of a release against the table's base
// repositories: a base of the wrong CUDA flavour for the release's JetPack
// line (an SBSA nvidia/cuda image for JetPack 6, an l4t-cuda image for
// JetPack 7), or whose tag names another CUDA than the release's, is
// refused with a base that fits. A base the table does not know passes:
// the build reads it.
func checkBases(r *Release, path string, errs *checker) {
	t := errs.facts()
	want, known := t.FlavourOfJetPack(r.JetPack)
	cuda, cudaErr := computecap.ParseCUDAVersion(r.CUDA)
	if !known || cudaErr != nil {
		return // reported by the JetPack rules or the schema
	}
	for _, b := range []struct {
		field, ref string
		devel      bool
	}{{"build_base", r.BuildBase, true}, {"runtime_base", r.RuntimeBase, false}} {
		facts, ok := t.BaseFactsOf(b.ref)
		if !ok || b.ref == "" {
			continue
		}
		p := joinPath(path, b.field)
		switch {
		case facts.Flavour != want:
			errs.addString(p, b.ref, "is "+facts.Flavour.WithArticle()+" CUDA image ("+facts.Repository+"), but JetPack "+r.JetPack+
				" needs "+want.Name()+" CUDA: "+computecap.FlavourMismatch(facts.Flavour, want),
				"use "+want.WithArticle()+" base that fits, e.g. "+fitting(t, want, cuda, b.devel))
		case !facts.CUDA.IsZero() && facts.CUDA != cuda:
			errs.addString(p, b.ref, "is CUDA "+facts.CUDA.String()+" by its tag, but the release's cuda is "+quote(r.CUDA),
				"use a base with CUDA "+cuda.String()+", e.g. "+fitting(t, want, cuda, b.devel)+", or correct cuda")
		}
	}
}

// fitting names the first known base of flavour f and CUDA cuda, quoted.
func fitting(t *computecap.Table, f computecap.Flavour, cuda computecap.CUDAVersion, devel bool) string {
	if refs := t.BasesFitting(f, cuda, devel); len(refs) > 0 {
		return quote(refs[0])
	}
	return "one from NVIDIA's NGC catalog"
}
