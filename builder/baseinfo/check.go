package baseinfo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// Need is what a release needs of one of its bases.
type Need struct {
	// Role is "build" or "runtime": a build base needs the CUDA toolkit,
	// and the bases a fix offers are devel ones.
	Role string
	// Ref is the base's reference as the matrix writes it.
	Ref string
	// JetPack is the release's JetPack version, for messages.
	JetPack string
	// Flavour is the CUDA build of the release's JetPack line; "" checks
	// no flavour.
	Flavour computecap.Flavour
	// CUDA is the release's cuda, such as "12.6": the base's major and
	// minor must be the same.
	CUDA string
	// Table offers bases that fit; nil is the shipped one.
	Table *computecap.Table
}

// MismatchError is a base whose contents do not fit its release.
type MismatchError struct {
	// Need is what the release needs.
	Need Need
	// Got is what the base holds.
	Got Info
	// Flavour is set when the flavour differs, else the CUDA version does.
	Flavour bool
}

// Error names the base, what it holds and where that was read, what the
// release needs, and a base that fits.
func (e *MismatchError) Error() string {
	n, got := e.Need, e.Got
	want, _ := computecap.ParseCUDAVersion(n.CUDA)
	have, _ := got.CUDAVersion()
	head := fmt.Sprintf("%s base %s holds %s (read from %s), but ", n.Role, n.Ref, got.Describe(), strings.Join(got.From, ", "))
	such := ""
	if fits := e.fitting(want); len(fits) > 0 {
		such = " such as " + fits[0]
	}
	if e.Flavour {
		return head + fmt.Sprintf("JetPack %s needs %s CUDA: %s; use %s base%s", n.JetPack, n.Flavour.Name(),
			computecap.FlavourMismatch(got.Flavour, n.Flavour), n.Flavour.WithArticle(), such)
	}
	what := "would run on"
	if n.Role == "build" {
		what = "would be compiled against"
	}
	return head + fmt.Sprintf("the release's cuda is %s: its routers %s CUDA %s; use a base with CUDA %s%s, or correct the release's cuda",
		n.CUDA, what, have, want, such)
}

// fitting lists known bases that fit the need, other than the base itself.
func (e *MismatchError) fitting(cuda computecap.CUDAVersion) []string {
	t := e.Need.Table
	if t == nil {
		t = computecap.DefaultTable()
	}
	return slices.DeleteFunc(t.BasesFitting(e.Need.Flavour, cuda, e.Need.Role == "build"),
		func(ref string) bool { return ref == e.Need.Ref })
}

// Check returns a *MismatchError when i does not fit n: a flavour other
// than n.Flavour, or a CUDA major or minor other than n.CUDA's. What the
// image does not tell (no markers, no CUDA) is not held against it.
func (i Info) Check(n Need) error {
	if n.Flavour != "" && i.Flavour != "" && i.Flavour != n.Flavour {
		return &MismatchError{Need: n, Got: i, Flavour: true}
	}
	want, err := computecap.ParseCUDAVersion(n.CUDA)
	if have, ok := i.CUDAVersion(); ok && err == nil && have != want {
		return &MismatchError{Need: n, Got: i}
	}
	return nil
}
