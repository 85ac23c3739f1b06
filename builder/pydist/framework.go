package pydist

import (
	"bufio"
	"io"
	"path"
	"slices"
	"strings"
)

// torchCoupled are the distributions built against torch itself: their
// compiled code imports torch's C++ API or is the compiler torch's
// version was released with, so that another version of them breaks
// torch, or torch breaks them, whatever their files link. NGC's containers
// build and pin each of them with their torch.
var torchCoupled = []string{"torch", "torchvision", "torchaudio", "triton", "pytorch-triton", "apex", "flash-attn", "transformer-engine", "transformer-engine-torch"}

// torchLibraries are the prefixes of the libraries of torch (and of the
// CUDA runtime it is built with) in the base: a compiled file that NEEDs
// one is built against the base's torch.
var torchLibraries = []string{"libtorch", "libc10", "libcudart"}

// maxRecord bounds a RECORD read: torch's lists about 20,000 files.
const maxRecord = 16 << 20

// compiledFiles are the shared objects a RECORD in the .dist-info folder
// dir lists, absolute (its paths are relative to the site folder).
func compiledFiles(dir string, r io.Reader) []string {
	site := path.Dir(dir)
	var out []string
	sc := bufio.NewScanner(io.LimitReader(r, maxRecord))
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	for sc.Scan() {
		name, _, _ := strings.Cut(sc.Text(), ",")
		name = strings.Trim(name, `"`)
		if base := path.Base(name); strings.HasSuffix(base, ".so") || strings.Contains(base, ".so.") {
			out = append(out, path.Join(site, name))
		}
	}
	return out
}

// Link marks each distribution whose compiled files (Compiled) include
// one whose DT_NEEDED entries (needed, by path: an image scan's) name a
// library of torch's.
func (inv *Inventory) Link(needed map[string][]string) {
	for i, d := range inv.Dists {
		for _, f := range inv.Compiled[d.Path] {
			if lib := torchLibrary(needed[f]); lib != "" {
				inv.Dists[i].Links = lib
				break
			}
		}
	}
}

// torchLibrary is the first of needed that is one of torch's libraries.
func torchLibrary(needed []string) string {
	for _, n := range needed {
		for _, p := range torchLibraries {
			if strings.HasPrefix(n, p) {
				return n
			}
		}
	}
	return ""
}

// Framework is what can break the base's torch, of the distributions the
// base holds: torch, the distributions built against it (torchvision,
// torchaudio, triton, apex, flash-attn, transformer-engine) and every
// distribution with a compiled file that NEEDs libtorch*, libc10* or
// libcudart (Link); sorted. A build that loses one of them fails.
func Framework(base *Inventory) []string {
	var names []string
	for _, d := range base.Dists {
		if slices.Contains(torchCoupled, d.Name) || d.Links != "" {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Pinned is the rest of what the base's constraint file pins, of the
// distributions the base holds: a build that loses one of them warns.
func Pinned(base *Inventory) []string {
	framework := Framework(base)
	var names []string
	for _, p := range base.Constraints {
		if !slices.Contains(framework, p.Name) && slices.ContainsFunc(base.Dists, func(d Dist) bool { return d.Name == p.Name }) {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// HasTorch reports whether the base holds a torch distribution, in its
// system environment or a venv.
func (inv *Inventory) HasTorch() bool {
	return slices.ContainsFunc(inv.Dists, func(d Dist) bool { return d.Name == "torch" })
}

// pin is the constraint file's line for name, "" when it has none.
func (inv *Inventory) pin(name string) string {
	for _, p := range inv.Constraints {
		if p.Name == name {
			return p.Spec
		}
	}
	return ""
}
