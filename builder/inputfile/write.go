package inputfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/renameio/v2"
)

// FolderError is a file to write whose folder does not exist: input the
// command cannot use (the CLI exits 2).
type FolderError struct {
	// Path is the file, Dir its folder.
	Path, Dir string
}

// Error names the file and its folder.
func (e *FolderError) Error() string {
	return "cannot write " + e.Path + ": the folder " + e.Dir + " does not exist: create it first, or name another file"
}

// BadInput marks the error as input the command cannot use.
func (e *FolderError) BadInput() bool { return true }

// CheckFolder returns a *FolderError when the folder path is to be written
// in does not exist: a command checks it before its work, not after.
func CheckFolder(path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return &FolderError{Path: path, Dir: dir}
	}
	return nil
}

// WriteFile writes data to path atomically (a temporary file beside it,
// then a rename, with renameio), so that a failure leaves the old file or
// none. Its errors name path and the cause, never the temporary file,
// whose name means nothing to the user.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	if err := CheckFolder(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	err := renameio.WriteFile(path, data, perm)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot write %s: permission denied in %s: write it where the user running jetbake may", path, dir)
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("cannot write %s: no space left on the device: free some, or write it elsewhere", path)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("cannot write %s: it is a folder: name a file", path)
	}
	return fmt.Errorf("cannot write %s: %v", path, causeOf(err))
}

// causeOf is the innermost error of a *fs.PathError or *os.LinkError,
// without the path it names.
func causeOf(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
