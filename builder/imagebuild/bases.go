package imagebuild

import (
	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/plan"
)

// BaseNeeds is what release r needs of its build and runtime bases: its
// CUDA, and the CUDA flavour of its JetPack line.
func BaseNeeds(r plan.Release) [2]baseinfo.Need {
	need := func(role, ref string) baseinfo.Need {
		return baseinfo.Need{Role: role, Ref: ref, JetPack: r.JetPack, Flavour: r.Flavour, CUDA: r.CUDA}
	}
	return [2]baseinfo.Need{need("build", r.BuildBase), need("runtime", r.RuntimeBase)}
}
