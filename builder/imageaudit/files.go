package imageaudit

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// Source is what an Opened holds: an image, or files that are not one.
type Source int

const (
	// SourceImage is an image: a reference, an OCI layout or a Docker tarball.
	SourceImage Source = iota
	// SourceELF is one ELF file (an executable or a shared library).
	SourceELF
	// SourceFolder is a folder that is not an OCI layout: every ELF file
	// under it is audited, by its path relative to the folder.
	SourceFolder
)

// String names the source as sentences do: "an image", "an ELF file", "a folder".
func (s Source) String() string {
	switch s {
	case SourceELF:
		return "an ELF file"
	case SourceFolder:
		return "a folder"
	}
	return "an image"
}

// scanLocal reads the fat binaries of one ELF file, or of every ELF file
// under a folder, as ScanImage reads an image's: the same size limit, the
// same reader (package fatbin), the same Scan. A folder's walk does not
// follow symbolic links, reads regular files only (never a named pipe, a
// device or a socket), cannot leave the folder (os.Root), and ends when ctx
// does; a file or folder it cannot read is listed in Skipped.
func scanLocal(ctx context.Context, im *Opened, o options) (*Scan, error) {
	s := &Scan{}
	if im.Source == SourceELF {
		f, err := openRegular(os.OpenFile(im.path, os.O_RDONLY|syscall.O_NONBLOCK, 0))
		if err != nil {
			return nil, &InputError{Image: im.Name, Path: true, Problem: "cannot be read (" + reason(err) + "): check that it exists and that you may read it"}
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, &InputError{Image: im.Name, Path: true, Problem: "cannot be read (" + reason(err) + "): check that it exists and that you may read it"}
		}
		s.Bytes = fi.Size()
		s.localFile(f, escape(im.Name), fi.Size(), o)
		return s, nil
	}
	root, err := os.OpenRoot(im.path)
	if err != nil {
		return nil, &InputError{Image: im.Name, Path: true, Problem: "cannot be read (" + reason(err) + "): check that you may read the folder"}
	}
	defer root.Close()
	sc := &Scanner{o: o, s: s, next: 256 << 20}
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		shown := escape(name)
		if err != nil {
			if d == nil || d.IsDir() {
				s.Skipped = append(s.Skipped, shown+": the folder cannot be read ("+reason(err)+")")
				return fs.SkipDir
			}
			s.Skipped = append(s.Skipped, shown+": cannot be read ("+reason(err)+")")
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // folders are walked; links, pipes, devices and sockets are not files to read
		}
		fi, err := d.Info()
		if err != nil || fi.Size() < 64 {
			return nil
		}
		if name == strings.TrimPrefix(imagespec.Path, "/") && fi.Size() <= maxImageJSON {
			// An image's file system unpacked into the folder: its
			// router binaries are judged as the image audit judges them.
			if data, err := root.ReadFile(name); err == nil {
				s.Routers = relative(readRouters(bytes.NewReader(data)))
			}
			return nil
		}
		f, err := openRegular(root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0))
		if err != nil {
			s.Skipped = append(s.Skipped, shown+": cannot be read ("+reason(err)+")")
			return nil
		}
		defer f.Close()
		s.Bytes += fi.Size()
		s.localFile(f, shown, fi.Size(), o)
		sc.progress()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sc.Done(), nil
}

// localFile reads the file f, shown as path, if it is ELF: in place, as
// the ReaderAt it is, with no copy.
func (s *Scan) localFile(f *os.File, path string, size int64, o options) {
	var head [4]byte
	if _, err := f.ReadAt(head[:], 0); err != nil || !fatbin.IsELF(head[:]) {
		return
	}
	if size > o.maxFile {
		s.Skipped = append(s.Skipped, path+" is "+strconv.FormatInt(size>>20, 10)+" MiB, more than the limit")
		return
	}
	s.ELFs++
	s.readELF(path, io.NewSectionReader(f, 0, size), o)
}

// openRegular is the file an open returned, if it is a regular file: a
// path swapped for a named pipe or a device after the walk saw it is not
// read (the open itself does not block: O_NONBLOCK).
func openRegular(f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, errors.New(kindOf(fi.Mode()) + ", not a regular file")
	}
	return f, nil
}

// relative is routers with its paths relative to a folder, as a folder's
// files are shown.
func relative(routers map[string]computecap.Capability) map[string]computecap.Capability {
	if routers == nil {
		return nil
	}
	out := make(map[string]computecap.Capability, len(routers))
	for p, c := range routers {
		out[strings.TrimPrefix(path.Clean(p), "/")] = c
	}
	return out
}

// reason is the operating system's reason of a file error ("permission
// denied"), without the operation and path Go's error adds.
func reason(err error) string {
	var perr *fs.PathError
	if errors.As(err, &perr) {
		err = perr.Err
	}
	var lerr *os.LinkError
	if errors.As(err, &lerr) {
		err = lerr.Err
	}
	return fmt.Sprint(err)
}

// kindOf names a file mode that is not a regular file's, with an article.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// openFile opens the regular file path: an ELF file, or a Docker tarball;
// anything else is an *InputError that says what the file is and what
// jetbake audit takes.
func openFile(path string) (*Opened, error) {
	f, err := openRegular(os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0))
	if err != nil {
		return nil, &InputError{Image: path, Path: true, Problem: "cannot be read (" + reason(err) + "): check that you may read it"}
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, &InputError{Image: path, Path: true, Problem: "cannot be read (" + reason(err) + "): check that you may read it"}
	}
	head = head[:n]
	what := ""
	switch {
	case fatbin.IsELF(head):
		return &Opened{Name: path, Source: SourceELF, path: path}, nil
	case isTar(head):
		return openTarball(path, f)
	case n == 0:
		what = "is an empty file"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		what = "is gzip-compressed: decompress it first (gunzip -k " + escape(path) + ") and audit what it holds; "
		return nil, &InputError{Image: path, Path: true, Problem: what + accepted}
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		what = "is a zip archive (a Python wheel is one): extract it into a folder (unzip " + escape(path) + " -d files) and audit the folder; "
		return nil, &InputError{Image: path, Path: true, Problem: what + accepted}
	case isText(head):
		what = "is a text file"
	default:
		what = "is neither an ELF file nor a tar archive"
	}
	return nil, &InputError{Image: path, Path: true, Problem: what + ", not something jetbake audit reads: " + accepted}
}

// isTar reports whether head starts a tar archive: the ustar magic of
// POSIX, PAX and GNU headers, which docker save and every tar since 1988 write.
func isTar(head []byte) bool {
	return len(head) >= 263 && bytes.Equal(head[257:262], []byte("ustar"))
}

// isText reports whether head reads as text: UTF-8 without NUL or other
// control characters than white space.
func isText(head []byte) bool {
	// The head may end inside a character.
	for i := len(head) - 1; i >= 0 && i >= len(head)-3; i-- {
		if utf8.RuneStart(head[i]) {
			if !utf8.FullRune(head[i:]) {
				head = head[:i]
			}
			break
		}
	}
	if !utf8.Valid(head) {
		return false
	}
	for _, c := range head {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' {
			return false
		}
	}
	return true
}

// openTarball opens the tar archive f at path as a Docker tarball; a tar
// archive that is not one is an *InputError that says what it holds.
func openTarball(path string, f *os.File) (*Opened, error) {
	img, err := tarball.ImageFromPath(path, nil)
	if err == nil {
		return (&Opened{Name: path, Image: img}).withManifest(fileError, "read "+path)
	}
	names := tarNames(f)
	var problem string
	switch {
	case names["manifest.json"] && dockerImages(path) > 1:
		problem = "is a Docker tarball of " + strconv.Itoa(dockerImages(path)) + " images: save the one to audit alone (docker save IMAGE -o image.tar)"
	case names["manifest.json"]:
		problem = "is a Docker tarball whose manifest.json does not lead to a readable image (its config or a layer is missing or damaged): " +
			"save the image again (docker save IMAGE -o image.tar)"
	case names["oci-layout"] || names["index.json"]:
		problem = "is a tar archive of an OCI layout, not a Docker tarball: extract it into a folder " +
			"(mkdir oci && tar -xf " + escape(path) + " -C oci) and audit the folder"
	default:
		problem = "is a tar archive but not a Docker tarball (it has no manifest.json): to audit the files in it, extract it into a folder " +
			"(mkdir files && tar -xf " + escape(path) + " -C files) and audit the folder; " + accepted
	}
	return nil, &InputError{Image: path, Path: true, Problem: problem}
}

// tarNames are the top-level names of the tar archive f (up to 10,000
// entries): enough to tell a Docker tarball from an OCI layout's.
func tarNames(f *os.File) map[string]bool {
	names := map[string]bool{}
	tr := tar.NewReader(io.NewSectionReader(f, 0, 1<<62))
	for range 10000 {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names[path.Clean(strings.TrimPrefix(hdr.Name, "./"))] = true
	}
	return names
}

// dockerImages is how many images the manifest.json of the Docker tarball
// at path lists; 0 when it does not read.
func dockerImages(p string) int {
	f, err := os.Open(p)
	if err != nil {
		return 0
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return 0
		}
		if path.Clean(strings.TrimPrefix(hdr.Name, "./")) != "manifest.json" {
			continue
		}
		var m []json.RawMessage
		if json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&m) != nil {
			return 0
		}
		return len(m)
	}
}
