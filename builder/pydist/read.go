package pydist

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/jetbake/jetbake/builder/layerwalk"
)

// ConstraintPath is where NGC's containers pin their packages.
const ConstraintPath = "/etc/pip/constraint.txt"

// maxDists bounds how many distributions one file system may list.
const maxDists = 100_000

// Dist is one installed distribution.
type Dist struct {
	// Name is its name, normalized (PEP 503); Version as its metadata says.
	Name, Version string
	// Path is its .dist-info or .egg-info, absolute in the file system.
	Path string
	// Env is the prefix of the venv that holds it; "" for the system's
	// python (its /usr, /usr/local and user site folders).
	Env string
	// Links is the library of torch's (libtorch*, libc10*, libcudart*)
	// that one of its compiled files NEEDs, as Inventory.Link found it;
	// "" when none does, or when its files were not read.
	Links string `json:",omitempty"`
}

// Env is a venv: a prefix with pyvenv.cfg.
type Env struct {
	// Prefix is its folder, e.g. /opt/venv.
	Prefix string
	// SystemSite is its include-system-site-packages: its python imports
	// the venv's packages first, then the system's.
	SystemSite bool
}

// Inventory is what one file system holds.
type Inventory struct {
	// Dists are its distributions, by path.
	Dists []Dist
	// Venvs are its venvs, by prefix.
	Venvs []Env
	// Constraints are the pins of its /etc/pip/constraint.txt.
	Constraints []Pin
	// Compiled are the shared objects each distribution's RECORD lists
	// (extension modules, the libraries a wheel carries), by the path of
	// its .dist-info, absolute; nil when none lists any.
	Compiled map[string][]string `json:",omitempty"`
}

// Find is the copies of the package name (any spelling) in env.
func (inv *Inventory) Find(name, env string) []Dist {
	var out []Dist
	name = Normalize(name)
	for _, d := range inv.Dists {
		if d.Name == name && d.Env == env {
			out = append(out, d)
		}
	}
	return out
}

// Venv is the venv at prefix, if there is one.
func (inv *Inventory) Venv(prefix string) (Env, bool) {
	i := slices.IndexFunc(inv.Venvs, func(e Env) bool { return e.Prefix == prefix })
	if i < 0 {
		return Env{}, false
	}
	return inv.Venvs[i], true
}

// distRE matches a distribution's metadata file: the prefix (before lib/),
// the site folder and the .dist-info or .egg-info folder's name.
var distRE = regexp.MustCompile(`^(/.*?)?/lib(?:64)?/python[0-9.]*/(?:site|dist)-packages/([^/]+)\.(dist-info/METADATA|egg-info/PKG-INFO|egg-info)$`)

// recordRE matches a .dist-info's RECORD.
var recordRE = regexp.MustCompile(`^(?:/.*?)?/lib(?:64)?/python[0-9.]*/(?:site|dist)-packages/[^/]+\.dist-info/RECORD$`)

// collector gathers an inventory from the files of a file system, in any
// order.
type collector struct {
	inv    Inventory
	prefix map[string]string // a dist's path: its prefix
	cfgs   map[string]bool   // pyvenv.cfg's folder: include-system-site-packages
}

func newCollector() *collector {
	return &collector{prefix: map[string]string{}, cfgs: map[string]bool{}}
}

// file reads the file at name (absolute, cleaned) when it is one the
// inventory needs.
func (c *collector) file(name string, r io.Reader) error {
	switch {
	case name == ConstraintPath:
		c.inv.Constraints = ParseConstraints(r)
	case path.Base(name) == "pyvenv.cfg":
		c.cfgs[path.Dir(name)] = systemSite(r)
	case recordRE.MatchString(name):
		if so := compiledFiles(path.Dir(name), r); len(so) > 0 {
			if c.inv.Compiled == nil {
				c.inv.Compiled = map[string][]string{}
			}
			c.inv.Compiled[path.Dir(name)] = so
		}
	default:
		m := distRE.FindStringSubmatch(name)
		if m == nil {
			return nil
		}
		if len(c.inv.Dists) >= maxDists {
			return fmt.Errorf("more than %d Python distributions: not a file system to compare", maxDists)
		}
		dir := name
		if m[3] != "egg-info" {
			dir = path.Dir(name)
		}
		n, v := ParseMetadata(r)
		if n == "" || v == "" {
			fn, fv, _ := strings.Cut(m[2], "-")
			fv, _, _ = strings.Cut(fv, "-py") // an egg-info's "1.0-py3.12"
			n, v = cmp(n, fn), cmp(v, fv)
		}
		c.inv.Dists = append(c.inv.Dists, Dist{Name: Normalize(n), Version: v, Path: dir})
		c.prefix[dir] = m[1]
	}
	return nil
}

// cmp is a, or b when a is empty.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// done places each distribution in its environment and sorts.
func (c *collector) done() *Inventory {
	for dir, sys := range c.cfgs {
		c.inv.Venvs = append(c.inv.Venvs, Env{Prefix: dir, SystemSite: sys})
	}
	slices.SortFunc(c.inv.Venvs, func(a, b Env) int { return strings.Compare(a.Prefix, b.Prefix) })
	for i, d := range c.inv.Dists {
		if p := c.prefix[d.Path]; p != "" {
			if _, ok := c.cfgs[p]; ok {
				c.inv.Dists[i].Env = p
			}
		}
	}
	slices.SortFunc(c.inv.Dists, func(a, b Dist) int { return strings.Compare(a.Path, b.Path) })
	return &c.inv
}

// ReadImage reads img's distributions, venvs and constraint file, in one
// pass over its layers through layerwalk (whiteouts, opaque folders and
// later layers applied).
func ReadImage(ctx context.Context, img v1.Image) (*Inventory, error) {
	c := NewCollector()
	if err := layerwalk.Walk(ctx, img, c.File); err != nil {
		return nil, err
	}
	return c.Done(), nil
}

// Collector is ReadImage one file at a time, for a walk over an image's
// layers that feeds other readers too.
type Collector struct{ c *collector }

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{c: newCollector()} }

// File reads one file of the walk, when it is one an inventory needs
// (Wants).
func (c *Collector) File(hdr *tar.Header, r io.Reader) error {
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	return c.c.file(path.Clean("/"+hdr.Name), r)
}

// Done returns the inventory.
func (c *Collector) Done() *Inventory { return c.c.done() }

// ReadDir reads the distributions, venvs and constraint file of the file
// system at root (a folder: a test's, or an unpacked image). Symbolic
// links are not followed.
func ReadDir(ctx context.Context, root string) (*Inventory, error) {
	c := newCollector()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := path.Clean("/" + filepath.ToSlash(rel))
		if !c.wants(name) {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return c.file(name, f)
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", root, err)
	}
	return c.done(), nil
}

// wants reports whether file would read name, so that ReadDir opens only
// those files.
func (c *collector) wants(name string) bool { return Wants(name) }

// Wants reports whether the file at name (absolute, cleaned) is one an
// inventory reads: a distribution's metadata, a pyvenv.cfg or the
// constraint file. A reader that copies a file system's files for ReadDir
// need copy only these.
func Wants(name string) bool {
	return name == ConstraintPath || path.Base(name) == "pyvenv.cfg" || distRE.MatchString(name) || recordRE.MatchString(name)
}
