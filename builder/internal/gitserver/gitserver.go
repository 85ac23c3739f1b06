// Package gitserver serves git repositories on 127.0.0.1 for the tests, as a
// user's git host would: Debian's `git daemon` for git:// (one `git daemon
// --inetd` per connection) and `git http-backend`, git's own smart HTTP
// server, behind net/http/cgi for http://. A repository can be made private:
// its HTTP requests then need basic auth with its token as the password, as
// GitHub takes a token (any user name; BuildKit sends "x-access-token").
//
// The repositories are bare, under the server's root, and are built with
// Repo: commits of a folder's files, tags and branches, with fixed authors
// and dates so that the same files always give the same commits.
package gitserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetbake/jetbake/builder/internal/statuswriter"
)

// Server is a git server on 127.0.0.1: git:// and http://, one root of bare
// repositories.
type Server struct {
	// Root is the folder of the bare repositories: "router.git" there is
	// git://GitAddr/router.git and http://HTTPAddr/router.git.
	Root string
	// GitAddr and HTTPAddr are the host:port of the git:// and http:// servers.
	GitAddr, HTTPAddr string

	gitLn    net.Listener
	httpSrv  *http.Server
	stop     context.CancelFunc // ends the git daemons still running
	daemons  context.Context
	wg       sync.WaitGroup
	mu       sync.Mutex
	private  map[string]string // repository path → token
	requests []Request
}

// Request is one HTTP request the server saw: the repository's path and
// whether it carried credentials, and the answer's status.
type Request struct {
	Path       string
	Authorized bool // the request carried basic auth
	Status     int
}

// Start starts both servers for the bare repositories under root. Close
// stops them.
func Start(root string) (*Server, error) {
	exe, err := gitExecPath()
	if err != nil {
		return nil, err
	}
	for _, tool := range []string{"git-daemon", "git-http-backend"} {
		if _, err := os.Stat(filepath.Join(exe, tool)); err != nil {
			return nil, fmt.Errorf("git has no %s in %s: install Debian's git package (make deps)", tool, exe)
		}
	}
	s := &Server{Root: root, private: map[string]string{}}
	s.daemons, s.stop = context.WithCancel(context.Background())
	if s.gitLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		s.stop()
		return nil, fmt.Errorf("listen for git://: %w", err)
	}
	s.GitAddr = s.gitLn.Addr().String()
	s.wg.Add(1)
	go s.serveGit()
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.gitLn.Close()
		s.stop()
		return nil, fmt.Errorf("listen for http://: %w", err)
	}
	s.HTTPAddr = httpLn.Addr().String()
	backend := &cgi.Handler{
		Path: filepath.Join(exe, "git-http-backend"),
		Root: "/",
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
		// What it says of a missing repository or commit goes to the client.
		Stderr: io.Discard,
	}
	s.httpSrv = &http.Server{Handler: s.authorize(backend), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.httpSrv.Serve(httpLn) }()
	return s, nil
}

// gitExecPath is the folder of git's own programs (git --exec-path).
func gitExecPath() (string, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return "", fmt.Errorf("git --exec-path: %w: install Debian's git package (make deps)", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// serveGit runs `git daemon --inetd` on every connection, with the
// connection as its standard input and output, as inetd would.
func (s *Server) serveGit() {
	defer s.wg.Done()
	for {
		conn, err := s.gitLn.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			f, err := conn.(*net.TCPConn).File()
			if err != nil {
				return
			}
			defer f.Close()
			cmd := exec.CommandContext(s.daemons, "git", "daemon", "--inetd", "--export-all", "--base-path="+s.Root, s.Root)
			cmd.Stdin, cmd.Stdout = f, f
			_ = cmd.Run()
		}()
	}
}

// Private makes the repository at path (e.g. "private/router.git") need
// basic auth over HTTP with token as the password. git:// has no
// authentication: the repository stays readable there.
func (s *Server) Private(path, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.private[strings.Trim(path, "/")] = token
}

// authorize answers 401, as git hosts do, to a request for a private
// repository without the right token.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pass, hasAuth := r.BasicAuth()
		token, private := s.tokenFor(r.URL.Path)
		status := http.StatusOK
		if private && (!hasAuth || pass != token) {
			status = http.StatusUnauthorized
			w.Header().Set("WWW-Authenticate", `Basic realm="jetbake test git server"`)
			http.Error(w, "Unauthorized", status)
		} else {
			sw := statuswriter.New(w)
			next.ServeHTTP(sw, r)
			status = sw.Status
		}
		s.mu.Lock()
		s.requests = append(s.requests, Request{Path: r.URL.Path, Authorized: hasAuth, Status: status})
		s.mu.Unlock()
	})
}

// tokenFor is the token of the private repository that urlPath is in.
func (s *Server) tokenFor(urlPath string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := strings.TrimPrefix(urlPath, "/")
	for repo, token := range s.private {
		if p == repo || strings.HasPrefix(p, repo+"/") {
			return token, true
		}
	}
	return "", false
}

// Requests returns the HTTP requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// GitURL is the git:// URL of the repository at path.
func (s *Server) GitURL(path string) string { return "git://" + s.GitAddr + "/" + path }

// HTTPURL is the http:// URL of the repository at path.
func (s *Server) HTTPURL(path string) string { return "http://" + s.HTTPAddr + "/" + path }

// Close stops both servers and waits for the git daemons they started.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	errs := []error{s.gitLn.Close(), s.httpSrv.Shutdown(ctx)}
	s.stop()
	s.wg.Wait()
	if errors.Is(errs[0], net.ErrClosed) {
		errs[0] = nil
	}
	return errors.Join(errs...)
}

// New starts a server with its repositories in a temporary folder of t,
// stopped when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
