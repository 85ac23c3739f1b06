// Package lock pins the base images of a plan to digests in matrix.lock.json,
// so that builds use exactly the bases that were resolved, and tells when a
// tag has moved since.
package lock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/builder/plan"
)

// DefaultFile is the lock file's name, next to the matrix.
const DefaultFile = "matrix.lock.json"

// File is the content of matrix.lock.json.
type File struct {
	// SchemaVersion is 1.
	SchemaVersion int `json:"schema_version"`
	// Bases maps each base reference of the matrix to its digest.
	Bases map[string]string `json:"bases"`
}

// Resolver turns a base reference into the reference actually fetched (a
// mirror applied), e.g. imagebuild.Mirrors.Rewrite without a digest.
type Resolver func(ref string) (string, error)

// Resolve looks up the digest of every base of p, in the registry that
// resolve names for it.
func Resolve(ctx context.Context, p *plan.Plan, resolve Resolver, opts ...remote.Option) (*File, error) {
	f := &File{SchemaVersion: 1, Bases: map[string]string{}}
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	for _, ref := range Bases(p) {
		digest, err := digestOf(ref, resolve, opts)
		if err != nil {
			return nil, err
		}
		f.Bases[ref] = digest
	}
	return f, nil
}

// Bases lists every base reference of p once, sorted.
func Bases(p *plan.Plan) []string {
	var refs []string
	for _, r := range p.Releases {
		refs = append(refs, r.BuildBase, r.RuntimeBase)
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}

func digestOf(ref string, resolve Resolver, opts []remote.Option) (string, error) {
	fetched := ref
	if resolve != nil {
		var err error
		if fetched, err = resolve(ref); err != nil {
			return "", err
		}
	}
	// go-containerregistry reaches loopback and private registries over
	// plain HTTP by itself (name.Registry.Scheme).
	parsed, err := name.ParseReference(fetched)
	if err != nil {
		return "", fmt.Errorf("base %s: %w", ref, err)
	}
	desc, err := remote.Head(parsed, opts...)
	if err != nil {
		return "", fmt.Errorf("resolve base %s (as %s): %w", ref, fetched, err)
	}
	return desc.Digest.String(), nil
}

// Read reads a lock file.
func Read(path string) (*File, error) {
	data, err := inputfile.Read(path, "lock file", inputfile.WithMissingHint("run 'jetbake lock' to write it"))
	if err != nil {
		return nil, err
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not a valid lock file: %w (run 'jetbake lock' to write it anew)", path, err)
	}
	if f.SchemaVersion != 1 {
		return nil, fmt.Errorf("%s: schema_version %d is not known (run 'jetbake lock' to write it anew)", path, f.SchemaVersion)
	}
	for ref, d := range f.Bases {
		if _, err := v1.NewHash(d); err != nil {
			return nil, fmt.Errorf("%s: bases[%q]: %q is not a digest such as sha256:<64 hex> (run 'jetbake lock' to write it anew)", path, ref, d)
		}
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
// away from the digest in f, or that f does not pin.
func (f *File) Check(ctx context.Context, p *plan.Plan, resolve Resolver, opts ...remote.Option) error {
	now, err := Resolve(ctx, p, resolve, opts...)
	if err != nil {
		return err
	}
	var moved []string
	for _, ref := range Bases(p) {
		switch locked := f.Bases[ref]; {
		case locked == "":
			moved = append(moved, fmt.Sprintf("%s is not in the lock file", ref))
		case locked != now.Bases[ref]:
			moved = append(moved, fmt.Sprintf("%s moved from %s to %s", ref, locked, now.Bases[ref]))
		}
	}
	if len(moved) > 0 {
		return fmt.Errorf("the lock file is stale: %s; run 'jetbake lock' to pin the new digests after checking them", strings.Join(moved, "; "))
	}
	return nil
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

// Pins returns the base digests a build of p uses, by base reference: none
// when there is no lock file (and no check is asked for), else every base
// of p from the lock file, which must pin them all.
func Pins(ctx context.Context, p *plan.Plan, o PinsOptions, opts ...remote.Option) (map[string]string, error) {
	path := o.File
	if path == "" {
		path = filepath.Join(filepath.Dir(o.MatrixPath), DefaultFile)
		if _, err := os.Stat(path); err != nil {
			if o.Check {
				return nil, fmt.Errorf("--check-lock: no lock file at %s; run 'jetbake lock' first", path)
			}
			return nil, nil
		}
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
	return lf.Bases, nil
}
