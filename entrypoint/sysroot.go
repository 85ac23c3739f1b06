package main

import (
	"io"
	"os"
	"path/filepath"
)

// maxHostFile caps how much of one host file is read; the files the
// entrypoint reads are a few hundred bytes.
const maxHostFile = 64 << 10

// sysroot is the directory every host and image path is read under: "/" in
// production, a test tree when JETBAKE_SYSROOT is set.
type sysroot string

// path returns where the absolute path p lies under the root.
func (r sysroot) path(p string) string {
	return filepath.Join(string(r), p)
}

// readFile reads at most maxHostFile bytes of p under the root.
func (r sysroot) readFile(p string) ([]byte, error) {
	f, err := os.Open(r.path(p))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxHostFile))
}

// exists reports whether p exists under the root.
func (r sysroot) exists(p string) bool {
	_, err := os.Stat(r.path(p))
	return err == nil
}

// isDir reports whether p is a directory under the root.
func (r sysroot) isDir(p string) bool {
	fi, err := os.Stat(r.path(p))
	return err == nil && fi.IsDir()
}

// isExecutable reports whether p is an executable regular file under the root.
func (r sysroot) isExecutable(p string) bool {
	fi, err := os.Stat(r.path(p))
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
