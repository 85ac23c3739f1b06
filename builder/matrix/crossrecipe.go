package matrix

import (
	"bytes"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/dockerfiles"

	"github.com/jetbake/jetbake/computecap"
)

// The recipe of a cross build base (dockerfiles/Dockerfile-cross-base):
// its build arguments come from the table's row of the release's JetPack
// line (computecap.Table.RecipeArgs), with cross_build_base.build_args over
// them.

// RecipeArgs are the build arguments of release r's cross build recipe:
// the table's for its JetPack and CUDA, then cross_build_base.build_args.
// It is for a release whose cross_build_base names a recipe and that
// passed validation.
func (m *Matrix) RecipeArgs(r *Release) (map[string]string, error) {
	cuda, err := r.CUDAVersion()
	if err != nil {
		return nil, err
	}
	args, err := m.Facts().RecipeArgs(r.JetPack, cuda)
	if err != nil {
		return nil, err
	}
	if r.CrossBuildBase != nil {
		maps.Copy(args, r.CrossBuildBase.BuildArgs)
	}
	return args, nil
}

// gccRelease is what CROSS_GCC may be: a GCC major release.
var gccRelease = regexp.MustCompile(`^[0-9]{1,2}$`)

// checkRecipeArgs checks a recipe release against the table's recipe row
// of its JetPack line: the line has one, and build_args do not contradict
// it (the devel image's CUDA and Ubuntu, the suite, NVIDIA's cross package).
func checkRecipeArgs(t *computecap.Table, r *Release, path string, errs *checker) {
	cuda, err := computecap.ParseCUDAVersion(r.CUDA)
	if err != nil {
		return // the CUDA rules say it
	}
	want, err := t.RecipeArgs(r.JetPack, cuda)
	if err != nil {
		errs.addString(joinPath(path, "recipe"), r.CrossBuildBase.Recipe, err.Error(),
			"remove cross_build_base: the release builds under QEMU on an amd64 node, natively on an arm64 one")
		return
	}
	if r.CrossBuildBase.Recipe == BuiltinRecipe {
		checkRecipeArgNames(r.CrossBuildBase, path, "jetbake's "+dockerfiles.CrossBaseRecipe, recipeArgs(dockerfiles.DockerfileCrossBase()), errs)
	}
	args := joinPath(path, "build_args")
	for _, k := range sortedKeys(r.CrossBuildBase.BuildArgs) {
		v := r.CrossBuildBase.BuildArgs[k]
		at := keyPath(args, k)
		switch k {
		case computecap.RecipeArgDevelImage:
			if !strings.Contains(v, ":"+cuda.String()+".") || !strings.Contains(v, "-devel-ubuntu"+r.Ubuntu) {
				errs.addString(at, v, "is not NVIDIA's CUDA "+cuda.String()+" devel image for Ubuntu "+r.Ubuntu+
					": the router links the CUDA it is compiled against", "remove it to use "+quote(want[k])+", or name a mirror's copy of it")
			}
		case computecap.RecipeArgCodename, computecap.RecipeArgCrossPackage:
			if v != want[k] {
				errs.addString(at, v, "is not JetPack "+r.JetPack+"'s "+quote(want[k])+" (Ubuntu "+r.Ubuntu+", CUDA "+cuda.String()+")",
					"remove it: the table of facts gives "+quote(want[k]))
			}
		case computecap.RecipeArgGCC:
			if !gccRelease.MatchString(v) {
				errs.addString(at, v, "is not a GCC release", "remove it to use Ubuntu "+r.Ubuntu+"'s GCC "+want[k])
			}
		}
	}
}

// BuiltinRecipe is the recipe value that names jetbake's own recipe,
// dockerfiles/Dockerfile-cross-base as embedded in the running jetbake;
// any other value is a path relative to the matrix file's folder.
const BuiltinRecipe = "jetbake"

// checkRecipeFiles checks each release's recipe as checkFilesExist checks
// the Dockerfile: a path exists and lies inside the matrix's repository;
// and every build argument cross_build_base.build_args gives is an ARG of
// the recipe (jetbake's own, or the file).
func checkRecipeFiles(m *Matrix, errs *checker, grant func(string) string) {
	declared := map[string][]string{}
	for i := range m.Releases {
		c := m.Releases[i].CrossBuildBase
		if c == nil || c.Recipe == "" || c.Recipe == BuiltinRecipe || m.App != nil {
			continue
		}
		at := joinPath(indexPath("releases", i), "cross_build_base")
		if _, seen := declared[c.Recipe]; !seen {
			declared[c.Recipe] = readRecipe(m, c.Recipe, joinPath(at, "recipe"), errs, grant)
		}
		checkRecipeArgNames(c, at, c.Recipe, declared[c.Recipe], errs)
	}
}

// checkRecipeArgNames refuses a build argument that recipe, whose ARGs
// are declared (nil when unknown), does not declare.
func checkRecipeArgNames(c *CrossBuildBase, at, recipe string, declared []string, errs *checker) {
	if declared == nil {
		return
	}
	for _, k := range sortedKeys(c.BuildArgs) {
		if !slices.Contains(declared, k) {
			errs.addString(keyPath(joinPath(at, "build_args"), k), c.BuildArgs[k], "is not an ARG of "+recipe,
				"use one of "+strings.Join(declared, ", "))
		}
	}
}

// readRecipe checks that the recipe file exists inside the repository and
// returns its ARGs; nil when it cannot be read or parsed.
func readRecipe(m *Matrix, recipe, at string, errs *checker, grant func(string) string) []string {
	p := m.LocalPath(recipe)
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		errs.addString(at, recipe, "recipe "+p+" does not exist or is not a regular file",
			"use \""+BuiltinRecipe+"\" for jetbake's own recipe, or correct the path (it is relative to the matrix file's folder)")
		return nil
	}
	if out := m.Inside(recipe); out != "" {
		errs.addString(at, recipe, "recipe "+out, allowFix(resolveExisting(p), grant))
		return nil
	}
	data, err := inputfile.Read(p, "recipe")
	if err != nil {
		return nil
	}
	return recipeArgs(data)
}

// recipeArgs are the ARGs a recipe declares, before its FROM and in its
// stages, sorted; nil when it cannot be parsed (the build names the line).
func recipeArgs(data []byte) []string {
	ast, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	stages, metaArgs, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		return nil
	}
	var names []string
	add := func(a instructions.ArgCommand) {
		for _, kv := range a.Args {
			names = append(names, kv.Key)
		}
	}
	for _, a := range metaArgs {
		add(a)
	}
	for _, s := range stages {
		for _, cmd := range s.Commands {
			if a, ok := cmd.(*instructions.ArgCommand); ok {
				add(*a)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
