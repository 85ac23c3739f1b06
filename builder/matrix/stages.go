package matrix

import (
	"bytes"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/jetbake/jetbake/builder/inputfile"
)

// runtimeBaseArg is the build arg that names the release's runtime base.
const runtimeBaseArg = "RUNTIME_BASE"

// checkStages checks, in a local Dockerfile that BuildKit's parser reads,
// that router.target and router.runtime_target are stages, that they are
// not the same, and that the runtime stage starts, directly or through
// other stages, from ${RUNTIME_BASE}. A Dockerfile the parser refuses is
// left to `jetbake check` and the build, which name the line.
func checkStages(m *Matrix, path string, errs *checker) {
	rt := m.Router.RuntimeTarget
	if rt == "" {
		return
	}
	data, err := inputfile.Read(path, "Dockerfile")
	if err != nil {
		return
	}
	ast, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		return
	}
	stages, _, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		return
	}
	names := make([]string, 0, len(stages))
	for _, s := range stages {
		names = append(names, s.Name)
	}
	list := strings.Join(slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "" }), ", ")
	for field, stage := range map[string]string{"router.target": m.Router.Target, "router.runtime_target": rt} {
		if stage != "" && !slices.Contains(names, stage) {
			errs.addString(field, stage, "is not a stage of "+path, "name one of its stages ("+list+")")
		}
	}
	switch {
	case rt == m.Router.Target:
		errs.addString("router.runtime_target", rt, "is the stage that compiles the router",
			"name the stage FROM ${RUNTIME_BASE} that images are assembled on, or remove runtime_target")
	case slices.Contains(names, rt) && !fromRuntimeBase(stages, rt):
		errs.addString("router.runtime_target", rt, "does not start from ${"+runtimeBaseArg+"}: the images would not be built on the release's runtime base",
			"start the stage with FROM ${"+runtimeBaseArg+"} AS "+rt)
	}
}

// fromRuntimeBase follows a stage's FROM through other stages to ${RUNTIME_BASE}.
func fromRuntimeBase(stages []instructions.Stage, name string) bool {
	for range stages {
		i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == name })
		if i < 0 {
			return false
		}
		base := stages[i].BaseName
		if base == "${"+runtimeBaseArg+"}" || base == "$"+runtimeBaseArg {
			return true
		}
		name = base
	}
	return false
}
