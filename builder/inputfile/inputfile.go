// Package inputfile reads the files people hand to jetbake (the matrix, lock
// files, evidence) with the same limits for all: a regular file opened
// without blocking (computecap/host's ReadRegular, which the entrypoint
// uses too), a size limit, no byte order mark, valid UTF-8. Each problem is one sentence naming the file, the cause
// and the fix.
package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/jetbake/jetbake/computecap/host"
)

// DefaultLimit is the largest input file read: 1 MiB, far above any matrix,
// lock or evidence file a person writes, far below one that would make
// `plan` write hundreds of megabytes.
const DefaultLimit = 1 << 20

// bom is the UTF-8 byte order mark.
var bom = []byte{0xEF, 0xBB, 0xBF}

// Error is an input file jetbake cannot take. It is bad input: the CLI
// exits with status 2.
type Error struct {
	// What names the kind of file: "matrix file", "lock file", ...
	What string
	// Path is the file.
	Path string
	// Problem is the cause and the fix.
	Problem string
	// Err is the underlying error, if any.
	Err error
}

// Error is one sentence: the file, the cause and the fix.
func (e *Error) Error() string { return fmt.Sprintf("%s %s %s", e.What, e.Path, e.Problem) }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Option configures Read.
type Option func(*options)

type options struct {
	limit   int64
	missing string
}

// WithLimit refuses files over n bytes (default DefaultLimit).
func WithLimit(n int64) Option { return func(o *options) { o.limit = n } }

// WithMissingHint is the fix offered when the file does not exist
// (default: "check the path").
func WithMissingHint(hint string) Option { return func(o *options) { o.missing = hint } }

// Read reads the file at path, what naming its kind in errors ("matrix
// file"), and checks it with Check.
func Read(path, what string, opts ...Option) ([]byte, error) {
	return read(path, what, opts, func(limit int64) ([]byte, error) { return host.ReadRegular(path, limit) })
}

// ReadIn is Read for the file name inside root, which no link may leave
// (os.Root); path is how messages name the file.
func ReadIn(root *os.Root, name, path, what string, opts ...Option) ([]byte, error) {
	return read(path, what, opts, func(limit int64) ([]byte, error) { return host.ReadRegularIn(root, name, limit) })
}

// read reads a file with readFile and turns its errors into *Error.
func read(path, what string, opts []Option, readFile func(limit int64) ([]byte, error)) ([]byte, error) {
	o := options{limit: DefaultLimit, missing: "check the path"}
	for _, opt := range opts {
		opt(&o)
	}
	fail := func(err error, format string, args ...any) error {
		return &Error{What: what, Path: path, Problem: fmt.Sprintf(format, args...), Err: err}
	}
	data, err := readFile(o.limit)
	var odd *host.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail(err, "does not exist: %s", o.missing)
	case errors.Is(err, fs.ErrPermission):
		return nil, fail(err, "cannot be read (permission denied): give the user running jetbake read access to it")
	case errors.As(err, &odd) && odd.Kind == "a folder":
		return nil, fail(err, "is a folder: name the file itself")
	case errors.As(err, &odd):
		return nil, fail(err, "is %s, not a regular file: name a file; jetbake reads no pipe, device or socket", odd.Kind)
	case errors.Is(err, host.ErrTooLarge):
		return nil, fail(nil, "is over the limit of %s (%d bytes): check that it is the right file; no %s is that large", sizeName(o.limit), o.limit, what)
	case isEscape(err):
		return nil, fail(err, "is behind a link that leads out of its folder: jetbake follows no such link; replace the link with the file")
	case err != nil:
		return nil, fail(err, "cannot be read (%v): check the path", errors.Unwrap(err))
	}
	if problem := Check(data); problem != "" {
		return nil, fail(nil, "%s", problem)
	}
	return data, nil
}

// isEscape reports whether err is os.Root's refusal of a path that leads
// out of the root ("path escapes from parent").
func isEscape(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes from parent")
}

// Check returns what is wrong with data as text jetbake reads (a byte
// order mark, invalid UTF-8, with the byte offset and the fix), or "".
func Check(data []byte) string {
	if bytes.HasPrefix(data, bom) {
		return "starts with a UTF-8 byte order mark (bytes EF BB BF): save it as UTF-8 without a BOM"
	}
	if utf8.Valid(data) {
		return ""
	}
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			return fmt.Sprintf("is not valid UTF-8 at byte offset %d (byte 0x%02X): save it as UTF-8", off, data[off])
		}
		off += size
	}
	return ""
}

// sizeName writes n bytes as MiB or KiB when it is a whole number of them.
func sizeName(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
