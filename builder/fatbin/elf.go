package fatbin

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
)

// The ELF sections that hold fat binaries.
const (
	// SectionLoaded is nvcc's section: the fat binaries the CUDA runtime
	// registers and the driver loads, the ones `cuobjdump --list-elf` lists.
	SectionLoaded = ".nv_fatbin"
	// SectionRelocatable holds the copies of relocatable device code (-rdc)
	// that nvlink reads when another program device-links against the
	// file; the CUDA runtime never loads them, and cuobjdump lists them
	// only with --all-fatbin.
	SectionRelocatable = "__nv_relfatbin"
)

// sectionNames are the ELF sections read. Fat binaries elsewhere (such as
// the single-entry ones some libraries keep in .data, which cuobjdump does
// not list either) are not read.
var sectionNames = [...]string{SectionLoaded, SectionRelocatable}

// ErrNotELF is returned by ReadELF for a file that does not start as an
// ELF file does.
var ErrNotELF = errors.New("not an ELF file")

// IsELF reports whether the first bytes of a file are ELF's magic.
func IsELF(head []byte) bool {
	return len(head) >= 4 && string(head[:4]) == elf.ELFMAG
}

// ReadELF returns the entries of every fat binary in the ELF file r, of
// both sections (Split tells them apart): none for an ELF file without GPU
// code. A file that is not ELF returns
// ErrNotELF; a broken ELF file or fat binary a one-sentence error (a
// *FormatError for the fat binary).
func ReadELF(r io.ReaderAt, lim Limits) ([]Entry, error) {
	var head [4]byte
	if _, err := r.ReadAt(head[:], 0); err != nil || !IsELF(head[:]) {
		return nil, ErrNotELF
	}
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("it is not a valid ELF file (%w)", err)
	}
	var out []Entry
	for _, s := range f.Sections {
		if !isFatbinSection(s.Name) || s.Type == elf.SHT_NOBITS {
			continue
		}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			return nil, &FormatError{Section: s.Name, What: "the section is compressed as an ELF section, which nvcc never writes"}
		}
		if s.Size > 1<<62 {
			return nil, &FormatError{Section: s.Name, What: fmt.Sprintf("the section says it is %d bytes", s.Size)}
		}
		left := lim.maxEntries() - len(out)
		if left <= 0 {
			return nil, &FormatError{Section: s.Name, What: fmt.Sprintf("the file holds more than %d entries", lim.maxEntries())}
		}
		entries, err := Parse(s.ReaderAt, int64(s.Size), s.Name, Limits{MaxEntries: left})
		if err != nil {
			return nil, err
		}
		out = append(out, entries...)
	}
	return out, nil
}

func isFatbinSection(name string) bool {
	for _, n := range sectionNames {
		if n == name {
			return true
		}
	}
	return false
}

// Loaded reports whether the CUDA runtime loads the entry's fat binary: it
// is in SectionLoaded, not a relocatable copy.
func (e Entry) Loaded() bool { return e.Section == SectionLoaded }

// Split parts entries into those the runtime loads, which are what a GPU
// runs and what is judged, and the relocatable copies, which are reported
// apart; each keeps its order.
func Split(entries []Entry) (loaded, relocatable []Entry) {
	for _, e := range entries {
		if e.Loaded() {
			loaded = append(loaded, e)
		} else {
			relocatable = append(relocatable, e)
		}
	}
	return loaded, relocatable
}
