package pydist

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Verdict is what became of one of the base's framework packages.
type Verdict string

// The verdicts.
const (
	// Kept: the image holds the base's copy, and no venv shadows it.
	Kept Verdict = "kept"
	// Replaced: the base's environment holds another version or path.
	Replaced Verdict = "replaced"
	// Shadowed: the base's copy is there, but a copy that the image's
	// python imports first is there too: in a venv, or earlier on the
	// system's path (/usr/local, a user site).
	Shadowed Verdict = "shadowed"
	// Removed: the base's environment holds no copy.
	Removed Verdict = "removed"
)

// Finding is one framework package of the base and its verdict.
type Finding struct {
	// Package is its name, normalized.
	Package string
	Verdict Verdict
	// Before is the base's copy; After the image's copy that decided the
	// verdict (nil when removed; Before's when kept).
	Before Dist
	After  *Dist
	// Venv is the venv of a shadowing copy; nil otherwise.
	Venv *Env
	// Framework says it can break torch (Framework): losing it fails the
	// build; losing another pin warns.
	Framework bool
	// Pin is the base's constraint line for it, "" when it has none.
	Pin string
}

// OK reports whether the package was kept.
func (f Finding) OK() bool { return f.Verdict == Kept }

// Sentence says what happened to the package and the fix; "" when kept.
// A package that cannot break torch (not Framework) gets a warning's fix.
func (f Finding) Sentence() string {
	b, before := f.Before, show(f.Before.Version+" at "+f.Before.Path)
	fix := fixFor(f.Package, b.Version)
	if !f.Framework {
		fix = "the base's " + ConstraintPath + " pins it (" + show(f.Pin) + "), but it is neither torch nor built against torch's libraries, so the build goes on; " +
			"install the app with -c " + ConstraintPath + " to keep the version NVIDIA tested with the container"
	}
	switch f.Verdict {
	case Replaced:
		return "the base's " + f.Package + " " + before + " was replaced by " + show(f.Package+" "+f.After.Version+" at "+f.After.Path) + ": " + fix
	case Shadowed:
		where := "is a second copy for the system python, which pip and import may take first"
		if f.Venv != nil {
			where = "is in the venv " + show(f.Venv.Prefix) + ", whose python imports it first"
		}
		return "the base's " + f.Package + " " + before + " is shadowed by " + show(f.Package+" "+f.After.Version+" at "+f.After.Path) + ", which " + where + ": " + fix
	case Removed:
		return "the base's " + f.Package + " " + before + " was removed: " + fix
	}
	return ""
}

// fixFor is the fix for a framework package that was lost.
func fixFor(name, version string) string {
	return "install the app with --no-deps or with PIP_CONSTRAINT=" + ConstraintPath + " (it pins " + name + "==" + version +
		"), and keep " + name + " out of the lock export (uv export --no-emit-package " + name + ")"
}

// Report is the comparison of a base with an image.
type Report struct {
	// Findings are the framework packages of the base, by name.
	Findings []Finding
}

// Problems are the framework packages that are not kept: they fail the
// build.
func (r *Report) Problems() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if !f.OK() && f.Framework {
			out = append(out, f)
		}
	}
	return out
}

// Warnings are the other pins of the base that are not kept: the build
// goes on, and says so.
func (r *Report) Warnings() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if !f.OK() && !f.Framework {
			out = append(out, f)
		}
	}
	return out
}

// Err is one error whose lines are the problems' sentences; nil when
// every framework package was kept.
func (r *Report) Err() error {
	var errs []error
	for _, f := range r.Problems() {
		errs = append(errs, errors.New(f.Sentence()))
	}
	return errors.Join(errs...)
}

// CompareOption changes what Compare counts as the app's environment.
type CompareOption func(*compareOptions)

type compareOptions struct{ app string }

// WithApp names the app's venv by its prefix (AppPrefix of its command):
// only that venv is judged for shadowing, and its own copy shadows the
// system's even when it does not include the system's site-packages. By
// default every venv that includes them is judged.
func WithApp(prefix string) CompareOption { return func(o *compareOptions) { o.app = prefix } }

// AppPrefix is the venv whose python runs command (its first element, an
// absolute path such as /opt/venv/bin/obliteratus): its folder's parent,
// when image has a venv there; "" otherwise.
func AppPrefix(image *Inventory, command string) string {
	p := path.Dir(path.Dir(path.Clean(command)))
	if _, ok := image.Venv(p); ok {
		return p
	}
	return ""
}

// Compare judges each framework package of base (Framework's) in image.
// The base's copies are in its system environment (or its venvs: each is
// judged in its own).
func Compare(base, image *Inventory, opts ...CompareOption) *Report {
	var o compareOptions
	for _, f := range opts {
		f(&o)
	}
	r := &Report{}
	framework := Framework(base)
	names := append(slices.Clone(framework), Pinned(base)...)
	slices.Sort(names)
	for _, name := range names {
		for _, b := range base.Dists {
			if b.Name == name {
				f := judge(b, image, o)
				f.Framework, f.Pin = slices.Contains(framework, name), base.pin(name)
				r.Findings = append(r.Findings, f)
			}
		}
	}
	return r
}

// judge is the verdict of the base's copy b in image.
func judge(b Dist, image *Inventory, o compareOptions) Finding {
	f := Finding{Package: b.Name, Before: b}
	same := image.Find(b.Name, b.Env)
	i := slices.IndexFunc(same, func(d Dist) bool { return d.Path == b.Path && d.Version == b.Version })
	others := slices.DeleteFunc(slices.Clone(same), func(d Dist) bool { return d.Path == b.Path && d.Version == b.Version })
	switch {
	case i < 0 && len(same) == 0:
		f.Verdict = Removed
	case i < 0:
		f.Verdict, f.After = Replaced, &others[0]
	case len(others) > 0:
		f.Verdict, f.After = Shadowed, &others[0]
	default:
		f.Verdict, f.After = Kept, &same[i]
	}
	if f.Verdict != Kept || b.Env != "" {
		return f
	}
	// The system's copy is kept: a venv that sees it may still hold its
	// own, which its python imports first.
	for _, v := range image.Venvs {
		if o.app != "" && v.Prefix != o.app || o.app == "" && !v.SystemSite {
			continue
		}
		if own := image.Find(b.Name, v.Prefix); len(own) > 0 {
			v := v
			f.Verdict, f.After, f.Venv = Shadowed, &own[0], &v
			return f
		}
	}
	return f
}

// String is the finding in one line, for logs and tables.
func (f Finding) String() string {
	if f.OK() {
		return f.Package + " " + f.Before.Version + " kept at " + f.Before.Path
	}
	return strings.TrimSpace(f.Sentence())
}

// show is s, quoted when it holds a character that is not graphic (an
// image's paths are anyone's: a terminal must not act on them).
func show(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) || r == utf8.RuneError }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// CompareImages reads base and image (one pass over each one's layers)
// and compares them, judging shadowing in the venv of the app's command
// (its first element; "" for every venv that sees the system's packages).
// The report's Err is what fails a release: one sentence per package.
func CompareImages(ctx context.Context, base, image v1.Image, command string) (*Report, error) {
	b, err := ReadImage(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("read the base's Python packages: %w", err)
	}
	i, err := ReadImage(ctx, image)
	if err != nil {
		return nil, fmt.Errorf("read the image's Python packages: %w", err)
	}
	return CompareApp(b, i, command), nil
}

// CompareApp compares base with image as CompareImages does, judging
// shadowing in the venv of the app's command ("" for every venv that sees
// the system's packages): for inventories read some other way, such as a
// build's, which reads the base once and the image's changes only.
func CompareApp(base, image *Inventory, command string) *Report {
	var opts []CompareOption
	if app := AppPrefix(image, command); command != "" && app != "" {
		opts = append(opts, WithApp(app))
	}
	return Compare(base, image, opts...)
}
