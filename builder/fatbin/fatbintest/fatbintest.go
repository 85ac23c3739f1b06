// Package fatbintest writes CUDA fat binaries and the ELF files that hold
// them, laid out as nvcc writes them, for the tests, the stand-ins and the
// benchmark: the fat binary reader is tested against these, and they are
// checked against the layout documented in package fatbin.
package fatbintest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/computecap"
)

// Code is one entry to write.
type Code struct {
	// Kind is fatbin.KindPTX or fatbin.KindCubin.
	Kind fatbin.Kind
	// SM is the entry's arch.
	SM computecap.Capability
	// Size is the payload's size; its bytes are a pattern that compresses
	// about as well as machine code.
	Size int64
	// Compressed sets the entry's compressed flag (zstd, as CUDA 12.8+).
	Compressed bool
	// HeaderSize is the entry header's size: 0 means 64 (CUDA 12.8 and
	// later write 80 or 112 for new SMs).
	HeaderSize int
}

// Cubin and PTX are Codes of a small payload for sm.
func Cubin(sm string) Code {
	return Code{Kind: fatbin.KindCubin, SM: computecap.MustParse(sm), Size: 1000}
}

// PTX is a PTX Code of a small payload for sm.
func PTX(sm string) Code { return Code{Kind: fatbin.KindPTX, SM: computecap.MustParse(sm), Size: 1500} }

func (c Code) headerSize() int64 {
	if c.HeaderSize == 0 {
		return fatbin.EntryHeaderSize
	}
	return int64(c.HeaderSize)
}

// padded is the payload's size rounded up to 8 bytes, as nvcc stores it.
func (c Code) padded() int64 { return (c.Size + 7) &^ 7 }

// FatbinSize is the size WriteFatbin writes for codes.
func FatbinSize(codes ...Code) int64 {
	n := int64(fatbin.HeaderSize)
	for _, c := range codes {
		n += c.headerSize() + c.padded()
	}
	return n
}

// WriteFatbin writes one fat binary that holds codes.
func WriteFatbin(w io.Writer, codes ...Code) error {
	le := binary.LittleEndian
	h := make([]byte, fatbin.HeaderSize)
	le.PutUint32(h, fatbin.Magic)
	le.PutUint16(h[4:], 1)
	le.PutUint16(h[6:], fatbin.HeaderSize)
	le.PutUint64(h[8:], uint64(FatbinSize(codes...)-fatbin.HeaderSize))
	if _, err := w.Write(h); err != nil {
		return err
	}
	for _, c := range codes {
		e := make([]byte, c.headerSize())
		le.PutUint16(e, uint16(c.Kind))
		le.PutUint16(e[2:], 0x0101)
		le.PutUint32(e[4:], uint32(c.headerSize()))
		le.PutUint64(e[8:], uint64(c.padded()))
		le.PutUint32(e[16:], uint32(c.Size))
		le.PutUint16(e[24:], 7)
		le.PutUint16(e[26:], 1)
		le.PutUint32(e[28:], uint32(c.SM.Major*10+c.SM.Minor))
		flags := uint64(0x1 | 0x10)
		if c.Compressed {
			flags |= 0x8000
		}
		le.PutUint64(e[40:], flags)
		le.PutUint64(e[56:], uint64(c.Size))
		if _, err := w.Write(e); err != nil {
			return err
		}
		if err := c.writePayload(w); err != nil {
			return err
		}
	}
	return nil
}

// cubinHeaderSize is the size of a cubin's ELF header.
const cubinHeaderSize = 64

// writePayload writes the entry's payload: a cubin starts with the ELF
// header ptxas writes (ELF64, OS ABI 0x33 and ABI version 7 of CUDA 11 and
// 12, EM_CUDA, e_flags of the SM: the SM in the low byte and the virtual
// SM in the third, with 64-bit addressing), from which cuobjdump reads its
// SM; the rest, and a PTX's payload, is the pattern.
func (c Code) writePayload(w io.Writer) error {
	sm := int64(c.SM.Major*10 + c.SM.Minor)
	n := c.padded()
	if c.Kind == fatbin.KindCubin && !c.Compressed && n >= cubinHeaderSize {
		le := binary.LittleEndian
		h := make([]byte, cubinHeaderSize)
		copy(h, elf.ELFMAG)
		h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
		h[elf.EI_OSABI], h[elf.EI_ABIVERSION] = 0x33, 7
		le.PutUint16(h[16:], uint16(elf.ET_EXEC))
		le.PutUint16(h[18:], uint16(elf.EM_CUDA))
		le.PutUint32(h[20:], 0x76) // the toolkit that wrote it, 11.8 (118)
		le.PutUint32(h[48:], uint32(sm&0xff|0x500|(sm&0xff)<<16))
		le.PutUint16(h[52:], cubinHeaderSize)
		if _, err := w.Write(h); err != nil {
			return err
		}
		n -= cubinHeaderSize
	}
	return writePattern(w, n, sm)
}

// Fatbin returns one fat binary that holds codes.
func Fatbin(codes ...Code) []byte {
	var b bytes.Buffer
	_ = WriteFatbin(&b, codes...)
	return b.Bytes()
}

// block is the pattern payloads and filler repeat: bytes of four bits
// from a small generator, which gzip shrinks to about half, as it does
// machine code.
func block(seed, n int64) []byte {
	b := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x & 0x0f)
	}
	return b
}

func writePattern(w io.Writer, n, seed int64) error {
	b := block(seed, min(n, 1<<20))
	for n > 0 {
		k := min(n, int64(len(b)))
		if _, err := w.Write(b[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// Section is one section of an ELF file to write.
type Section struct {
	// Name is the section's name, such as .nv_fatbin or .text.
	Name string
	// Size is how many bytes Write writes.
	Size int64
	// Write writes the section's content.
	Write func(io.Writer) error
}

// Bytes is a section that holds b.
func Bytes(name string, b []byte) Section {
	return Section{Name: name, Size: int64(len(b)), Write: func(w io.Writer) error { _, err := w.Write(b); return err }}
}

// Fatbins is a section (.nv_fatbin or __nv_relfatbin) that holds one fat
// binary for each list of codes, back to back.
func Fatbins(name string, fatbins ...[]Code) Section {
	var size int64
	for _, codes := range fatbins {
		size += FatbinSize(codes...)
	}
	return Section{Name: name, Size: size, Write: func(w io.Writer) error {
		for _, codes := range fatbins {
			if err := WriteFatbin(w, codes...); err != nil {
				return err
			}
		}
		return nil
	}}
}

// Filler is a .text section of size pattern bytes.
func Filler(size int64) Section {
	return Section{Name: ".text", Size: size, Write: func(w io.Writer) error { return writePattern(w, size, 1) }}
}

// NVCC is the section list nvcc's output has for codes: .text, one
// fat binary in .nv_fatbin, and its wrapper in .nvFatBinSegment.
func NVCC(codes ...Code) []Section {
	wrapper := make([]byte, 24)
	binary.LittleEndian.PutUint32(wrapper, 0x466243B1)
	binary.LittleEndian.PutUint32(wrapper[4:], 1)
	return []Section{Bytes(".text", []byte{0xd6, 0x5f, 0x03, 0xc0}), Bytes(".nvFatBinSegment", wrapper),
		Fatbins(".nv_fatbin", codes)}
}

// ELFSize is the size WriteELF writes for sections.
func ELFSize(sections ...Section) int64 {
	off, shstrtab := layout(sections)
	return align8(off+int64(len(shstrtab))) + int64(len(sections)+2)*64
}

func align8(n int64) int64 { return (n + 7) &^ 7 }

// layout returns where the section name table goes, and the table.
func layout(sections []Section) (int64, []byte) {
	off := int64(64)
	names := []byte{0}
	for _, s := range sections {
		off = align8(off) + s.Size
		names = append(append(names, s.Name...), 0)
	}
	names = append(names, ".shstrtab\x00"...)
	return off, names
}

// WriteELF writes a 64-bit little-endian aarch64 shared object that holds
// sections, each 8-aligned, then the section names and the section headers.
func WriteELF(w io.Writer, sections ...Section) error {
	le := binary.LittleEndian
	strOff, names := layout(sections)
	shoff := align8(strOff + int64(len(names)))
	h := make([]byte, 64)
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS], h[elf.EI_DATA], h[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(h[16:], uint16(elf.ET_DYN))
	le.PutUint16(h[18:], uint16(elf.EM_AARCH64))
	le.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(h[40:], uint64(shoff))
	le.PutUint16(h[52:], 64)
	le.PutUint16(h[58:], 64)
	le.PutUint16(h[60:], uint16(len(sections)+2))
	le.PutUint16(h[62:], uint16(len(sections)+1))
	if _, err := w.Write(h); err != nil {
		return err
	}
	headers := make([]byte, 64, 64*(len(sections)+2))
	off, nameOff := int64(64), uint32(1)
	for _, s := range sections {
		if err := zeros(w, align8(off)-off); err != nil {
			return err
		}
		off = align8(off)
		if err := s.Write(w); err != nil {
			return err
		}
		headers = append(headers, sectionHeader(nameOff, elf.SHT_PROGBITS, uint64(elf.SHF_ALLOC), off, s.Size)...)
		off += s.Size
		nameOff += uint32(len(s.Name) + 1)
	}
	headers = append(headers, sectionHeader(nameOff, elf.SHT_STRTAB, 0, off, int64(len(names)))...)
	if _, err := w.Write(names); err != nil {
		return err
	}
	if err := zeros(w, shoff-off-int64(len(names))); err != nil {
		return err
	}
	_, err := w.Write(headers)
	return err
}

func sectionHeader(name uint32, typ elf.SectionType, flags uint64, off, size int64) []byte {
	le := binary.LittleEndian
	b := make([]byte, 64)
	le.PutUint32(b, name)
	le.PutUint32(b[4:], uint32(typ))
	le.PutUint64(b[8:], flags)
	le.PutUint64(b[24:], uint64(off))
	le.PutUint64(b[32:], uint64(size))
	le.PutUint64(b[48:], 8)
	return b
}

func zeros(w io.Writer, n int64) error {
	_, err := w.Write(make([]byte, n))
	return err
}

// ELF returns the ELF file WriteELF writes for sections.
func ELF(sections ...Section) []byte {
	var b bytes.Buffer
	_ = WriteELF(&b, sections...)
	return b.Bytes()
}
