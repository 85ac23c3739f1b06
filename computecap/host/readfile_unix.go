//go:build unix

package host

import (
	"errors"
	"io/fs"
	"syscall"
)

// readRegular is ReadRegular in system calls: open(2) with O_NONBLOCK,
// fstat(2), read(2) into one buffer of the file's size. The entrypoint
// reads a handful of host files on every start; this costs no os.File, no
// poller registration and one allocation per file.
func readRegular(path string, limit int64) ([]byte, error) {
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	})
	if errors.Is(err, syscall.ENXIO) {
		// open(2) gives ENXIO for a UNIX domain socket.
		return nil, &NotRegularError{Path: path, Kind: "a socket"}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if kind := kindOfMode(uint32(st.Mode) & syscall.S_IFMT); kind != "" {
		return nil, &NotRegularError{Path: path, Kind: kind}
	}
	// sysfs and procfs report a size of 4096 or 0: read until the end.
	buf := make([]byte, 0, min(max(st.Size, 512), limit)+1)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > limit {
				return nil, &TooLargeError{Path: path, Limit: limit}
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := retryEINTR(func() (int, error) { return syscall.Read(fd, buf[len(buf):cap(buf)]) })
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	if int64(len(buf)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return buf, nil
}

// kindOfMode names the file type of st_mode's S_IFMT bits when it is not
// a regular file, or "".
func kindOfMode(m uint32) string {
	switch m {
	case syscall.S_IFREG:
		return ""
	case syscall.S_IFDIR:
		return "a folder"
	case syscall.S_IFIFO:
		return "a named pipe (FIFO)"
	case syscall.S_IFSOCK:
		return "a socket"
	case syscall.S_IFCHR, syscall.S_IFBLK:
		return "a device"
	}
	return "an irregular file"
}

// retryEINTR calls f again while it fails with EINTR.
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if !errors.Is(err, syscall.EINTR) {
			return n, err
		}
	}
}
