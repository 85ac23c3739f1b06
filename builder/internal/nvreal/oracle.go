package nvreal

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/jetbake/jetbake/builder/fatbin"
)

// The oracle: jetbake's fat-binary reader (package fatbin) beside NVIDIA's
// cuobjdump, file by file. cuobjdump lists the cubins and PTX of a file but
// not which fat binary (module) holds each, so the module count is checked
// the way cuobjdump can confirm it: every module jetbake reads is cut out
// alone and given to cuobjdump as a fat-binary file, which must list
// exactly that module's entries (a boundary too early leaves a fat binary
// cuobjdump cannot read; one too late lists the next module's entries too).

// Comparison is jetbake's reading of one file beside cuobjdump's.
type Comparison struct {
	// File is the file read.
	File string
	// Jetbake and Cuobjdump are the entries of the fat binaries cuobjdump
	// dumps by default: the executable ones (.nv_fatbin) when the file has
	// any, else the relocatable ones (__nv_relfatbin).
	Jetbake, Cuobjdump Listing
	// JetbakeAll and CuobjdumpAll are every fat binary's entries
	// (`cuobjdump --all-fatbin`).
	JetbakeAll, CuobjdumpAll Listing
	// Modules is how many fat binaries jetbake reads in the sections
	// cuobjdump dumps by default; ModulesAll in all of them.
	Modules, ModulesAll int
	// ModuleFaults are the modules cuobjdump, given one alone, listed
	// otherwise than jetbake: "module 3 of .nv_fatbin at 0x1f00: ...".
	ModuleFaults []string
}

// Agrees reports whether jetbake and cuobjdump read the same cubins and
// PTX, in the same order, and every module alone alike.
func (c Comparison) Agrees() bool {
	return slices.Equal(c.Jetbake, c.Cuobjdump) && slices.Equal(c.JetbakeAll, c.CuobjdumpAll) && len(c.ModuleFaults) == 0
}

// Cubins and PTX count the entries of a listing by kind.
func (l Listing) Cubins() int { return l.count("cubin") }

// PTX counts the listing's PTX entries.
func (l Listing) PTX() int { return l.count("PTX") }

func (l Listing) count(kind string) int {
	n := 0
	for _, c := range l {
		if c.Kind == kind {
			n++
		}
	}
	return n
}

// Listed is an entry of jetbake's reader as cuobjdump lists it.
func Listed(e fatbin.Entry) Code {
	return Code{Kind: e.Kind.String(), SM: e.SM.SM()}
}

// Compare reads file with jetbake's reader and with cuobjdump and returns
// both readings; scratch is a folder for the modules cut out. An error is
// a file that either reader cannot read at all.
func (p Parts) Compare(ctx context.Context, file, scratch string) (Comparison, error) {
	c := Comparison{File: file}
	f, err := os.Open(file)
	if err != nil {
		return c, err
	}
	defer f.Close()
	entries, err := fatbin.ReadELF(f, fatbin.Limits{})
	if err != nil {
		return c, fmt.Errorf("jetbake's reader: %s: %w", file, err)
	}
	dumped := defaultSection(entries)
	for _, e := range entries {
		c.JetbakeAll = append(c.JetbakeAll, Listed(e))
		if e.Section == dumped {
			c.Jetbake = append(c.Jetbake, Listed(e))
		}
	}
	if c.Cuobjdump, err = p.List(ctx, file, false); err != nil {
		return c, err
	}
	// cuobjdump's --all-fatbin lists more only when the file has a
	// __nv_relfatbin section (as the ELF reader, not the fat-binary
	// reader, sees it); cuBLASLt's listing takes seconds, so it is run
	// only then.
	c.CuobjdumpAll = c.Cuobjdump
	if hasRelocatable(f) {
		if c.CuobjdumpAll, err = p.List(ctx, file, true); err != nil {
			return c, err
		}
	}
	modules := fatbin.Modules(entries)
	c.ModulesAll = len(modules)
	for _, m := range modules {
		if m[0].Section == dumped {
			c.Modules++
		}
	}
	c.ModuleFaults, err = p.compareModules(ctx, f, modules, scratch)
	return c, err
}

// hasRelocatable reports whether the ELF file f has a __nv_relfatbin
// section.
func hasRelocatable(f io.ReaderAt) bool {
	ef, err := elf.NewFile(f)
	return err == nil && ef.Section("__nv_relfatbin") != nil
}

// defaultSection is the section cuobjdump dumps without --all-fatbin:
// .nv_fatbin when the file has entries there, else __nv_relfatbin.
func defaultSection(entries []fatbin.Entry) string {
	for _, e := range entries {
		if e.Section == ".nv_fatbin" {
			return e.Section
		}
	}
	return "__nv_relfatbin"
}

// compareModules cuts every module out of f into scratch, lists it with
// cuobjdump, a few at a time, and returns the modules listed otherwise.
func (p Parts) compareModules(ctx context.Context, f *os.File, modules [][]fatbin.Entry, scratch string) ([]string, error) {
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, err
	}
	faults := make([]string, len(modules))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.NumCPU())
	for i, m := range modules {
		s := ef.Section(m[0].Section)
		g.Go(func() error {
			var want Listing
			for _, e := range m {
				want = append(want, Listed(e))
			}
			at := fmt.Sprintf("module %d of %d (%s at 0x%x)", i+1, len(modules), s.Name, m[0].Fatbin)
			path := filepath.Join(scratch, fmt.Sprintf("module-%d.fatbin", i+1))
			defer os.Remove(path)
			if err := cutModule(s, m[0].Fatbin, path); err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			got, err := p.List(gctx, path, false)
			if err != nil {
				faults[i] = fmt.Sprintf("%s: cuobjdump cannot read it alone: %v", at, err)
			} else if !slices.Equal(got, want) {
				faults[i] = fmt.Sprintf("%s: jetbake reads %s; cuobjdump, given it alone, lists %s", at, want, got)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(faults, func(s string) bool { return s == "" }), nil
}

// cutModule writes the fat binary that starts at off in s to path: its
// 16-byte header and the size of entries the header gives.
func cutModule(s *elf.Section, off int64, path string) error {
	var h [fatbin.HeaderSize]byte
	if _, err := s.ReadAt(h[:], off); err != nil {
		return err
	}
	size := int64(binary.LittleEndian.Uint16(h[6:])) + int64(binary.LittleEndian.Uint64(h[8:]))
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.NewSectionReader(s, off, size))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
