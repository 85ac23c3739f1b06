// Package netfault serves the network faults a registry client meets, on
// 127.0.0.1 only: a name that does not resolve (a resolver that reaches no
// DNS server, as offline; no question leaves the process), a refused
// connection, plain HTTP to a TLS registry and TLS to a plain one, a
// certificate from an unknown CA, a connection reset in the middle of a
// blob, no answer, and 401 with and without a token realm. The registry
// behind them is go-containerregistry's.
package netfault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Unresolved is the registry name that does not resolve.
const Unresolved = "registry.jetbake.test"

// Dialer dials as this machine would, except that the names in hosts
// (NAME:PORT) lead to their 127.0.0.1 address and every other name meets a
// resolver that reaches no DNS server: Go's own *net.DNSError, in Go's own
// *net.OpError with no address.
func Dialer(hosts map[string]string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	offline := &net.Dialer{Resolver: &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "udp", Err: errors.New("connect: network is unreachable")}
	}}}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := hosts[addr]; ok {
			addr = to
		}
		return offline.DialContext(ctx, network, addr)
	}
}

// UseTransport makes go-containerregistry's default transport, which every
// jetbake command's registry calls use, dial with Dialer(hosts) until the
// test ends. Tests that call it must not run in parallel.
func UseTransport(t *testing.T, hosts map[string]string) {
	old := remote.DefaultTransport
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = Dialer(hosts)
	remote.DefaultTransport = tr
	t.Cleanup(func() { tr.CloseIdleConnections(); remote.DefaultTransport = old })
}

// Registry is go-containerregistry's registry, for the faults' handlers to
// wrap.
func Registry() http.Handler { return registry.New(registry.Logger(log.New(io.Discard, "", 0))) }

// Serve serves h over plain HTTP (tls false) or TLS with a certificate of
// its own CA, which no client trusts, and returns its 127.0.0.1:PORT.
func Serve(t *testing.T, h http.Handler, tls bool) string {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// Refused returns a 127.0.0.1:PORT where nothing listens.
func Refused(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// Hang answers nothing until the client gives up.
func Hang() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
}

// Unauthorized answers 401 to every request of the registry API: with a
// Bearer challenge whose token realm (served here too) refuses anonymous
// clients, or without any challenge.
func Unauthorized(realm bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if realm && r.URL.Path != "/token" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="http://`+r.Host+`/token",service="registry.jetbake.test"`)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
	})
}

// ResetMidBody passes the registry's answers through, except a blob's or
// a manifest's: the connection is reset after the headers and half the
// body (a HEAD's, which has none, before any answer).
func ResetMidBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/blobs/") && !strings.Contains(r.URL.Path, "/manifests/") {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		if r.Method != http.MethodHead {
			body := rec.Body.Bytes()
			rec.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", rec.Code, http.StatusText(rec.Code))
			_ = rec.Header().Write(buf)
			_, _ = buf.WriteString("\r\n")
			_, _ = buf.Write(body[:len(body)/2])
			_ = buf.Flush()
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0) // a reset, not a clean end
		}
		_ = conn.Close()
	})
}
