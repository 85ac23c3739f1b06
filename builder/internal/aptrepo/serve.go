package aptrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Server serves a folder of repositories (Write) over HTTP on 127.0.0.1.
type Server struct {
	// URL is the root's address, "http://127.0.0.1:PORT"; a repository's is
	// URL + "/" + its Path.
	URL string

	srv *http.Server
}

// Serve serves root on a free port of 127.0.0.1 until Close or ctx ends.
// Only GET and HEAD are answered, as a mirror answers apt.
func Serve(ctx context.Context, root string) (*Server, error) {
	return ServeAt(ctx, root, "127.0.0.1:0")
}

// ServeAt is Serve on addr, e.g. the address of an earlier server, so that
// the repositories' URLs (build arguments, and so BuildKit's cache keys)
// come out the same.
func ServeAt(ctx context.Context, root, addr string) (*Server, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("aptrepo: listen on %s: %w", addr, err)
	}
	files := http.FileServer(http.Dir(root))
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	s := &Server{URL: "http://" + ln.Addr().String(), srv: srv}
	context.AfterFunc(ctx, func() { _ = s.Close() })
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Control is a binary package's control file: its fields in order, e.g.
// {"Package", "cuda-cross-aarch64-12-6"}, {"Version", "12.6.3-1"}, ...
type Control [][2]string

// BuildDeb builds the .deb file out of the folder tree (its files as
// the package installs them) and ctl, with dpkg-deb (files owned by root,
// gzip).
func BuildDeb(ctx context.Context, out, tree string, ctl Control) error {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return errors.New("aptrepo: dpkg-deb is missing: the test bed needs a Debian machine (dpkg)")
	}
	var b strings.Builder
	for _, f := range ctl {
		fmt.Fprintf(&b, "%s: %s\n", f[0], f[1])
	}
	if err := os.MkdirAll(filepath.Join(tree, "DEBIAN"), 0o755); err != nil {
		return fmt.Errorf("aptrepo: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tree, "DEBIAN", "control"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("aptrepo: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("aptrepo: %w", err)
	}
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, out)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("aptrepo: dpkg-deb --build %s: %w: %s", filepath.Base(out), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
