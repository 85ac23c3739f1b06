package imageaudit

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/layerwalk"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// CUDAFile is an ELF file of the image that holds GPU code, or whose fat
// binaries cannot be read.
type CUDAFile struct {
	// Path is the file's absolute path in the image.
	Path string
	// Code is what it holds, each kind and SM once, sorted.
	Code []computecap.Code
	// Modules are its fat binaries (modules: the driver loads each as a
	// whole), each with what it holds, in the order of the file.
	Modules [][]computecap.Code
	// Err says why its fat binaries cannot be read; Code is then empty.
	Err error
	// Relocatable are the fat binaries of its __nv_relfatbin section,
	// each with what it holds: copies of relocatable device code for
	// nvlink, which the CUDA runtime never loads, so they are reported
	// apart and never judged.
	Relocatable [][]computecap.Code
}

// Scan is what a pass over an image's layers found.
type Scan struct {
	// Files are the ELF files that hold GPU code the runtime loads (or
	// whose fat binaries cannot be read), by path.
	Files []CUDAFile
	// RelocatableOnly are the ELF files whose only fat binaries are
	// relocatable copies (__nv_relfatbin), by path: nothing there is loaded.
	RelocatableOnly []CUDAFile
	// ELFs is how many ELF files were read; Bytes how many bytes of file
	// content the image's file system holds.
	ELFs  int
	Bytes int64
	// Skipped are ELF files not read, with why (larger than the limit,
	// not valid ELF).
	Skipped []string
	// Routers are the router binaries of a jetbake image, by path, with
	// the SM each is built for, from its /etc/jetbake/image.json.
	Routers map[string]computecap.Capability
	// Needed are the DT_NEEDED entries of the ELF files in a Python
	// site-packages or dist-packages folder (extension modules and the
	// libraries wheels carry), by path: which of them link torch's
	// libraries (package pydist judges it).
	Needed map[string][]string
}

// ScanImage reads img's layers once, from the top, through layerwalk
// (go-containerregistry's mutate.Extract, which applies whiteouts, opaque
// folders and later layers), and reads the fat binaries of every ELF file.
func ScanImage(ctx context.Context, img v1.Image, opts ...Option) (*Scan, error) {
	sc := NewScanner(opts...)
	defer sc.Close()
	if err := layerwalk.Walk(ctx, img, sc.File); err != nil {
		return nil, err
	}
	return sc.Done(), nil
}

// Scanner is ScanImage one file at a time, for a walk over an image's
// layers that feeds other readers too: File takes each file as layerwalk
// gives it, Done returns the scan; Close frees its spool.
type Scanner struct {
	o    options
	sp   *spool
	s    *Scan
	next int64
}

// NewScanner returns a Scanner with opts.
func NewScanner(opts ...Option) *Scanner {
	o := newOptions(opts)
	return &Scanner{o: o, sp: &spool{dir: o.tempDir, memLimit: o.memLimit}, s: &Scan{}, next: 256 << 20}
}

// File reads one file of the walk.
func (sc *Scanner) File(hdr *tar.Header, r io.Reader) error {
	s, o := sc.s, sc.o
	if hdr.Typeflag == tar.TypeReg && "/"+hdr.Name == imagespec.Path && hdr.Size <= maxImageJSON {
		s.Routers = readRouters(r)
		return nil
	}
	if hdr.Typeflag != tar.TypeReg || hdr.Size < 64 {
		return nil
	}
	s.Bytes += hdr.Size
	if err := s.file(r, hdr, sc.sp, o); err != nil {
		return err
	}
	sc.progress()
	return nil
}

// progress writes a progress line every 256 MiB of files read.
func (sc *Scanner) progress() {
	if s := sc.s; s.Bytes >= sc.next {
		sc.o.progress(fmt.Sprintf("read %d MiB of files, %d ELF files, %d with GPU code", s.Bytes>>20, s.ELFs, len(s.Files)))
		sc.next += 256 << 20
	}
}

// Done returns the scan, its files sorted by path.
func (sc *Scanner) Done() *Scan {
	slices.SortFunc(sc.s.Files, func(a, b CUDAFile) int { return cmpString(a.Path, b.Path) })
	slices.SortFunc(sc.s.RelocatableOnly, func(a, b CUDAFile) int { return cmpString(a.Path, b.Path) })
	return sc.s
}

// Close removes the spool's temporary file.
func (sc *Scanner) Close() { sc.sp.close() }

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// maxImageJSON bounds the /etc/jetbake/image.json read.
const maxImageJSON = 1 << 20

// readRouters reads the router binaries of a jetbake image's
// /etc/jetbake/image.json; nil when it does not read.
func readRouters(r io.Reader) map[string]computecap.Capability {
	var spec imagespec.Description
	if err := json.NewDecoder(io.LimitReader(r, maxImageJSON)).Decode(&spec); err != nil {
		return nil
	}
	out := map[string]computecap.Capability{}
	for _, t := range spec.Targets {
		if c, err := computecap.Parse(t.SM); err == nil {
			out[escape(path.Clean(t.Path))] = c
		}
	}
	return out
}

// file reads one regular file: nothing unless it is ELF.
func (s *Scan) file(r io.Reader, hdr *tar.Header, sp *spool, o options) error {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return fmt.Errorf("read the layers: %s: %w", hdr.Name, err)
	}
	if !fatbin.IsELF(head[:]) {
		return nil
	}
	// The path is shown in tables and sentences: escape what a terminal
	// would act on.
	path := escape("/" + hdr.Name)
	if hdr.Size > o.maxFile {
		s.Skipped = append(s.Skipped, path+" is "+strconv.FormatInt(hdr.Size>>20, 10)+" MiB, more than the limit")
		return nil
	}
	s.ELFs++
	ra, err := sp.load(head[:], r, hdr.Size)
	if err != nil {
		return err
	}
	s.readELF(path, ra, o)
	return nil
}

// readELF reads the fat binaries of the ELF file at path (as reports show
// it), and its DT_NEEDED entries in a Python package folder.
func (s *Scan) readELF(path string, ra io.ReaderAt, o options) {
	if strings.Contains(path, "/site-packages/") || strings.Contains(path, "/dist-packages/") {
		s.readNeeded(path, ra)
	}
	entries, err := fatbin.ReadELF(ra, o.limits)
	var ferr *fatbin.FormatError
	switch {
	case errors.As(err, &ferr):
		s.Files = append(s.Files, CUDAFile{Path: path, Err: err})
	case err != nil:
		s.Skipped = append(s.Skipped, path+": "+err.Error())
	case len(entries) > 0:
		loaded, relocatable := fatbin.Split(entries)
		f := CUDAFile{Path: path, Code: codeOf(loaded), Modules: modulesOf(loaded), Relocatable: modulesOf(relocatable)}
		if len(loaded) == 0 {
			s.RelocatableOnly = append(s.RelocatableOnly, f)
			return
		}
		s.Files = append(s.Files, f)
	}
}

// modulesOf is what each fat binary of entries holds, in order.
func modulesOf(entries []fatbin.Entry) [][]computecap.Code {
	var out [][]computecap.Code
	for _, m := range fatbin.Modules(entries) {
		out = append(out, codeOf(m))
	}
	return out
}

// readNeeded records the DT_NEEDED entries of the ELF file at path, if
// it has any and reads as ELF (debug/elf; fatbin.ReadELF reports the file
// that does not).
func (s *Scan) readNeeded(path string, ra io.ReaderAt) {
	f, err := elf.NewFile(ra)
	if err != nil {
		return
	}
	defer f.Close()
	needed, err := f.ImportedLibraries()
	if err != nil || len(needed) == 0 {
		return
	}
	if s.Needed == nil {
		s.Needed = map[string][]string{}
	}
	s.Needed[path] = needed
}

// codeOf is each kind and SM of entries once, cubins first, by SM.
func codeOf(entries []fatbin.Entry) []computecap.Code {
	var out []computecap.Code
	for _, e := range entries {
		if c, ok := e.Code(); ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return sortedCode(out)
}

// spool holds the ELF file being read: in memory up to memLimit bytes,
// else in one temporary file, reused, so that memory stays bounded.
type spool struct {
	dir      string
	memLimit int64
	buf      []byte
	f        *os.File
	copyBuf  []byte
}

func (sp *spool) load(head []byte, r io.Reader, size int64) (io.ReaderAt, error) {
	if size <= sp.memLimit {
		if int64(cap(sp.buf)) < size {
			sp.buf = make([]byte, size, max(size, min(2*int64(cap(sp.buf)), sp.memLimit)))
		}
		b := sp.buf[:size]
		copy(b, head)
		if _, err := io.ReadFull(r, b[len(head):]); err != nil {
			return nil, fmt.Errorf("read the layers: %w", err)
		}
		return bytes.NewReader(b), nil
	}
	if sp.f == nil {
		f, err := os.CreateTemp(sp.dir, "jetbake-audit-*")
		if err != nil {
			return nil, fmt.Errorf("spool a large ELF file: %w", err)
		}
		sp.f, sp.copyBuf = f, make([]byte, 1<<20)
	}
	if err := sp.f.Truncate(0); err != nil {
		return nil, fmt.Errorf("spool a large ELF file: %w", err)
	}
	if _, err := sp.f.WriteAt(head, 0); err != nil {
		return nil, fmt.Errorf("spool a large ELF file: %w", err)
	}
	w := io.NewOffsetWriter(sp.f, int64(len(head)))
	if _, err := io.CopyBuffer(w, io.LimitReader(r, size-int64(len(head))), sp.copyBuf); err != nil {
		return nil, fmt.Errorf("spool a large ELF file: %w", err)
	}
	return io.NewSectionReader(sp.f, 0, size), nil
}

func (sp *spool) close() {
	if sp.f != nil {
		name := sp.f.Name()
		_ = sp.f.Close()
		_ = os.Remove(name)
	}
}

// escape writes the characters of s that are not graphic as Go escapes
// them ("\x1b"); unlike refs.Printable it does not cut s.
func escape(s string) string {
	if !strings.ContainsFunc(s, notGraphic) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if notGraphic(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func notGraphic(r rune) bool { return !unicode.IsGraphic(r) || r == utf8.RuneError }
