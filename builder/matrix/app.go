package matrix

import (
	"path"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// The kinds of matrix: a router compiled once per SM, or an app built once
// per release on a framework container.
const (
	KindRouter = "router"
	KindApp    = "app"
)

// KeyKind is the label and annotation that names the image's kind: "app"
// for apps; router images carry none.
const KeyKind = "io.jetbake.kind"

// App is a Python (PyTorch) app built on NVIDIA's framework container of
// each release: one stage of its Dockerfile, with no per-SM compile.
type App struct {
	// Name is the app's name, e.g. "obliteratus".
	Name string `json:"name"`
	// Version is the app's version, used in tags ({version}).
	Version string `json:"version"`
	// Framework names the family of base containers and the app check:
	// "pytorch" (computecap.FrameworkPyTorch) is the only one.
	Framework string `json:"framework"`
	// Context is the build context, as Router.Context.
	Context string `json:"context"`
	// Dockerfile is the Dockerfile's path relative to the matrix file's folder.
	Dockerfile string `json:"dockerfile"`
	// Target is the Dockerfile stage that is the image; "" is the last stage.
	Target string `json:"target,omitempty"`
	// Command is what the entrypoint execs (an absolute path first), before
	// the user's arguments.
	Command []string `json:"command"`
	// Cmd is the image's default arguments; `docker run IMAGE ARGS...` replaces them.
	Cmd []string `json:"cmd,omitempty"`
	// Smoke is the argument list of a build-time smoke run, as Router.Smoke.
	Smoke []string `json:"smoke,omitempty"`
	// BuildArgs are build arguments of the app stage for every release.
	BuildArgs map[string]string `json:"build_args,omitempty"`
	// Env is the image's environment.
	Env map[string]string `json:"env,omitempty"`
	// Ports are the ports the image exposes, e.g. ["8000/tcp"].
	Ports []string `json:"ports,omitempty"`
	// Health is the HTTP route the app answers its health on, e.g.
	// "/healthz"; `jetbake fleet` probes it. "" for none.
	Health string `json:"health,omitempty"`
}

// Kind is KindApp for a matrix with an app, else KindRouter.
func (m *Matrix) Kind() string {
	if m.App != nil {
		return KindApp
	}
	return KindRouter
}

// Version is the version of what the matrix builds: the app's or the router's.
func (m *Matrix) Version() string {
	if m.App != nil {
		return m.App.Version
	}
	return m.Router.Version
}

// source is the field holding the build's context and Dockerfile, and
// their values: "router" or "app".
func (m *Matrix) source() (field, context, dockerfile string) {
	if m.App != nil {
		return KindApp, m.App.Context, m.App.Dockerfile
	}
	return KindRouter, m.Router.Context, m.Router.Dockerfile
}

// AppBuildArgs returns the build arguments of a release's app stage: the
// app's, then the release's over them.
func (m *Matrix) AppBuildArgs(r *Release) map[string]string {
	out := map[string]string{}
	if m.App != nil {
		for k, v := range m.App.BuildArgs {
			out[k] = v
		}
	}
	for k, v := range r.BuildArgs {
		out[k] = v
	}
	return out
}

// checkKind checks that the matrix has exactly one of router and app,
// given which of the two the document holds.
func checkKind(hasRouter, hasApp bool, errs *checker) {
	switch {
	case hasRouter && hasApp:
		errs.add("app", "", "a matrix builds either a router or an app, not both",
			"keep \"router\" (a program compiled once per SM) or \"app\" (a Python app on NVIDIA's framework container), and move the other to a matrix of its own")
	case !hasRouter && !hasApp:
		errs.noKind = true
		errs.add("router", "", "missing required field: a matrix builds a router or an app",
			`add "router": {"name": "text-embeddings-router", ...} for a program compiled once per SM, or "app": {"name": "obliteratus", "framework": "pytorch", ...} for a Python app; 'jetbake init --app pytorch' writes one`)
	}
}

// checkApp checks the app's fields beyond their shape.
func checkApp(a *App, errs *checker) {
	if len(a.Command) > 0 && a.Command[0] != "" && a.Command[0][0] == '/' {
		if c := a.Command[0]; path.Clean(c) != c || c == "/" {
			errs.addString("app.command[0]", c, "is not a clean absolute path of a file: the entrypoint execs exactly this path",
				`write it without ".", "..", "//" or a trailing "/", e.g. "/opt/venv/bin/obliteratus"`)
		}
	}
	checkAppBuildArgs("app.build_args", a.BuildArgs, errs)
}

// AppBuildArgNames are the build args jetbake sets for an app's stage:
// the release's base, JetPack, L4T, CUDA and its targets as
// TORCH_CUDA_ARCH_LIST writes them ("8.7;11.0").
func AppBuildArgNames() []string {
	return []string{BaseBuildArg, "JETPACK", "L4T", "CUDA", "CUDA_ARCH_LIST"}
}

// checkAppBuildArgs refuses build args that jetbake sets for an app.
func checkAppBuildArgs(path string, args map[string]string, errs *checker) {
	for _, k := range AppBuildArgNames() {
		if v, ok := args[k]; ok {
			errs.addString(keyPath(path, k), v, "is set by jetbake from the release",
				"remove it: jetbake sets "+strings.Join(AppBuildArgNames(), ", ")+" from each release")
		}
	}
}

// checkReleaseKind refuses the bases of the other kind in a release: a
// router's build_base and runtime_base in an app's, an app's base in a
// router's.
func checkReleaseKind(m *Matrix, r *Release, p string, errs *checker) {
	if errs.noKind {
		return
	}
	if m.App == nil {
		if r.Base != "" {
			errs.addString(joinPath(p, "base"), r.Base, "is the framework container of an app release, and this matrix builds a router",
				"remove it: a router release names build_base and runtime_base")
		}
		return
	}
	for field, v := range map[string]string{"build_base": r.BuildBase, "runtime_base": r.RuntimeBase} {
		if v != "" {
			errs.addString(joinPath(p, field), v, "is for routers: an app release builds on one framework container, its base",
				"remove it and name the container in \"base\", e.g. "+quote(exampleAppBase(errs.facts(), r.JetPack)))
		}
	}
	if len(r.TargetBuildArgs) > 0 {
		errs.add(joinPath(p, "target_build_args"), "", "is for routers: an app is built once per release, not once per SM",
			"move the arguments to the release's build_args")
	}
}

// exampleAppBase names the newest container of the table for a JetPack
// version, or the JetPack 6.2 one when its line has none.
func exampleAppBase(t *computecap.Table, jetpack string) string {
	if rows := t.FrameworkContainersFor(computecap.FrameworkPyTorch, jetpack); len(rows) > 0 {
		return rows[0].Ref()
	}
	return "nvcr.io/nvidia/pytorch:25.06-py3-igpu"
}
