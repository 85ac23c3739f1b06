package matrix

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/agext/levenshtein"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/jetbake/jetbake/builder/inputfile"
)

// runtimeBaseArg is the build arg that names the release's runtime base.
const runtimeBaseArg = "RUNTIME_BASE"

// checkStages checks, in a local Dockerfile that BuildKit's parser reads,
// that router.target is a stage, always, and when router.runtime_target is
// set, that it is a stage too, that the two are not the same, and that the
// runtime stage starts, directly or through other stages, from
// ${RUNTIME_BASE}. A Dockerfile the parser refuses is left to `jetbake
// check` and the build, which name the line.
func checkStages(m *Matrix, path string, errs *checker) {
	if m.App != nil && m.App.Target == "" || m.App == nil && m.Router.Target == "" {
		return
	}
	stages, ok := readStages(path)
	if !ok {
		return
	}
	if m.App != nil {
		checkAppStage(stages, path, m.App.Target, errs)
		return
	}
	rt := m.Router.RuntimeTarget
	names := stageNames(stages)
	fields := []struct{ field, stage string }{{"router.target", m.Router.Target}, {"router.runtime_target", rt}}
	for _, f := range fields {
		if f.stage != "" && !slices.Contains(names, f.stage) {
			errs.addString(f.field, f.stage, "is not a stage of "+path, missingStageFix(stages, path, f.field, f.stage))
		}
	}
	switch {
	case rt == "":
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
	switch {
	case !slices.Contains(stageNames(stages), target):
		errs.addString("app.target", target, "is not a stage of "+path, missingStageFix(stages, path, "app.target", target))
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

// stageNames are the names of a Dockerfile's named stages, in order.
func stageNames(stages []instructions.Stage) []string {
	var names []string
	for _, s := range stages {
		if s.Name != "" {
			names = append(names, s.Name)
		}
	}
	return names
}

// missingStageFix is the fix for a field that names a stage the Dockerfile
// at path does not have: the stage it probably meant, with its file:line
// (`/x/Dockerfile:1 names the stage "routr": did you mean "router"? rename
// it (FROM ... AS router) or set router.target to "routr"`), else the
// stages it has, else what to add.
func missingStageFix(stages []instructions.Stage, path, field, want string) string {
	names := stageNames(stages)
	if near := nearestName(want, names); near != "" {
		i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == near })
		at := path
		if loc := stages[i].Location; len(loc) > 0 {
			at += ":" + strconv.Itoa(loc[0].Start.Line)
		}
		return at + " names the stage " + quote(near) + ": did you mean " + quote(want) +
			"? rename it (FROM " + stages[i].BaseName + " AS " + want + ") or set " + field + " to " + quote(near)
	}
	if len(names) == 0 {
		return "name a stage of it (FROM IMAGE AS " + want + "): it has no named stage"
	}
	return "name one of its stages (" + strings.Join(names, ", ") + "), or add the stage FROM IMAGE AS " + want
}

// nearestName is the one of names that key was probably meant to be (a
// typo: an edit distance under 3, or one a prefix of the other), or "".
func nearestName(key string, names []string) string {
	best, bestDist := "", 3
	for _, name := range names {
		d := levenshtein.Distance(key, name, nil)
		if len(key) >= 4 && len(name) >= 4 && (strings.HasPrefix(name, key) || strings.HasPrefix(key, name)) {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = name, d
		}
	}
	return best
}
