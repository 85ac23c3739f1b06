// Package lock pins the base images of a plan to digests in matrix.lock.json,
// so that builds use exactly the bases that were resolved, and tells when a
// tag has moved since.
package lock

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
)

// DefaultFile is the lock file's name, next to the matrix.
const DefaultFile = "matrix.lock.json"

// File is the content of matrix.lock.json.
type File struct {
	// SchemaVersion is 1.
	SchemaVersion int `json:"schema_version"`
	// Bases maps each base reference of the matrix to its digest.
	Bases map[string]string `json:"bases"`
	// Contents maps each base reference to what the image at its digest
	// holds: its CUDA flavour and version, as read when it was locked.
	// Lock files written before jetbake read bases have none; the next
	// 'jetbake lock' adds them.
	Contents map[string]baseinfo.Info `json:"contents,omitempty"`
	// GitContexts maps the router's git context, as the matrix writes it,
	// to the commit its ref named when it was locked (see git.go). Lock
	// files written before jetbake pinned git contexts have none.
	GitContexts map[string]GitPin `json:"git_contexts,omitempty"`
}

// Resolver turns a base reference into the reference actually fetched (a
// mirror applied), e.g. imagebuild.Mirrors.Rewrite without a digest.
type Resolver func(ref string) (string, error)

// Resolve looks up the digest of every base of p, in the registry that
// resolve names for it, and reads what each holds (see package baseinfo);
// a cross build base is only checked to have a linux/amd64 image.
// It fails, writing nothing, when a base does not fit a release that uses
// it: another CUDA flavour or CUDA version than the release's.
func Resolve(ctx context.Context, p *plan.Plan, resolve Resolver, opts ...remote.Option) (*File, error) {
	contents, err := readAll(ctx, p, resolve, opts)
	if err != nil {
		return nil, err
	}
	f := &File{SchemaVersion: 1, Bases: map[string]string{}, Contents: contents}
	for ref, info := range contents {
		f.Bases[ref] = info.Digest
	}
	if err := checkContents(p, contents); err != nil {
		return nil, err
	}
	cross, err := crossDigests(p, resolve, append([]remote.Option{remote.WithContext(ctx)}, opts...))
	if err != nil {
		return nil, err
	}
	maps.Copy(f.Bases, cross)
	return f, nil
}

// digests looks up the digest of every base of p, without reading them.
func digests(ctx context.Context, p *plan.Plan, resolve Resolver, opts []remote.Option) (map[string]string, error) {
	out := map[string]string{}
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	for _, ref := range Bases(p) {
		digest, err := digestOf(ref, resolve, opts)
		if err != nil {
			return nil, err
		}
		out[ref] = digest
	}
	return out, nil
}

// Bases lists every base reference of p once, sorted: a router's build,
// runtime and cross build bases, an app's framework containers.
func Bases(p *plan.Plan) []string {
	refs := append(targetBases(p), CrossBases(p)...)
	slices.Sort(refs)
	return slices.Compact(refs)
}

func digestOf(ref string, resolve Resolver, opts []remote.Option) (string, error) {
	fetched, parsed, err := fetchRef(ref, resolve)
	if err != nil {
		return "", err
	}
	desc, err := remote.Head(parsed, opts...)
	if err != nil {
		return "", refs.DescribeRegistryError("resolve base "+ref+" (as "+fetched+")", err)
	}
	return desc.Digest.String(), nil
}

// rewriteFix is the fix of a lock file jetbake cannot use.
const rewriteFix = "run 'jetbake lock' to write it anew"

// Read reads a lock file. A problem in it is a *matrix.FileError naming
// the file, the line and column, the field, the value and the fix.
func Read(path string) (*File, error) {
	data, err := inputfile.Read(path, "lock file", inputfile.WithMissingHint("run 'jetbake lock' to write it"))
	if err != nil {
		return nil, err
	}
	var f File
	doc, err := matrix.DecodeFile(path, data, &f, rewriteFix)
	if err != nil {
		return nil, err
	}
	if f.SchemaVersion == 0 {
		return nil, doc.Problem("schema_version", "", "is missing: jetbake writes it in every lock file", "")
	}
	if f.SchemaVersion != 1 {
		return nil, doc.Problem("schema_version", strconv.Itoa(f.SchemaVersion), "is not a lock file schema this jetbake reads (1)", "")
	}
	if f.Bases == nil {
		return nil, doc.Problem("bases", "", "is missing", "")
	}
	refs := make([]string, 0, len(f.Bases))
	for ref := range f.Bases {
		refs = append(refs, ref)
	}
	slices.Sort(refs)
	for _, ref := range refs {
		if _, err := v1.NewHash(f.Bases[ref]); err != nil {
			return nil, doc.Problem(matrix.MemberPath("bases", ref), computecap.QuoteShort(f.Bases[ref]),
				"is not a digest such as sha256:<64 hex digits>", "")
		}
	}
	if err := checkContentsField(doc, &f); err != nil {
		return nil, err
	}
	if err := checkGitContexts(doc, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// Write writes f to path atomically.
func (f *File) Write(path string) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return inputfile.WriteFile(path, append(data, '\n'), 0o644)
}

// Missing lists the bases of p that f does not pin.
func (f *File) Missing(p *plan.Plan) []string {
	var out []string
	for _, ref := range Bases(p) {
		if f.Bases[ref] == "" {
			out = append(out, ref)
		}
	}
	return out
}

// Check resolves every base of p again and reports each whose tag has moved
// away from the digest in f, or that f does not pin. A moved base is read,
// and when what it holds differs from what f records, the report names
// both (Tegra CUDA 12.6.11, then SBSA CUDA 12.6.11).
func (f *File) Check(ctx context.Context, p *plan.Plan, resolve Resolver, opts ...remote.Option) error {
	return f.check(ctx, p, resolve, false, opts)
}

// CheckAll is Check for a plan of every release of the matrix: it also
// reports each pin of f that no release uses, which a stale lock file
// keeps after a base was changed or a release removed.
func (f *File) CheckAll(ctx context.Context, p *plan.Plan, resolve Resolver, opts ...remote.Option) error {
	return f.check(ctx, p, resolve, true, opts)
}

// check is Check, with unused pins reported when unused is set.
func (f *File) check(ctx context.Context, p *plan.Plan, resolve Resolver, unused bool, opts []remote.Option) error {
	now, err := digests(ctx, p, resolve, opts)
	if err != nil {
		return err
	}
	var moved []string
	for _, ref := range Bases(p) {
		switch locked := f.Bases[ref]; {
		case locked == "":
			moved = append(moved, fmt.Sprintf("%s is not in the lock file", ref))
		case locked != now[ref]:
			moved = append(moved, fmt.Sprintf("%s moved from %s to %s", ref, locked, now[ref])+
				f.contentsChange(ctx, ref, now[ref], resolve, opts))
		}
	}
	if unused {
		for _, ref := range f.Unused(p) {
			moved = append(moved, fmt.Sprintf("%s is pinned but no release uses it", ref))
		}
	}
	if len(moved) > 0 {
		return fmt.Errorf("the lock file is stale: %s; run 'jetbake lock' to pin the new digests after checking them", strings.Join(moved, "; "))
	}
	return nil
}

// Unused lists, sorted, the bases f pins that no release of p uses.
func (f *File) Unused(p *plan.Plan) []string {
	used := Bases(p)
	var out []string
	for ref := range f.Bases {
		if !slices.Contains(used, ref) {
			out = append(out, ref)
		}
	}
	slices.Sort(out)
	return out
}

// DefaultPath is the lock file beside the matrix at matrixPath. A link
// there that leads out of the matrix's repository is refused with an
// *OutsideError: the default lock file is the repository's, as the matrix
// is (see matrix.Inside).
func DefaultPath(matrixPath string) (string, error) {
	path := filepath.Join(filepath.Dir(matrixPath), DefaultFile)
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if out := matrix.LeavesRepository(filepath.Dir(abs), abs); out != "" {
		return "", &OutsideError{Path: path, Leads: out}
	}
	return path, nil
}

// PinsOptions say where the lock file is and how strictly it is used.
type PinsOptions struct {
	// File is the lock file; "" means DefaultFile beside the matrix, which
	// may be missing unless Check is set.
	File string
	// MatrixPath is the matrix file's path.
	MatrixPath string
	// Check compares every pin with what the registry serves now.
	Check bool
	// Resolve rewrites a base reference before it is fetched (mirrors).
	Resolve Resolver
}

// Path is the lock file a build uses: File, else DefaultFile beside the
// matrix; ok is false when that default file does not exist (a File that
// was given is used, and read, as it is).
func (o PinsOptions) Path() (path string, ok bool, err error) {
	if o.File != "" {
		return o.File, true, nil
	}
	if path, err = DefaultPath(o.MatrixPath); err != nil {
		return "", false, err
	}
	if _, err := os.Stat(path); err != nil {
		return path, false, nil
	}
	return path, true, nil
}

// Pins returns the base digests a build of p uses, by base reference: none
// when there is no lock file (and no check is asked for), else every base
// of p from the lock file, which must pin them all.
func Pins(ctx context.Context, p *plan.Plan, o PinsOptions, opts ...remote.Option) (map[string]string, error) {
	lf, err := Pinned(ctx, p, o, opts...)
	if lf == nil {
		return nil, err
	}
	return lf.Bases, nil
}

// Pinned is Pins returning the lock file itself, or nil when the build
// uses none: its Known contents spare the build reading the bases again.
// Check without a lock file is a *NoLockFileError.
func Pinned(ctx context.Context, p *plan.Plan, o PinsOptions, opts ...remote.Option) (*File, error) {
	path, ok, err := o.Path()
	if err != nil {
		return nil, err
	}
	if !ok {
		if o.Check {
			return nil, &NoLockFileError{Path: path}
		}
		return nil, nil
	}
	lf, err := Read(path)
	if err != nil {
		return nil, err
	}
	if missing := lf.Missing(p); len(missing) > 0 {
		return nil, fmt.Errorf("%s does not pin %s: run 'jetbake lock'", path, strings.Join(missing, ", "))
	}
	if o.Check {
		if err := lf.Check(ctx, p, o.Resolve, opts...); err != nil {
			return nil, err
		}
	}
	return lf, nil
}
