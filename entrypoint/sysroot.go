package main

import (
	"os"
	"path/filepath"

	"github.com/jetbake/jetbake/computecap/host"
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

// readFile reads p under the root with host.ReadRegular: a regular file
// of at most maxHostFile bytes, opened without blocking, so that a named
// pipe at /etc/jetbake/image.json cannot hang the start.
func (r sysroot) readFile(p string) ([]byte, error) {
	return host.ReadRegular(r.path(p), maxHostFile)
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
