package plan

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/builder/matrix"
)

// App says what an app's stage is and what the entrypoint execs.
type App struct {
	// Name and Version are the app's, used in tags and annotations.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Framework is the family of base containers and the app check: "pytorch".
	Framework string `json:"framework"`
	// Context is a local folder (resolved to an absolute path) or a pinned git URL.
	Context string `json:"context"`
	// Dockerfile is the Dockerfile's absolute path.
	Dockerfile string `json:"dockerfile"`
	// Target is the stage that is the image; "" is the last stage.
	Target string `json:"target,omitempty"`
	// Commit is the context's commit when it is a git URL pinned to one.
	Commit string `json:"commit,omitempty"`
	// Command is what the entrypoint execs before the user's arguments.
	Command []string `json:"command"`
	// Cmd, Smoke, Env and Ports are as the router's.
	Cmd   []string          `json:"cmd,omitempty"`
	Smoke []string          `json:"smoke,omitempty"`
	Env   map[string]string `json:"env,omitempty"`
	Ports []string          `json:"ports,omitempty"`
}

// Kind is matrix.KindApp for an app's plan, else matrix.KindRouter.
func (p *Plan) Kind() string {
	if p.App != nil {
		return matrix.KindApp
	}
	return matrix.KindRouter
}

// Version is the version of what the plan builds: the app's or the router's.
func (p *Plan) Version() string {
	if p.App != nil {
		return p.App.Version
	}
	return p.Router.Version
}

// Context is the build context of what the plan builds: the app's or the
// router's (a local folder or a pinned git URL).
func (p *Plan) Context() string {
	if p.App != nil {
		return p.App.Context
	}
	return p.Router.Context
}

// appOf resolves the app's local paths.
func appOf(m *matrix.Matrix) *App {
	a := m.App
	ctx := a.Context
	if !matrix.IsGitContext(ctx) {
		ctx = m.LocalPath(ctx)
	}
	return &App{
		Name: a.Name, Version: a.Version, Framework: a.Framework,
		Context: ctx, Dockerfile: m.LocalPath(a.Dockerfile), Target: a.Target,
		Commit:  matrix.GitCommit(a.Context),
		Command: slices.Clone(a.Command), Cmd: slices.Clone(a.Cmd), Smoke: slices.Clone(a.Smoke),
		Env: maps.Clone(a.Env), Ports: slices.Clone(a.Ports),
	}
}

// ArchList writes SMs as TORCH_CUDA_ARCH_LIST does: "8.7;11.0".
func ArchList(targets []Target) string {
	sms := make([]string, len(targets))
	for i, t := range targets {
		sms[i] = t.SM
	}
	return strings.Join(sms, ";")
}

// appRelease fills in what an app release builds: its base, its targets'
// path (the command's), and the build args of its stage.
func appRelease(m *matrix.Matrix, r *matrix.Release, out *Release) {
	out.Base = r.Base
	out.Bases = []Base{appBase(m.Facts(), r.Base)}
	command := m.App.Command[0]
	for k := range out.Targets {
		out.Targets[k].Binary, out.Targets[k].Path = path.Base(command), command
		out.Targets[k].BuildArgs = nil
	}
	args := map[string]string{
		matrix.BaseBuildArg: r.Base, "JETPACK": r.JetPack, "L4T": r.L4T, "CUDA": r.CUDA,
		"CUDA_ARCH_LIST": ArchList(out.Targets),
	}
	maps.Copy(args, m.AppBuildArgs(r))
	out.AppBuildArgs = args
	out.Labels[matrix.KeyKind], out.Annotations[matrix.KeyKind] = matrix.KindApp, matrix.KindApp
}

// setAppBuildArg gives an app release's stage build arg name=value, over
// the matrix's; jetbake's own (matrix.AppBuildArgNames) are refused.
func (r *Release) setAppBuildArg(name, value string) error {
	if slices.Contains(matrix.AppBuildArgNames(), name) {
		return fmt.Errorf("%s: jetbake sets it from the release (%s): change the matrix instead",
			name, strings.Join(matrix.AppBuildArgNames(), ", "))
	}
	if r.BuildArgs == nil {
		r.BuildArgs = map[string]string{}
	}
	r.BuildArgs[name], r.AppBuildArgs[name] = value, value
	return nil
}
