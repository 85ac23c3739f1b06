package tagging

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/netfault"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// TestTagAllRegistryFaults: build --push's tag step against a registry
// whose name does not resolve, and one where nothing listens, fails with
// one sentence naming the host and the fix, for all its tags at once, and
// moves no tag.
func TestTagAllRegistryFaults(t *testing.T) {
	tr := &http.Transport{DialContext: netfault.Dialer(nil)}
	refused := netfault.Refused(t)
	for host, says := range map[string]string{
		netfault.Unresolved: "the registry's name " + netfault.Unresolved + " does not resolve to an address; fix: check the registry's name",
		refused:             "nothing answers at " + refused + "; fix: check the registry's address and port",
	} {
		repo := host + "/acme/router"
		releases := tagReleases(repo, []string{repo + ":1.0", repo + ":latest"}, []string{repo + ":2.0"})
		for i := range releases {
			releases[i].Digest = "sha256:" + strings.Repeat("a", 64)
		}
		_, err := All(t.Context(), releases, []remote.Option{remote.WithTransport(tr)})
		require.Error(t, err)
		require.NotContains(t, err.Error(), "\n", "one sentence")
		require.Contains(t, err.Error(), "cannot read tag "+repo+":")
		require.Contains(t, err.Error(), says)
		require.Contains(t, err.Error(), "(and 2 more tags); no tag was moved")
		require.NotContains(t, err.Error(), "dial tcp")
	}
}

// resetConn resets the client's connection without an answer.
func resetConn(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0) // a reset, not a clean end
	}
	_ = conn.Close()
}

// putRefused sends the registry's PUTs to an address where nothing
// listens: the tag call meets a refused connection after every read passed.
type putRefused struct{ refused, ok http.RoundTripper }

func (p putRefused) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut {
		return p.refused.RoundTrip(r)
	}
	return p.ok.RoundTrip(r)
}

// TestTagAllFaultsAfterThePush: tagging's reads of the pushed digests and
// of the tags it moves, and its tag calls, against a registry on
// 127.0.0.1 that fails at that step (401, a reset, a refused connection):
// each is one sentence in the registry commands' words, naming what was
// asked, the fault and the fix, with no registry or HTTP library text; a
// read that fails moves no tag, a tag call that fails puts back those
// that moved.
func TestTagAllFaultsAfterThePush(t *testing.T) {
	const body = "<html>proxy error page</html>"
	for _, tc := range []struct {
		name string
		// fail answers instead of the registry when it returns true.
		fail      func(w http.ResponseWriter, r *http.Request) bool
		refusePut bool
		says      []string
		moved     bool
	}{
		{name: "401 reading the pushed digest", fail: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/sha256:") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`))
				return true
			}
			return false
		}, says: []string{", which release r0 was pushed as, before tagging it: the registry answered 401 Unauthorized to GET http://",
			"(UNAUTHORIZED: authentication required); fix: log in with 'docker login REGISTRY'", "; no tag was moved"}},
		{name: "reset reading the tag to move", fail: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/manifests/old") {
				resetConn(w)
				return true
			}
			return false
		}, says: []string{"cannot read tag ", ":old of release r0 before moving it: the connection to ", " was reset while it answered; fix: retry", "; no tag was moved"}},
		{name: "reset on the tag call", fail: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/new") {
				resetConn(w)
				return true
			}
			return false
		}, says: []string{"cannot put tag ", ":new of release r0: the connection to ", " was reset while it answered; fix: retry",
			"; the 1 tag moved was put back"}, moved: true},
		{name: "401 on the tag call", fail: func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/new") {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(body))
				return true
			}
			return false
		}, says: []string{"cannot put tag ", ":new of release r0: the registry answered 401 Unauthorized to PUT http://",
			"/manifests/new; fix: log in with 'docker login REGISTRY', or check that your account may push to the repository; the 1 tag moved was put back"}, moved: true},
		{name: "refused on the tag call", refusePut: true, says: []string{"cannot put tag ", " of release r0: nothing answers at ",
			"; fix: check the registry's address and port, and that it is up (and 1 more tags); no tag was moved"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var failing atomic.Bool
			host := testregistry.New(t, func(reg http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if failing.Load() && tc.fail != nil && tc.fail(w, r) {
						return
					}
					reg.ServeHTTP(w, r)
				})
			})
			repo := host + "/acme/router"
			before := pushRandom(t, repo+":old")
			built := pushRandom(t, repo+":built")
			releases := tagReleases(repo, []string{repo + ":old", repo + ":new"})
			releases[0].Digest = built.String()
			var ropts []remote.Option
			if tc.refusePut {
				refused := netfault.Refused(t)
				tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, network, refused)
				}}
				ropts = append(ropts, remote.WithTransport(putRefused{refused: tr, ok: http.DefaultTransport}))
			}
			failing.Store(true)
			tags, err := All(t.Context(), releases, ropts)
			require.Error(t, err)
			require.Nil(t, tags)
			var te *Error
			require.Equal(t, tc.moved || tc.refusePut, errors.As(err, &te), "a failed tag call is an *Error")
			msg := err.Error()
			t.Log(msg)
			require.NotContains(t, msg, "\n", "one sentence")
			for _, s := range tc.says {
				require.Contains(t, msg, s)
			}
			for _, g := range []string{body, "dial tcp", "read tcp", "connection reset by peer", "Get \"", "Put \"", "unexpected status code", "EOF"} {
				require.NotContains(t, msg, g)
			}
			failing.Store(false)
			desc, err := remote.Head(mustRef(t, repo+":old"))
			require.NoError(t, err)
			require.Equal(t, before, desc.Digest, "the tag points where it did")
			_, err = remote.Head(mustRef(t, repo+":new"))
			require.Error(t, err, "the new tag does not exist")
		})
	}
}
