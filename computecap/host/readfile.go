package host

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// ReadRegular is the one reader of the files jetbake is handed (the CLI's
// matrix, lock, evidence and build metadata through builder/inputfile) and
// of the host files the entrypoint reads at start-up (image.json,
// nv_tegra_release, soc_id, the device tree). It lives here because this
// package is the one both may import: the entrypoint imports only the
// standard library, computecap and this package.
//
// A named pipe, a device or a socket put where a file is expected must
// not hang the program: open(2) blocks on a FIFO until a writer comes, in
// the kernel, where no signal handler of Go runs. O_NONBLOCK makes the open
// return at once (a FIFO opened for reading without a writer, fifo(7)), and
// the fstat after it refuses anything that is not a regular file before a
// byte is read. On a regular file O_NONBLOCK changes nothing (open(2)).

// ErrTooLarge is wrapped by ReadRegular's error for a file over its limit.
var ErrTooLarge = errors.New("over the size limit")

// NotRegularError is a path that is a folder, a named pipe, a device or a
// socket instead of a regular file.
type NotRegularError struct {
	// Path is the path as given.
	Path string
	// Kind is what it is, with an article: "a folder", "a named pipe (FIFO)".
	Kind string
}

// Error says what the path is: "/etc/nv_tegra_release is a named pipe
// (FIFO), not a regular file".
func (e *NotRegularError) Error() string { return e.Path + " is " + e.Kind + ", not a regular file" }

// kindOr returns the kind, or other for a nil error.
func (e *NotRegularError) kindOr(other string) string {
	if e == nil {
		return other
	}
	return e.Kind
}

// TooLargeError is a file over ReadRegular's limit.
type TooLargeError struct {
	// Path is the path as given.
	Path string
	// Limit is the limit in bytes.
	Limit int64
}

// Error names the file and the limit.
func (e *TooLargeError) Error() string {
	return e.Path + " is over the limit of " + strconv.FormatInt(e.Limit, 10) + " bytes"
}

// Unwrap returns ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// ReadRegular reads the regular file at path, at most limit bytes. It
// opens without blocking and refuses, with a *NotRegularError, anything
// but a regular file; a file over limit is a *TooLargeError. Other errors
// are the *fs.PathError of the open or the read.
func ReadRegular(path string, limit int64) ([]byte, error) {
	return readRegular(path, limit)
}

// ReadRegularIn is ReadRegular for name inside root, which no link may
// leave (os.Root).
func ReadRegularIn(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	return readOpened(f, err, name, limit)
}

// readOpened is the rest of ReadRegular once the open returned f and err.
func readOpened(f *os.File, err error, path string, limit int64) ([]byte, error) {
	if errors.Is(err, syscall.ENXIO) {
		// open(2) gives ENXIO for a UNIX domain socket.
		return nil, &NotRegularError{Path: path, Kind: "a socket"}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Kind: kindOf(fi.Mode())}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

// kindOf names the type of a file that is not regular.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "an irregular file"
}
