//go:build !unix

package host

import (
	"os"
	"syscall"
)

// readRegular is ReadRegular through package os, where there are no unix
// system calls.
func readRegular(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	return readOpened(f, err, path, limit)
}
