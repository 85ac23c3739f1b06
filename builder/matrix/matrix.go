// Package matrix reads and checks matrix.json, the list of Jetson images
// jetbake builds: which router to compile, where to publish it, and one
// release per JetPack with its base images and SM targets.
//
// Parse and Load report every problem at once as a *ValidationError whose
// lines name the JSON path, the line and column, the value and the fix. The
// shape is defined once, in matrix.schema.json (embedded; SchemaJSON returns it),
// which editors read too; the rules beyond it (JetPack, L4T, CUDA and SM
// facts, unique names and tags) are Go code that reads computecap's table.
package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/computecap"
)

// DefaultFile is the matrix file name the commands read by default.
const DefaultFile = "matrix.json"

// Matrix is a parsed and checked matrix.json.
type Matrix struct {
	// Schema is the editor's JSON Schema reference; it is not used.
	Schema string `json:"$schema,omitempty"`
	// Router says which program is compiled into every image; zero in an
	// app's matrix.
	Router Router `json:"router"`
	// App is the Python app built on each release's framework container;
	// nil in a router's matrix. A matrix has exactly one of the two.
	App *App `json:"app,omitempty"`
	// Image says where images are published and how they are tagged.
	Image Publish `json:"image"`
	// Releases are the images to build, one per JetPack release.
	Releases []Release `json:"releases"`
	// Declared are the Jetson facts the matrix declares for what
	// jetbake's table lacks, or nil; Facts is the table with them.
	Declared *DeclaredFacts `json:"facts,omitempty"`
	// Dir is the absolute folder of the matrix file, which local paths are
	// relative to. Load sets it; Parse leaves it empty, meaning the working
	// directory.
	Dir string `json:"-"`
	// Root is the matrix's repository (RepositoryRoot of Dir), which its
	// local paths must not leave; Load sets it. Empty means no boundary.
	Root string `json:"-"`

	// allowRead are the folders outside Root granted with WithAllowRead,
	// resolved.
	allowRead []string

	// table is the table of Jetson facts the matrix was checked against.
	table *computecap.Table

	// Warnings are what a valid matrix should still change, with line
	// and column: fields that hold the placeholders jetbake init writes.
	Warnings []FieldError `json:"-"`
}

// Facts returns the table of Jetson facts the matrix was checked against:
// the one WithTable gave, else the shipped one.
func (m *Matrix) Facts() *computecap.Table {
	if m.table == nil {
		return computecap.DefaultTable()
	}
	return m.table
}

// Router says where the router's source is and how it is built.
type Router struct {
	// Name is the router's name, e.g. "text-embeddings-router".
	Name string `json:"name"`
	// Version is the router's version, used in tags and annotations.
	Version string `json:"version"`
	// Context is the build context: a git URL pinned with "#tag-or-commit",
	// or a local folder relative to the matrix file's folder.
	Context string `json:"context"`
	// Dockerfile is the Dockerfile's path relative to the matrix file's folder.
	Dockerfile string `json:"dockerfile"`
	// Target is the Dockerfile stage that compiles the router.
	Target string `json:"target"`
	// RuntimeTarget is the Dockerfile stage, FROM ${RUNTIME_BASE}, that
	// images are assembled on instead of the raw runtime base; "" for none.
	RuntimeTarget string `json:"runtime_target,omitempty"`
	// Output is the absolute path of the compiled binary in the Target stage.
	Output string `json:"output"`
	// Smoke is the argument list of a smoke test run, e.g. ["--version"].
	Smoke []string `json:"smoke,omitempty"`
	// BuildArgs are build arguments of the router stage for every release,
	// e.g. {"CARGO_FEATURES": "candle-cuda"}.
	BuildArgs map[string]string `json:"build_args,omitempty"`
	// TargetBuildArgs are build arguments for one SM target, by target
	// ("7.2"), over BuildArgs.
	TargetBuildArgs map[string]map[string]string `json:"target_build_args,omitempty"`
	// Env is the runtime image's environment, e.g. {"PORT": "80"}.
	Env map[string]string `json:"env,omitempty"`
	// Cmd is the image's default arguments; `docker run IMAGE ARGS...` replaces them.
	Cmd []string `json:"cmd,omitempty"`
	// Ports are the ports the image exposes, e.g. ["80/tcp"].
	Ports []string `json:"ports,omitempty"`
	// Health is the HTTP route the router answers its health on, e.g.
	// "/health" (TEI's); `jetbake fleet` probes it. "" for none.
	Health string `json:"health,omitempty"`
}

// Publish says where images go and what they carry.
type Publish struct {
	// Repository is the image repository without a tag.
	Repository string `json:"repository"`
	// Source is the URL of the project that builds the images.
	Source string `json:"source"`
	// Tags are tag templates applied to every release; see ExpandTag.
	Tags []string `json:"tags"`
	// Labels are extra image config labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are extra manifest and index annotations.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Release is one image: a JetPack release and the SM targets built for it.
type Release struct {
	// Name is the release's unique name, e.g. "jetpack6.2".
	Name string `json:"name"`
	// JetPack is the JetPack version, e.g. "6.2".
	JetPack string `json:"jetpack"`
	// L4T is the Jetson Linux version, e.g. "36.4.3".
	L4T string `json:"l4t"`
	// CUDA is the CUDA toolkit version, e.g. "12.6"; an app release's is
	// its framework container's.
	CUDA string `json:"cuda"`
	// Ubuntu is the Ubuntu release of the images, e.g. "22.04".
	Ubuntu string `json:"ubuntu"`
	// BuildBase is the image the router is compiled in.
	BuildBase string `json:"build_base"`
	// RuntimeBase is the image the runtime image starts from.
	RuntimeBase string `json:"runtime_base"`
	// Base is an app release's framework container, such as
	// "nvcr.io/nvidia/pytorch:25.06-py3-igpu"; routers leave it empty.
	Base string `json:"base,omitempty"`
	// Targets are the compute capabilities built for, such as 8.7, one
	// router binary each; they are written as "8.7" in the file. An app
	// release's targets are the GPUs its image must run on.
	Targets []computecap.Capability `json:"targets"`
	// Tier is the support tier; see Tiers.
	Tier string `json:"tier"`
	// Hardware names the Jetson modules the release is for.
	Hardware []string `json:"hardware"`
	// Tags are extra tag templates for this release only.
	Tags []string `json:"tags,omitempty"`
	// BuildArgs are extra build arguments of the router stage, over the router's.
	BuildArgs map[string]string `json:"build_args,omitempty"`
	// TargetBuildArgs are build arguments for one of Targets, over BuildArgs.
	TargetBuildArgs map[string]map[string]string `json:"target_build_args,omitempty"`
	// CrossBuildBase is the amd64 image the router stage cross-compiles in
	// on an amd64 node; nil builds under QEMU there.
	CrossBuildBase *CrossBuildBase `json:"cross_build_base,omitempty"`
	// BuildPath forces the router stage's path on an amd64 node: "cross"
	// or "qemu"; "" chooses (see BuildPaths).
	BuildPath string `json:"build_path,omitempty"`
}

// CrossBuildBase is what a release's cross build base is and holds: a
// prebuilt image, or a recipe jetbake builds (one of Image and Recipe).
type CrossBuildBase struct {
	// Image is the image reference.
	Image string `json:"image,omitempty"`
	// Recipe is the recipe's path relative to the matrix file's folder
	// (dockerfiles/Dockerfile-cross-base, which jetbake init writes beside
	// the matrix), built with the table's arguments for the release
	// (Matrix.RecipeArgs) and BuildArgs over them.
	Recipe string `json:"recipe,omitempty"`
	// BuildArgs are the recipe's build arguments over the table's: a
	// mirror's repositories, for example.
	BuildArgs map[string]string `json:"build_args,omitempty"`
	// Platform is its platform: "linux/amd64".
	Platform string `json:"platform"`
	// CUDA is the CUDA release of its cross package.
	CUDA string `json:"cuda"`
	// CUDATarget is the folder under targets/ with the Jetson's CUDA.
	CUDATarget string `json:"cuda_target"`
}

// TargetBuildArgs returns the build arguments of the release's target
// (keyed "8.7" in the file): router.build_args, then
// router.target_build_args[sm], then the release's build_args, then its
// target_build_args[sm], each over the ones before.
func (m *Matrix) TargetBuildArgs(r *Release, target computecap.Capability) map[string]string {
	sm := target.String()
	out := map[string]string{}
	for _, layer := range []map[string]string{m.Router.BuildArgs, m.Router.TargetBuildArgs[sm], r.BuildArgs, r.TargetBuildArgs[sm]} {
		for k, v := range layer {
			out[k] = v
		}
	}
	return out
}

// CUDAVersion returns the release's CUDA version parsed.
func (r *Release) CUDAVersion() (computecap.CUDAVersion, error) {
	v, err := computecap.ParseCUDAVersion(r.CUDA)
	if err != nil {
		return v, fmt.Errorf("release %s: cuda: %w", r.Name, err)
	}
	return v, nil
}

// Release returns the release with the given name.
func (m *Matrix) Release(name string) (*Release, bool) {
	for i := range m.Releases {
		if m.Releases[i].Name == name {
			return &m.Releases[i], true
		}
	}
	return nil, false
}

// ReleaseNames returns the release names in matrix order.
func (m *Matrix) ReleaseNames() []string {
	names := make([]string, len(m.Releases))
	for i, r := range m.Releases {
		names[i] = r.Name
	}
	return names
}

// Option changes how a matrix is checked.
type Option func(*options)

// options are the settings of Parse and Load.
type options struct {
	table     *computecap.Table
	allowRead []string
	// grantRead and missingHint word two fixes for a command; see
	// WithGrantReadFix and WithMissingHint.
	grantRead   func(path string) string
	missingHint string
	// dir is the matrix file's folder for Parse (WithDir).
	dir string
}

// WithDir is, for Parse, the folder of the file the matrix came from: the
// facts file it names is read from there. Load knows it already.
func WithDir(dir string) Option {
	return func(o *options) { o.dir = dir }
}

// WithMissingHint is the fix Load offers for a matrix file that does not
// exist, in the words of a command, such as "run 'jetbake init' to write
// one, or name yours with -f/--file"; the default names no flag.
func WithMissingHint(hint string) Option {
	return func(o *options) { o.missingHint = hint }
}

// WithTable checks the matrix against table t of Jetson facts instead of
// the shipped one (computecap.DefaultTable), for example one with a future
// Jetson added.
func WithTable(t *computecap.Table) Option {
	return func(o *options) { o.table = t }
}

// Load reads and checks the matrix file at path. Local paths in it are
// resolved against the file's folder; a local context folder and the
// Dockerfile must exist and, symbolic links followed, lie inside the
// matrix's repository (RepositoryRoot) or a folder WithAllowRead grants.
// Problems in the file come back as a *ValidationError that names the file.
func Load(path string, opts ...Option) (*Matrix, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	hint := o.missingHint
	if hint == "" {
		hint = "run 'jetbake init' to write one, or name another file"
	}
	data, err := inputfile.Read(path, "matrix file", inputfile.WithMissingHint(hint))
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read matrix: %w", err)
	}
	m, err := parse(data, filepath.Dir(abs), true, opts)
	if verr, ok := err.(*ValidationError); ok {
		verr.File = path
		nameFactsFile(path, verr.Errors)
	}
	if m != nil {
		nameFactsFile(path, m.Warnings)
	}
	return m, err
}

// Parse checks a matrix held in memory. It does not touch the file system:
// local paths stay relative to the working directory and are not checked
// for existence. With WithDir it reads the facts file the matrix names
// from that folder, and nothing else.
func Parse(data []byte, opts ...Option) (*Matrix, error) {
	return parse(data, "", false, opts)
}

// parse decodes and checks data. dir is the matrix file's folder; with
// checkFiles the local context and Dockerfile must exist.
func parse(data []byte, dir string, checkFiles bool, opts []Option) (*Matrix, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	pos, syntax := scanDocument(data)
	if syntax != nil {
		return nil, &ValidationError{Errors: []FieldError{*syntax}}
	}
	schema, err := compiledSchema()
	if err != nil {
		return nil, err
	}
	doc, err := decodeGeneric(data)
	if err != nil {
		return nil, &ValidationError{Errors: []FieldError{*syntaxError(data, 0, err)}}
	}
	shapeErrs, bad := shapeErrors(schema, doc)
	textErrs, textBad := controlErrors(doc)
	for _, e := range textErrs {
		if !coveredByAny(shapeErrs, e.Path) {
			shapeErrs = append(shapeErrs, e)
		}
	}
	bad = append(bad, textBad...)
	sortByPosition(shapeErrs, pos, data)
	if _, isObject := doc.(map[string]any); !isObject {
		return nil, &ValidationError{Errors: shapeErrs}
	}
	// Values of the wrong shape were reported; the rules check the rest.
	var m Matrix
	if err := json.Unmarshal(withoutValues(doc, bad), &m); err != nil {
		shapeErrs = append(shapeErrs, FieldError{Path: "$", Message: err.Error(), Fix: "correct the value it names"})
	}
	m.Dir = dir
	if m.Dir == "" {
		m.Dir = o.dir
	}
	if checkFiles {
		m.Root, m.allowRead = RepositoryRoot(dir), resolveAllowed(o.allowRead)
	}
	errs := checker{table: o.table}
	top, _ := doc.(map[string]any)
	_, hasRouter := top[KindRouter]
	_, hasApp := top[KindApp]
	checkKind(hasRouter, hasApp, &errs) // with both, the rules check the app's releases
	factWarnings := declareFacts(&m, data, pos, checkFiles, &errs)
	checkRules(&m, &errs)
	m.table = errs.facts()
	if checkFiles {
		checkFilesExist(&m, &errs, o.grantRead)
	}
	all := shapeErrs
	for _, e := range errs.errs {
		if !coveredByAny(shapeErrs, e.Path) {
			all = append(all, e)
		}
	}
	if len(all) > 0 {
		placeAll(all[len(shapeErrs):], pos, data)
		return nil, &ValidationError{Errors: all}
	}
	m.Warnings = append(placeholderWarnings(&m), checkDeclaredTiers(&m)...)
	placeAll(m.Warnings, pos, data)
	m.Warnings = append(m.Warnings, factWarnings...)
	return &m, nil
}

// decodeGeneric decodes data as the schema library wants it: maps, slices
// and json.Number.
func decodeGeneric(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// withoutValues returns doc as JSON with the values at the given paths set
// to null, so that decoding into Matrix leaves them empty instead of failing.
func withoutValues(doc any, paths []string) []byte {
	if len(paths) > 0 {
		clearPaths(doc, "$", paths)
	}
	b, _ := json.Marshal(doc)
	return b
}

// clearPaths sets the values of doc at paths to null, in place.
func clearPaths(v any, path string, paths []string) {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			p := keyPath(path, k)
			if slices.Contains(paths, p) {
				x[k] = nil
				continue
			}
			clearPaths(item, p, paths)
		}
	case []any:
		for i, item := range x {
			p := indexPath(path, i)
			if slices.Contains(paths, p) {
				x[i] = nil
				continue
			}
			clearPaths(item, p, paths)
		}
	}
}

// sortByPosition fills in the line and column of each error and sorts them
// into document order.
func sortByPosition(errs []FieldError, pos positions, data []byte) {
	placeAll(errs, pos, data)
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Column < errs[j].Column
	})
}

// placeAll fills in the line and column of errors from the value's position,
// or, for a missing field, from the position of the object it belongs in.
func placeAll(errs []FieldError, pos positions, data []byte) {
	for i := range errs {
		if errs[i].File != "" {
			continue // placed in its own file
		}
		for p := errs[i].Path; p != ""; p = parentPath(p) {
			if off, ok := pos[p]; ok {
				errs[i].Line, errs[i].Column = computecap.LineColumn(data, off)
				break
			}
		}
	}
}

// parentPath drops the last member or index of a path: "releases[2].tier"
// gives "releases[2]", "releases[2]" gives "releases", "releases" gives "$"
// and "$" gives "".
func parentPath(p string) string {
	if p == "$" {
		return ""
	}
	cut := max(strings.LastIndexByte(p, '.'), strings.LastIndexByte(p, '['))
	if cut <= 0 {
		return "$"
	}
	return p[:cut]
}

// coveredByAny reports whether a shape error already explains a problem at path.
func coveredByAny(shapeErrs []FieldError, path string) bool {
	for _, e := range shapeErrs {
		if covers(e.Path, path) {
			return true
		}
	}
	return false
}

// Summary describes a checked matrix in one line, e.g.
// "5 releases, 7 SM targets, 11 tags, on stage runtime-base" (the last part
// when images are assembled on router.runtime_target).
func (m *Matrix) Summary() string {
	targets, tags := 0, 0
	for i := range m.Releases {
		targets += len(m.Releases[i].Targets)
		if t, err := m.Tags(i); err == nil {
			tags += len(t)
		}
	}
	out := fmt.Sprintf("%s, %s, %s", plural(len(m.Releases), "release"), plural(targets, "SM target"), plural(tags, "tag"))
	if m.Router.RuntimeTarget != "" {
		out += ", on stage " + m.Router.RuntimeTarget
	}
	if m.App != nil {
		out = "app " + m.App.Name + ", " + out
	}
	return out
}

// plural writes a count and a noun, adding "s" when the count is not one.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, strings.TrimSuffix(noun, "s"))
}
