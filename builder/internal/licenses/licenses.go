// Package licenses lists the license of every module linked into a set of
// Go binaries, read from the license files in the Go module cache, and
// checks each against what an Apache-2.0 program may link (policy.go).
//
// The packages come from `go list -deps`, once per build configuration
// (GOOS, GOARCH, tags), so that only what is really linked counts, not
// every module of go.mod's graph. Each package's license is the nearest
// license file from its folder up to its module's root, as go-licenses
// reads it (a vendored copy inside a module can carry a license of its
// own). The files are classified by github.com/google/licensecheck, the
// classifier pkg.go.dev uses.
package licenses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/google/licensecheck"
)

// StdModule is the module path the report gives the Go standard library.
const StdModule = "std"

// fileName matches the names of license files: LICENSE, LICENCE, COPYING
// and UNLICENSE, with or without a suffix (LICENSE.txt, LICENSE-MIT,
// LICENSE.docs).
var fileName = regexp.MustCompile(`(?i)^((un)?licen[cs]e|copying)([.-].*)?$`)

// Build is one configuration the binaries are built in.
type Build struct {
	// Env is added to the go command's environment, such as GOOS=linux
	// and GOARCH=arm64.
	Env []string
	// Flags are more flags of `go list`, such as -tags=jetbake_embed.
	Flags []string
}

// Report is the licenses of the modules a set of binaries links.
type Report struct {
	// Modules are sorted by path; the standard library is StdModule.
	Modules []Module
}

// Module is one linked module and its license files.
type Module struct {
	// Path and Version name the module; Version is empty for a module
	// replaced by a folder.
	Path, Version string
	// Files are the license files its linked packages are under, each
	// once, sorted by name.
	Files []File
	// Problem says why the module may not be linked, or is empty.
	Problem string
}

// File is one license file and what it was found to be.
type File struct {
	// Name is the file's path inside its module, such as "LICENSE" or
	// "internal/snapref/LICENSE".
	Name string
	// IDs are the licenses found in it, as SPDX identifiers.
	IDs []string
	// Percent is how much of its text is known license text.
	Percent float64
	// Verdict says how the file was judged.
	Verdict Verdict
	// Reason explains the verdict in a few words.
	Reason string
}

// Verdict is how a license file was judged.
type Verdict string

// The verdicts of a license file.
const (
	// Compatible: every license found may be linked into an Apache-2.0
	// binary.
	Compatible Verdict = "compatible"
	// Incompatible: a license found may not.
	Incompatible Verdict = "incompatible"
	// Unidentified: too little of the text is a known license.
	Unidentified Verdict = "unidentified"
	// NotLinked: the file covers something the binaries do not link: a
	// module's documentation (LICENSE.docs), or a file of notLinked in
	// policy.go. It is listed, not judged.
	NotLinked Verdict = "not linked"
)

// MinPercent is how much of a license file must be known license text for
// the file to be identified. The rest is copyright lines and headers; a
// file with more unknown text may add terms of its own.
const MinPercent = 80

// pkgInfo is what `go list -json` says about one package.
type pkgInfo struct {
	ImportPath string
	Dir        string
	Standard   bool
	Module     *struct {
		Path    string
		Version string
		Dir     string
		Main    bool
		Replace *struct{ Version string }
	}
	Error *struct{ Err string }
}

// Scan lists the packages that pkgs link in every build, run in dir (a
// module's folder), and reads and judges the license of each package's
// module. With no build it lists the host's configuration.
func Scan(ctx context.Context, dir string, pkgs []string, builds ...Build) (*Report, error) {
	if len(builds) == 0 {
		builds = []Build{{}}
	}
	goroot, err := goEnv(ctx, dir, "GOROOT")
	if err != nil {
		return nil, err
	}
	mods := map[string]*moduleFiles{}
	for _, b := range builds {
		infos, err := list(ctx, dir, pkgs, b)
		if err != nil {
			return nil, err
		}
		for _, p := range infos {
			if err := addPackage(mods, p, goroot); err != nil {
				return nil, err
			}
		}
	}
	r := &Report{}
	for _, m := range mods {
		r.Modules = append(r.Modules, m.judge())
	}
	sort.Slice(r.Modules, func(i, j int) bool { return r.Modules[i].Path < r.Modules[j].Path })
	return r, nil
}

// list runs `go list -deps -json` for pkgs in one build.
func list(ctx context.Context, dir string, pkgs []string, b Build) ([]pkgInfo, error) {
	args := append([]string{"list", "-deps", "-json=ImportPath,Dir,Standard,Module,Error"}, b.Flags...)
	cmd := exec.CommandContext(ctx, "go", append(args, pkgs...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), b.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s (%s): %w: %s", strings.Join(args, " "), strings.Join(b.Env, " "), err, strings.TrimSpace(stderr.String()))
	}
	var infos []pkgInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return infos, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading go list's output: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list: package %s: %s", p.ImportPath, p.Error.Err)
		}
		infos = append(infos, p)
	}
}

// goEnv returns one variable of `go env`.
func goEnv(ctx context.Context, dir, name string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// moduleFiles collects one module's license files while packages are added.
type moduleFiles struct {
	path, version string
	// files maps a license file's name in the module to its absolute path.
	files map[string]string
	// bare names a package with no license file up to the module's root.
	bare string
}

// addPackage records the license file of one package, unless it belongs to
// the main module.
func addPackage(mods map[string]*moduleFiles, p pkgInfo, goroot string) error {
	var path, version, root string
	switch {
	case p.Standard:
		path, root = StdModule, goroot
	case p.Module == nil:
		return fmt.Errorf("package %s is in no module: build in module mode", p.ImportPath)
	case p.Module.Main:
		return nil
	default:
		path, version, root = p.Module.Path, p.Module.Version, p.Module.Dir
		if p.Module.Replace != nil {
			version = p.Module.Replace.Version
		}
	}
	m := mods[path]
	if m == nil {
		m = &moduleFiles{path: path, version: version, files: map[string]string{}}
		mods[path] = m
	}
	found, err := nearest(p.Dir, root)
	if err != nil {
		return err
	}
	if len(found) == 0 && m.bare == "" {
		m.bare = p.ImportPath
	}
	for _, f := range found {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			return err
		}
		m.files[filepath.ToSlash(rel)] = f
	}
	return nil
}

// nearest returns the license files of the first folder, from dir up to
// root, that has any.
func nearest(dir, root string) ([]string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, fmt.Errorf("reading the licenses of %s: %w", dir, err)
		}
		var found []string
		for _, e := range ents {
			if e.Type().IsRegular() && fileName.MatchString(e.Name()) {
				found = append(found, filepath.Join(d, e.Name()))
			}
		}
		if len(found) > 0 {
			return found, nil
		}
		if rel, err := filepath.Rel(root, d); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			return nil, nil
		}
	}
}

// judge classifies the module's files and says whether it may be linked.
func (m *moduleFiles) judge() Module {
	out := Module{Path: m.path, Version: m.version}
	for name, abs := range m.files {
		out.Files = append(out.Files, classify(m.path, name, abs))
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Name < out.Files[j].Name })
	var problems []string
	for _, f := range out.Files {
		if f.Verdict == Incompatible || f.Verdict == Unidentified {
			problems = append(problems, f.Name+": "+f.Reason)
		}
	}
	if m.bare != "" {
		problems = append(problems, "no license file from package "+m.bare+" up to the module's root: code without a license may not be used; replace the dependency")
	} else if !slices.ContainsFunc(out.Files, func(f File) bool { return f.Verdict != NotLinked }) {
		problems = append(problems, "no license file for its linked code")
	}
	out.Problem = strings.Join(problems, "; ")
	return out
}

// classify reads one license file of module and judges it.
func classify(module, name, abs string) File {
	f := File{Name: name}
	data, err := os.ReadFile(abs)
	if err != nil {
		f.Verdict, f.Reason = Unidentified, err.Error()
		return f
	}
	cov := licensecheck.Scan(data)
	f.Percent = cov.Percent
	for _, m := range cov.Match {
		if !slices.Contains(f.IDs, m.ID) {
			f.IDs = append(f.IDs, m.ID)
		}
	}
	if strings.HasSuffix(strings.ToLower(name), ".docs") {
		f.Verdict, f.Reason = NotLinked, "covers documentation, which is not linked"
		return f
	}
	if why, ok := notLinked()[module+" "+name]; ok {
		f.Verdict, f.Reason = NotLinked, why
		return f
	}
	f.Verdict, f.Reason = judgeIDs(f.IDs, f.Percent)
	return f
}

// judgeIDs is the verdict on a file whose text is percent known license
// text, with the licenses ids.
func judgeIDs(ids []string, percent float64) (Verdict, string) {
	var bad []string
	for _, id := range ids {
		if c, ok := policy()[id]; !ok || c.incompatible {
			bad = append(bad, id+" ("+policyReason(id)+")")
		}
	}
	switch {
	case len(bad) > 0:
		return Incompatible, "not compatible with Apache-2.0: " + strings.Join(bad, ", ") +
			": replace the dependency, or drop the import that links it"
	case len(ids) == 0 || percent < MinPercent:
		return Unidentified, fmt.Sprintf("not identified: %.0f%% of its text is a known license (%s), %d%% needed: "+
			"read it, and if it is compatible add its SPDX identifier to builder/internal/licenses/policy.go with the reason",
			percent, orNone(ids), MinPercent)
	}
	return Compatible, policy()[ids[0]].category
}

// orNone joins ids, or says "none".
func orNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// Err returns one error naming every module that may not be linked, or nil.
func (r *Report) Err() error {
	var errs []error
	for _, m := range r.Modules {
		if m.Problem != "" {
			errs = append(errs, fmt.Errorf("module %s: %s", m.name(), m.Problem))
		}
	}
	return errors.Join(errs...)
}

// Find returns the module with the given path, or nil.
func (r *Report) Find(path string) *Module {
	for i := range r.Modules {
		if r.Modules[i].Path == path {
			return &r.Modules[i]
		}
	}
	return nil
}

// name is "path@version", or the path of a module without a version.
func (m Module) name() string {
	if m.Version == "" {
		return m.Path
	}
	return m.Path + "@" + m.Version
}

// WriteTable writes one line per license file: module, version, file,
// licenses, coverage and verdict.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODULE\tVERSION\tFILE\tLICENSE\tKNOWN TEXT\tVERDICT")
	for _, m := range r.Modules {
		for _, f := range m.Files {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f%%\t%s\n", m.Path, m.Version, f.Name, orNone(f.IDs), f.Percent, f.Verdict)
		}
		if len(m.Files) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\tnone\t-\t%s\n", m.Path, m.Version, Unidentified)
		}
	}
	return tw.Flush()
}
