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
	if m.App != nil {
		rt = m.App.Target
	}
	if rt == "" {
		return
	}
	stages, ok := readStages(path)
	if !ok {
		return
	}
	if m.App != nil {
		checkAppStage(stages, path, rt, errs)
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
	case slices.Contains(names, rt) && !fromArg(stages, rt, runtimeBaseArg):
		errs.addString("router.runtime_target", rt, "does not start from ${"+runtimeBaseArg+"}: the images would not be built on the release's runtime base",
			"start the stage with FROM ${"+runtimeBaseArg+"} AS "+rt)
	}
}

// readStages parses a local Dockerfile's stages; false when it cannot be
// read or parsed (left to the build, which names the line).
func readStages(path string) ([]instructions.Stage, bool) {
	data, err := inputfile.Read(path, "Dockerfile")
	if err != nil {
		return nil, false
	}
	ast, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, false
	}
	stages, _, err := instructions.Parse(ast.AST, nil)
	return stages, err == nil
}

// checkAppStage checks that app.target is a stage and that it starts,
// directly or through other stages, from ${BASE}, the release's framework
// container.
func checkAppStage(stages []instructions.Stage, path, target string, errs *checker) {
	var names []string
	for _, s := range stages {
		if s.Name != "" {
			names = append(names, s.Name)
		}
	}
	switch {
	case !slices.Contains(names, target):
		errs.addString("app.target", target, "is not a stage of "+path, "name one of its stages ("+strings.Join(names, ", ")+")")
	case !fromArg(stages, target, BaseBuildArg):
		errs.addString("app.target", target, "does not start from ${"+BaseBuildArg+"}: the image would not be built on the release's framework container",
			"start the stage with ARG "+BaseBuildArg+" before the first FROM, and FROM ${"+BaseBuildArg+"} AS "+target)
	}
}

// BaseBuildArg is the build arg that names an app release's base.
const BaseBuildArg = "BASE"

// fromArg follows a stage's FROM through other stages to ${arg}.
func fromArg(stages []instructions.Stage, name, arg string) bool {
	for range stages {
		i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == name })
		if i < 0 {
			return false
		}
		base := stages[i].BaseName
		if base == "${"+arg+"}" || base == "$"+arg {
			return true
		}
		name = base
	}
	return false
}
