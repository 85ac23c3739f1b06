// Package matrix reads and checks matrix.json, the list of Jetson images
// jetbake builds: which router to compile, where to publish it, and one
// release per JetPack with its base images and SM targets.
//
// Parse and Load report every problem at once as a *ValidationError whose
// lines name the JSON path, the value and the fix. The accepted shape is
// written down twice, in this package and in matrix.schema.json for
// editors; a test keeps the two in step.
package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/inputfile"
	computecap "github.com/jetbake/jetbake/compute_cap"
)

// DefaultFile is the matrix file name the commands read by default.
const DefaultFile = "matrix.json"

// Matrix is a parsed and checked matrix.json.
type Matrix struct {
	// Schema is the editor's JSON Schema reference; it is not used.
	Schema string `json:"$schema,omitempty"`
	// Router says which program is compiled into every image.
	Router Router `json:"router"`
	// Image says where images are published and how they are tagged.
	Image Image `json:"image"`
	// Releases are the images to build, one per JetPack release.
	Releases []Release `json:"releases"`
	// Dir is the absolute folder of the matrix file, which local paths are
	// relative to. Load sets it; Parse leaves it empty, meaning the working
	// directory.
	Dir string `json:"-"`
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
	// Output is the absolute path of the compiled binary in the Target stage.
	Output string `json:"output"`
	// Smoke is the argument list of a smoke test run, e.g. ["--version"].
	Smoke []string `json:"smoke,omitempty"`
}

// Image says where images go and what they carry.
type Image struct {
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
	// CUDA is the CUDA toolkit version, e.g. "12.6".
	CUDA string `json:"cuda"`
	// Ubuntu is the Ubuntu release of the images, e.g. "22.04".
	Ubuntu string `json:"ubuntu"`
	// BuildBase is the image the router is compiled in.
	BuildBase string `json:"build_base"`
	// RuntimeBase is the image the runtime image starts from.
	RuntimeBase string `json:"runtime_base"`
	// Targets are compute capabilities such as "8.7", one router binary each.
	Targets []string `json:"targets"`
	// Tier is the support tier; see Tiers.
	Tier string `json:"tier"`
	// Hardware names the Jetson modules the release is for.
	Hardware []string `json:"hardware"`
	// Tags are extra tag templates for this release only.
	Tags []string `json:"tags,omitempty"`
	// BuildArgs are extra build arguments of the router stage.
	BuildArgs map[string]string `json:"build_args,omitempty"`
}

// Capabilities returns the release's targets as parsed capabilities, in
// matrix order. Targets of a checked matrix always parse.
func (r *Release) Capabilities() ([]computecap.Capability, error) {
	caps := make([]computecap.Capability, len(r.Targets))
	for i, t := range r.Targets {
		c, err := computecap.Parse(t)
		if err != nil {
			return nil, fmt.Errorf("release %s: targets[%d]: %w", r.Name, i, err)
		}
		caps[i] = c
	}
	return caps, nil
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

// Load reads and checks the matrix file at path. Local paths in it are
// resolved against the file's folder, and a local context folder and the
// Dockerfile must exist. Problems in the file come back as a
// *ValidationError that names the file.
func Load(path string) (*Matrix, error) {
	data, err := inputfile.Read(path, "matrix file",
		inputfile.WithMissingHint("run 'jetbake init' to write one, or name yours with -f/--file"))
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read matrix: %w", err)
	}
	m, err := parse(data, filepath.Dir(abs), true)
	if verr, ok := err.(*ValidationError); ok {
		verr.File = path
	}
	return m, err
}

// Parse checks a matrix held in memory. It does not touch the file system:
// local paths stay relative to the working directory and are not checked
// for existence.
func Parse(data []byte) (*Matrix, error) {
	return parse(data, "", false)
}

// parse decodes and checks data. dir is the matrix file's folder; with
// checkFiles the local context and Dockerfile must exist.
func parse(data []byte, dir string, checkFiles bool) (*Matrix, error) {
	var errs checker
	if !json.Valid(data) {
		// Only json.Unmarshal says where the syntax error is.
		err := json.Unmarshal(data, new(any))
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, &ValidationError{Errors: []FieldError{*syntaxError(data, 0, err)}}
	}
	root, syntax := decodeTree(data)
	if syntax != nil {
		return nil, &ValidationError{Errors: []FieldError{*syntax}}
	}
	checkShape(root, &errs)
	shapeErrs := errs.errs[:len(errs.errs):len(errs.errs)]
	if root.kind != kindObject {
		return nil, &ValidationError{Errors: shapeErrs}
	}
	// Fields of the wrong type are left empty: the shape check reported them,
	// and the rules below still check the rest.
	m := fillMatrix(root)
	m.Dir = dir
	checkRules(&m, &errs)
	if checkFiles {
		checkFilesExist(&m, &errs)
	}
	all := shapeErrs
	for _, e := range errs.errs[len(shapeErrs):] {
		if !coveredByAny(shapeErrs, e.Path) {
			all = append(all, e)
		}
	}
	if len(all) > 0 {
		return nil, &ValidationError{Errors: all}
	}
	return &m, nil
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
// "5 releases, 7 SM targets, 11 tags".
func (m *Matrix) Summary() string {
	targets, tags := 0, 0
	for i := range m.Releases {
		targets += len(m.Releases[i].Targets)
		if t, err := m.Tags(i); err == nil {
			tags += len(t)
		}
	}
	return fmt.Sprintf("%s, %s, %s", plural(len(m.Releases), "release"), plural(targets, "SM target"), plural(tags, "tag"))
}

// plural writes a count and a noun, adding "s" when the count is not one.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, strings.TrimSuffix(noun, "s"))
}
