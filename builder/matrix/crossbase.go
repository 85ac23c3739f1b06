package matrix

import (
	"github.com/jetbake/jetbake/computecap"
)

// The router stage's paths on an amd64 BuildKit node (see
// imagebuild/emulation.ChoosePath): cross-compiling in the release's
// cross_build_base, or running the build base under QEMU.
const (
	BuildPathCross = "cross"
	BuildPathQEMU  = "qemu"
)

// checkCrossBase checks a router release's cross_build_base against the
// table's cross rows for the release's JetPack line (an amd64 image, the
// release's CUDA, the line's targets/ folder), and that build_path does
// not force a path the release cannot take. An app release has neither.
func checkCrossBase(m *Matrix, r *Release, path string, errs *checker) {
	c := r.CrossBuildBase
	if m.App != nil {
		if c != nil {
			errs.add(joinPath(path, "cross_build_base"), "", "is for routers: an app's stage runs on its framework container",
				"remove it")
		}
		if r.BuildPath != "" {
			errs.addString(joinPath(path, "build_path"), r.BuildPath, "is for routers", "remove it")
		}
		return
	}
	if r.BuildPath == BuildPathCross && c == nil {
		errs.addString(joinPath(path, "build_path"), r.BuildPath, "forces the cross path, but the release has no cross_build_base",
			"add cross_build_base (docs/matrix.md#cross-builds) or remove build_path")
	}
	if c == nil {
		return
	}
	p := joinPath(path, "cross_build_base")
	switch {
	case c.Image != "" && c.Recipe != "":
		errs.addString(joinPath(p, "recipe"), c.Recipe, "is given beside image "+quote(c.Image)+": a cross build base is one or the other",
			"keep image for a prebuilt base (an air-gapped runner's), or recipe to have jetbake build it")
	case c.Image == "" && c.Recipe == "":
		errs.add(p, "", "names no image and no recipe", "add \"recipe\": \""+BuiltinRecipe+"\" (jetbake's own recipe) or the image of a prebuilt base")
	case c.Image != "" && len(c.BuildArgs) > 0:
		errs.add(joinPath(p, "build_args"), "", "are for a recipe, and the base is the prebuilt image "+quote(c.Image),
			"remove build_args, or replace image with recipe")
	}
	t := errs.facts()
	if c.Recipe != "" {
		checkRecipeArgs(t, r, p, errs)
	}
	flavour, known := t.FlavourOfJetPack(r.JetPack)
	row, hasRow := t.CrossTargetOf(flavour)
	cuda, cudaErr := computecap.ParseCUDAVersion(r.CUDA)
	if !known || !hasRow || cudaErr != nil {
		return // reported by the JetPack rules or the schema
	}
	if c.Platform != row.Platform {
		errs.addString(joinPath(p, "platform"), c.Platform, "is not "+row.Platform+
			": NVIDIA's cross CUDA packages and gcc-aarch64-linux-gnu are x86_64 programs, and an arm64 node builds natively from build_base",
			"use an amd64 image and set platform to \""+row.Platform+"\"")
	}
	if v, err := computecap.ParseCUDAVersion(c.CUDA); err != nil || v != cuda {
		errs.addString(joinPath(p, "cuda"), c.CUDA, "is not the release's cuda "+quote(r.CUDA)+
			": the router links the CUDA it is compiled against",
			"install "+row.PackageFor(cuda)+" in the image and set cuda to "+quote(cuda.String()))
	}
	if c.CUDATarget != row.Dir {
		errs.addString(joinPath(p, "cuda_target"), c.CUDATarget, "is not the folder of JetPack "+r.JetPack+"'s "+flavour.Name()+
			" CUDA, targets/"+row.Dir+": "+computecap.FlavourMismatch(otherFlavour(flavour), flavour),
			"install "+row.PackageFor(cuda)+" (NVIDIA's cross package of the release) and set cuda_target to \""+row.Dir+"\"")
	}
}

// otherFlavour is the flavour that is not f.
func otherFlavour(f computecap.Flavour) computecap.Flavour {
	if f == computecap.FlavourSBSA {
		return computecap.FlavourTegra
	}
	return computecap.FlavourSBSA
}
