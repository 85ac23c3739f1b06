package cli

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/version"
)

// The files `jetbake init --gate` writes, at the repository's root: the
// Jetson gate's workflow, the issue form for a Jetson runtime report, and,
// when the repository has no actionlint configuration, one that names the
// runner label "jetson" (actionlint refuses labels it does not know).
const (
	GateWorkflow   = ".github/workflows/jetson-gate.yml"
	GateIssueForm  = ".github/ISSUE_TEMPLATE/jetson-runtime.yml"
	GateActionlint = ".github/actionlint.yaml"
)

// gateActionlint is the actionlint configuration init --gate writes.
const gateActionlint = `# Written by jetbake init --gate: the Jetson gate's runner label.
self-hosted-runner:
  labels:
    - jetson
`

var (
	//go:embed gate/jetson-gate.yml
	gateWorkflow string
	//go:embed gate/jetson-runtime.yml
	gateIssueForm string
)

// gateValues fill the gate's templates, whose delimiters are [[ and ]]
// (a workflow is full of GitHub's ${{ }}).
type gateValues struct {
	// Version is the jetbake release the workflow installs, or "latest";
	// ScriptRef the git ref of its install script.
	Version, ScriptRef string
	// Image is the matrix's image repository, Matrix its path in the
	// repository (slashes).
	Image, Matrix string
	// App is set for an app's matrix: the probe runs the app check (by
	// itself, in an app image) and no serving check, so no model.
	App bool
}

// render fills the template text with v.
func (v gateValues) render(name, text string) ([]byte, error) {
	t, err := template.New(name).Delims("[[", "]]").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("the gate's template %s: %w", name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, v); err != nil {
		return nil, fmt.Errorf("the gate's template %s: %w", name, err)
	}
	return []byte(b.String()), nil
}

// releaseTag is the form of a jetbake release tag that the install script
// installs: v1.2.3 or v1.2.3-rc.1, not a pseudo-version.
var releaseTag = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(rc|alpha|beta)[0-9.]*)?$`)

// gateFiles are the files init --gate writes for the matrix at path: the
// workflow, with the matrix's path in the repository, its image repository
// as the default image and this jetbake's release (else the latest) to
// install, and the issue form; for an app's matrix both ask for the app
// check in place of the serving check. The repository is the git work
// tree the matrix is in, else the matrix's folder.
func gateFiles(path string) ([]initFile, error) {
	data, err := inputfile.Read(path, "matrix file")
	if err != nil {
		return nil, usageErrorf("init --gate reads the matrix for its image repository: %w; run 'jetbake init' first, or name it with -f", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	m, err := matrix.Parse(data, matrix.WithDir(filepath.Dir(abs)))
	if err != nil {
		return nil, usageErrorf("init --gate: %s: %w", path, err)
	}
	root := repositoryRoot(filepath.Dir(abs))
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return nil, err
	}
	v, ref := version.Get().Version, ""
	if releaseTag.MatchString(v) {
		ref = v
	} else {
		v, ref = "latest", "main"
	}
	values := gateValues{Version: v, ScriptRef: ref, Image: m.Image.Repository, Matrix: filepath.ToSlash(rel),
		App: m.Kind() == matrix.KindApp}
	workflow, err := values.render("jetson-gate.yml", gateWorkflow)
	if err != nil {
		return nil, err
	}
	form, err := values.render("jetson-runtime.yml", gateIssueForm)
	if err != nil {
		return nil, err
	}
	files := []initFile{
		{path: filepath.Join(root, GateWorkflow), data: workflow, guarded: true, makeDir: true},
		{path: filepath.Join(root, GateIssueForm), data: form, guarded: true, makeDir: true},
	}
	if !anyExists(filepath.Join(root, GateActionlint), filepath.Join(root, ".github", "actionlint.yml")) {
		files = append(files, initFile{path: filepath.Join(root, GateActionlint), data: []byte(gateActionlint), makeDir: true})
	}
	return files, nil
}

// anyExists reports whether one of the paths exists.
func anyExists(paths ...string) bool {
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// repositoryRoot is the nearest folder from dir up that holds .git (a
// folder, or a file in a worktree), else dir.
func repositoryRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		} else if !errors.Is(err, fs.ErrNotExist) {
			return dir
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

// writeInitFiles writes files, none of them when a guarded one exists and
// force is not set, and returns their paths.
func writeInitFiles(files []initFile, force bool) ([]string, error) {
	for _, f := range files {
		if _, err := os.Stat(f.path); err == nil && !force && f.guarded {
			return nil, usageErrorf("%s exists: give --force to replace it, or -f to write another file", f.path)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", f.path, err)
		}
	}
	var names []string
	for _, f := range files {
		if f.makeDir {
			if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
				return names, err
			}
		}
		if err := inputfile.WriteFile(f.path, f.data, 0o644); err != nil {
			return names, err
		}
		names = append(names, f.path)
	}
	return names, nil
}
