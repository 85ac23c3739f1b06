// Package testregistry serves go-containerregistry's in-memory registry on
// 127.0.0.1 for tests, the one helper every package's registry tests share.
package testregistry

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// New serves an in-memory registry until the test ends and returns its
// host:port. wrap, when given, wraps the registry's handler, for tests that
// make some requests fail.
func New(t testing.TB, wrap ...func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	for _, w := range wrap {
		h = w(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
