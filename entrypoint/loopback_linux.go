package main

import (
	"errors"
	"io"
	"syscall"
	"time"
)

// The serving check talks to the router on 127.0.0.1 through plain
// sockets of package syscall, not package net: net alone adds about
// 460 KB to the static linux/arm64 entrypoint (its resolver and poller),
// net/http about 3.6 MB, against the entrypoint's limit of 3 MB
// (TestReleaseBinarySize). Loopback needs neither a resolver nor a
// poller: a blocking socket with SO_RCVTIMEO and SO_SNDTIMEO bounds every
// call.

// errTimedOut is a socket call that ran past its bound.
var errTimedOut = errors.New("timed out")

// loopConn is a TCP connection to a port on 127.0.0.1.
type loopConn struct {
	fd       int
	deadline time.Time
}

// dialLoopback connects to 127.0.0.1:port; every read and write of the
// connection, and the whole exchange, end within timeout.
func dialLoopback(port int, timeout time.Duration) (*loopConn, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	tv := syscall.NsecToTimeval(timeout.Nanoseconds())
	for _, opt := range []int{syscall.SO_RCVTIMEO, syscall.SO_SNDTIMEO} {
		if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv); err != nil {
			syscall.Close(fd)
			return nil, err
		}
	}
	// SO_SNDTIMEO bounds connect too. A connect interrupted by a signal
	// goes on in the kernel; the caller dials again.
	if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &loopConn{fd: fd, deadline: time.Now().Add(timeout)}, nil
}

// Read reads from the connection; io.EOF when the peer closed it.
func (c *loopConn) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(c.fd, p)
		switch {
		case err == syscall.EINTR && time.Now().Before(c.deadline):
			continue
		case err == syscall.EAGAIN || err == syscall.EINTR:
			return 0, errTimedOut
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of p.
func (c *loopConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := syscall.Write(c.fd, p[done:])
		switch {
		case err == syscall.EINTR && time.Now().Before(c.deadline):
			continue
		case err == syscall.EAGAIN || err == syscall.EINTR:
			return done, errTimedOut
		case err != nil:
			return done, err
		}
		done += n
	}
	return done, nil
}

// Close closes the connection.
func (c *loopConn) Close() error { return syscall.Close(c.fd) }

// freeLoopbackPort is a port on 127.0.0.1 that nothing listens on now:
// the kernel's choice for a socket bound to port 0, which is then closed
// for the router to take.
func freeLoopbackPort() (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return 0, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok || in.Port == 0 {
		return 0, errors.New("the kernel gave no port")
	}
	return in.Port, nil
}
