// Package fatbin reads the CUDA fat binaries that nvcc and clang put into
// ELF files (executables and shared libraries): which GPU code each holds,
// PTX or cubin, for which SM, compressed or not.
//
// The parser is written here because no library does it in Go: NVIDIA's
// own readers (cuobjdump, the driver) are closed tools that no image has,
// and the open readers are C, C++ and Rust (LLVM's CGCUDANV.cpp writes the
// format, ZLUDA's dark API, jiegec/fatbinary and
// n-eiling/cuda-fatbin-decompression read it). The ELF around the fat
// binaries is read with debug/elf. The SM of every entry is in its header,
// so nothing is decompressed; every size a file gives is checked against
// what the section holds before it is used, and a file that lies about a
// size gets a *FormatError, never a panic or a large allocation (see the
// fuzz target).
package fatbin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/jetbake/jetbake/computecap"
)

// The layout, little-endian (from the sources named in the package comment):
//
//	fat binary header, 16 bytes: u32 magic 0xBA55ED50, u16 version 1,
//	u16 header size 16, u64 size of the entries that follow;
//	entry header, 64 bytes or more: u16 kind (1 PTX, 2 cubin), u16 0x0101,
//	u32 header size, u64 payload size, u32 compressed size, u32 options
//	offset, u16 minor, u16 major, u32 arch (87 is sm_87), u32 identifier
//	offset, u32 identifier length, u64 flags, u64 zero, u64 decompressed
//	size. The next entry starts after header size + payload size bytes.
const (
	// Magic starts every fat binary.
	Magic = 0xBA55ED50
	// HeaderSize is the size of a fat binary's header.
	HeaderSize = 16
	// EntryHeaderSize is the size of the part of an entry's header that
	// is read; CUDA 12.8 and later write longer headers for new SMs.
	EntryHeaderSize = 64

	// maxEntryHeader bounds an entry's header (64, 80 and 112 are known).
	maxEntryHeader = 4096
	// maxPadding bounds the zero bytes allowed between fat binaries and
	// after the last one.
	maxPadding = 256

	// Flags of an entry.
	flagCompressedLZ4  = 0x2000
	flagCompressedZstd = 0x8000
)

// Entry kinds.
const (
	// KindPTX is PTX text, which the driver compiles for the GPU at load
	// time (JIT).
	KindPTX Kind = 1
	// KindCubin is an ELF cubin, machine code for one SM.
	KindCubin Kind = 2
)

// Kind is what an entry holds.
type Kind uint16

// String names the kind: "PTX", "cubin" or "kind 7".
func (k Kind) String() string {
	switch k {
	case KindPTX:
		return "PTX"
	case KindCubin:
		return "cubin"
	}
	return "kind " + strconv.Itoa(int(k))
}

// Entry is one piece of GPU code in a fat binary.
type Entry struct {
	// Kind is PTX or cubin; other kinds are kept, and judged as neither.
	Kind Kind
	// SM is the compute capability the code is for (the entry's arch
	// field: 87 is 8.7).
	SM computecap.Capability
	// Compressed says the payload is compressed (LZ4 or zstd).
	Compressed bool
	// Section is the ELF section that holds it: .nv_fatbin or __nv_relfatbin.
	Section string
	// Offset is where the entry's header starts in its section.
	Offset int64
	// Fatbin is where the fat binary that holds the entry starts in its
	// section: nvcc writes one per translation unit (a module the driver
	// loads as a whole), so entries with the same Section and Fatbin are
	// one module's code.
	Fatbin int64
	// Size is the size of the payload, as stored.
	Size int64
}

// String names the code as cuobjdump does: "sm_87 cubin", "compute_87 PTX".
func (e Entry) String() string {
	switch e.Kind {
	case KindPTX:
		return "compute_" + e.SM.Digits() + " PTX"
	case KindCubin:
		return e.SM.SM() + " cubin"
	}
	return e.SM.SM() + " " + e.Kind.String()
}

// FormatError says where and how a section breaks the fat binary layout,
// in one sentence.
type FormatError struct {
	// Section is the ELF section, such as .nv_fatbin.
	Section string
	// Offset is where in the section the fault is.
	Offset int64
	// What says what is wrong.
	What string
}

// Error writes the sentence.
func (e *FormatError) Error() string {
	return "its " + e.Section + " section is not a valid CUDA fat binary: at offset " +
		strconv.FormatInt(e.Offset, 10) + ", " + e.What
}

// Limits bounds what Parse reads from one section.
type Limits struct {
	// MaxEntries is the most entries read; 0 means 1<<20 (NVIDIA's largest
	// libraries hold a few thousand).
	MaxEntries int
}

func (l Limits) maxEntries() int {
	if l.MaxEntries <= 0 {
		return 1 << 20
	}
	return l.MaxEntries
}

// Parse reads the fat binaries of one section, back to back, from r,
// which holds size bytes. section names it in errors and entries.
func Parse(r io.ReaderAt, size int64, section string, lim Limits) ([]Entry, error) {
	p := parser{r: r, size: size, section: section, max: lim.maxEntries()}
	var out []Entry
	off := int64(0)
	for off < size {
		next, ok, err := p.skipPadding(off)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		off, out, err = p.fatbin(next, out)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

type parser struct {
	r       io.ReaderAt
	size    int64
	section string
	max     int
	buf     [EntryHeaderSize]byte
}

func (p *parser) fail(off int64, format string, args ...any) error {
	return &FormatError{Section: p.section, Offset: off, What: fmt.Sprintf(format, args...)}
}

// read fills p.buf[:n] from off, which the caller has checked lies inside
// the section.
func (p *parser) read(off int64, n int) ([]byte, error) {
	b := p.buf[:n]
	if _, err := p.r.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, p.fail(off, "the section ends before the %d bytes it should hold there", n)
		}
		return nil, fmt.Errorf("read the %s section: %w", p.section, err)
	}
	return b, nil
}

// skipPadding returns the offset of the next fat binary at or after off,
// past at most maxPadding zero bytes; ok is false when only zeros remain.
func (p *parser) skipPadding(off int64) (next int64, ok bool, err error) {
	for skipped := 0; ; skipped += 8 {
		if off >= p.size {
			return off, false, nil
		}
		n := int(min(8, p.size-off))
		b, err := p.read(off, n)
		if err != nil {
			return 0, false, err
		}
		if !allZero(b) {
			return off, true, nil
		}
		if skipped >= maxPadding {
			return 0, false, p.fail(off, "more than %d zero bytes stand where a fat binary should start", maxPadding)
		}
		off += int64(n)
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// fatbin reads the fat binary at off and appends its entries to out; it
// returns the offset just after it.
func (p *parser) fatbin(off int64, out []Entry) (int64, []Entry, error) {
	if p.size-off < HeaderSize {
		return 0, nil, p.fail(off, "%d bytes remain, too few for a fat binary's %d-byte header", p.size-off, HeaderSize)
	}
	h, err := p.read(off, HeaderSize)
	if err != nil {
		return 0, nil, err
	}
	le := binary.LittleEndian
	if m := le.Uint32(h); m != Magic {
		return 0, nil, p.fail(off, "the magic number is 0x%08x, not 0x%08x", m, uint32(Magic))
	}
	if v := le.Uint16(h[4:]); v != 1 {
		return 0, nil, p.fail(off, "the fat binary's version is %d, and only version 1 is known", v)
	}
	hs := int64(le.Uint16(h[6:]))
	body := le.Uint64(h[8:])
	if hs < HeaderSize {
		return 0, nil, p.fail(off, "the fat binary's header says it is %d bytes, less than %d", hs, HeaderSize)
	}
	left := p.size - off - hs
	if left < 0 || body > uint64(left) {
		return 0, nil, p.fail(off, "the fat binary says its entries take %d bytes, but the section has %d left", body, max(left, 0))
	}
	start, end := off+hs, off+hs+int64(body)
	for e := start; e < end; {
		if len(out) >= p.max {
			return 0, nil, p.fail(e, "the section holds more than %d entries", p.max)
		}
		entry, next, err := p.entry(e, end)
		if err != nil {
			return 0, nil, err
		}
		entry.Fatbin = off
		out = append(out, entry)
		e = next
	}
	return end, out, nil
}

// entry reads the entry whose header is at off, in a fat binary that ends
// at end, and returns the offset of the next one.
func (p *parser) entry(off, end int64) (Entry, int64, error) {
	if end-off < EntryHeaderSize {
		return Entry{}, 0, p.fail(off, "%d bytes remain in the fat binary, too few for an entry's %d-byte header", end-off, EntryHeaderSize)
	}
	h, err := p.read(off, EntryHeaderSize)
	if err != nil {
		return Entry{}, 0, err
	}
	le := binary.LittleEndian
	kind := Kind(le.Uint16(h))
	hs := int64(le.Uint32(h[4:]))
	payload := le.Uint64(h[8:])
	arch := le.Uint32(h[28:])
	flags := le.Uint64(h[40:])
	if hs < EntryHeaderSize || hs > maxEntryHeader {
		return Entry{}, 0, p.fail(off, "an entry's header says it is %d bytes, outside %d to %d", hs, EntryHeaderSize, maxEntryHeader)
	}
	left := end - off - hs
	if left < 0 || payload > uint64(left) {
		return Entry{}, 0, p.fail(off, "an entry says its code takes %d bytes, but the fat binary has %d left", payload, max(left, 0))
	}
	sm, err := computecap.Parse(strconv.FormatUint(uint64(arch), 10))
	if err != nil {
		return Entry{}, 0, p.fail(off, "an entry's arch field is %d, which names no SM", arch)
	}
	e := Entry{Kind: kind, SM: sm, Compressed: flags&(flagCompressedLZ4|flagCompressedZstd) != 0,
		Section: p.section, Offset: off, Size: int64(payload)}
	return e, off + hs + int64(payload), nil
}

// Code is the entry as computecap judges it; ok is false for a kind that
// is neither PTX nor cubin.
func (e Entry) Code() (computecap.Code, bool) {
	switch e.Kind {
	case KindPTX:
		return computecap.Code{Kind: computecap.PTX, Target: e.SM}, true
	case KindCubin:
		return computecap.Code{Kind: computecap.Cubin, Target: e.SM}, true
	}
	return computecap.Code{}, false
}

// Modules groups entries by the fat binary that holds them (Section and
// Fatbin), in the order they come: the driver loads each as a whole, so a
// GPU runs a file's code only when every module has code for it.
func Modules(entries []Entry) [][]Entry {
	var out [][]Entry
	for i, e := range entries {
		if i == 0 || e.Section != entries[i-1].Section || e.Fatbin != entries[i-1].Fatbin {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], e)
	}
	return out
}
