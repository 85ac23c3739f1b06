package fatbin

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
)

// sectionNames are the ELF sections that hold fat binaries: nvcc's, and the
// one of relocatable device code (-rdc).
var sectionNames = [...]string{".nv_fatbin", "__nv_relfatbin"}

// ErrNotELF is returned by ReadELF for a file that does not start as an
// ELF file does.
var ErrNotELF = errors.New("not an ELF file")

// IsELF reports whether the first bytes of a file are ELF's magic.
func IsELF(head []byte) bool {
	return len(head) >= 4 && string(head[:4]) == elf.ELFMAG
}

// ReadELF returns the entries of every fat binary in the ELF file r: none
// for an ELF file without GPU code. A file that is not ELF returns
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
