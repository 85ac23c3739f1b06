package imagepick

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/refs"
)

// failTransport fails the test when pick sends a request.
type failTransport struct{ t *testing.T }

func (f failTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("pick sent %s %s for a repository it should have refused", r.Method, r.URL)
	return nil, context.Canceled
}

// TestPickRefusesWhatIsNotARepository gives pick arguments that are not a
// repository: each is bad input, refused before a request is sent
// ("https://ghcr.io/x" used to go to the host "https", "acme/../router"
// to Docker Hub).
func TestPickRefusesWhatIsNotARepository(t *testing.T) {
	for in, want := range map[string]string{
		"":                               `repository "" is empty`,
		"ghcr.io/Acme/Router":            "has capital letters in its path",
		"ghcr.io/acme/my router":         "holds white space or control characters",
		"ghcr.io/jetbake/router:jetpack": "names a tag: give the repository alone",
		"https://ghcr.io/acme/router":    "has a URL scheme: drop the scheme",
		"acme/../router":                 "is not a repository name",
		"ghcr.io/acme/router@sha256:" + strings.Repeat("a", 64): "names a digest",
		"ghcr.io/acme/\x1b]0;x\x07":                             `"ghcr.io/acme/\x1b]0;x\a"`,
	} {
		_, err := Pick(t.Context(), in, WithHostFacts(staticFacts{}), WithTransport(failTransport{t}))
		var re *RepositoryError
		require.ErrorAs(t, err, &re, "%q", in)
		require.True(t, re.BadInput())
		require.ErrorContains(t, err, want, "%q", in)
		require.NotContains(t, err.Error(), "\x1b")
	}
}

// TestPickSysrootMustExist names the missing folder instead of saying the
// host has no GPU.
func TestPickSysrootMustExist(t *testing.T) {
	missing := t.TempDir() + "/none"
	_, err := Pick(t.Context(), shippedRepository, WithSysroot(missing), WithTransport(failTransport{t}))
	var se *hostfit.SysrootError
	require.ErrorAs(t, err, &se)
	require.EqualError(t, err, "sysroot "+missing+" does not exist: name the folder where the host's root file system is, or leave it at /")
}

// TestPickRegistryErrorsAreOneSentence serves a 500 with an HTML page, as a
// proxy in front of a failing registry does: the error names the status,
// the request and the fix, and holds none of the page.
func TestPickRegistryErrorsAreOneSentence(t *testing.T) {
	reg := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/tags/list") {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte("<html><body><h1>500 Internal Server Error</h1>\n<p>nginx</p></body></html>"))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	repo := reg + "/jetbake/text-embeddings-router"
	_, err := Pick(t.Context(), repo, WithHostFacts(staticFacts{}))
	var rerr *refs.RegistryError
	require.ErrorAs(t, err, &rerr)
	require.EqualError(t, err, "cannot list the tags of "+repo+": the registry answered 500 Internal Server Error to GET http://"+reg+
		"/v2/jetbake/text-embeddings-router/tags/list; fix: retry later: the registry failed; if it keeps failing, tell its operator")
}

// TestPickRegistryThatNeverAnswers stops at the deadline with the sentence
// that says to give it more time (the CLI names --timeout).
func TestPickRegistryThatNeverAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	repo := strings.TrimPrefix(srv.URL, "http://") + "/jetbake/tei"
	done := make(chan error, 1)
	go func() { _, err := Pick(ctx, repo, WithHostFacts(staticFacts{})); done <- err }()
	select {
	case err := <-done:
		require.EqualError(t, err, "cannot list the tags of "+repo+": the registry did not answer in time; fix: check that the registry is up and reachable, or give it more time")
		var rerr *refs.RegistryError
		require.ErrorAs(t, err, &rerr)
		require.True(t, rerr.TimedOut)
	case <-time.After(30 * time.Second):
		t.Fatal("pick does not stop at its deadline")
	}
}

// hostileTags are tags a hostile registry lists: none is a valid tag.
func hostileTags() []string {
	return []string{"\x1b]0;pwned\x07", strings.Repeat("a", 300), "a b", "$(reboot)", "x\x1b[2J"}
}

// TestPickHostileRegistry lists tags that are not tags and serves an image
// whose annotations hold terminal escape sequences: explain and the
// progress print none of them raw, -q prints only a valid reference.
func TestPickHostileRegistry(t *testing.T) {
	reg := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/tags/list") {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			var list struct {
				Name string   `json:"name"`
				Tags []string `json:"tags"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
			list.Tags = append(list.Tags, hostileTags()...)
			require.NoError(t, json.NewEncoder(w).Encode(list))
		})
	})
	repo := reg + "/jetbake/text-embeddings-router"
	p := shippedPlan(t)
	good, _ := p.Release("jetpack6.2")
	pushRelease(t, repo, *good, false, nil)
	evil := *good
	evil.Tags = []string{shippedRepository + ":evil"}
	evil.Annotations = map[string]string{}
	for k, v := range good.Annotations {
		evil.Annotations[k] = v
	}
	evil.Annotations[matrix.KeyTier] = "\x1b]0;pwned\x07supported"
	evil.Annotations[matrix.KeyRelease] = "\x1b[2Jjetpack6.2"
	evil.Labels = nil
	pushRelease(t, repo, evil, false, nil)

	var progress bytes.Buffer
	l := hostLines()[4] // R36.4.3 Orin
	res, err := Pick(t.Context(), repo, append(l.options(t), WithProgress(func(s string) { progress.WriteString(refs.Printable(s) + "\n") }))...)
	require.NoError(t, err)
	require.Equal(t, len(hostileTags()), res.SkippedTags)

	var explain, text bytes.Buffer
	require.NoError(t, res.WriteExplain(&explain))
	require.NoError(t, res.WriteText(&text))
	for what, out := range map[string]string{"explain": explain.String(), "progress": progress.String(), "text": text.String()} {
		require.NotContains(t, out, "\x1b", what)
		require.NotContains(t, out, "\x07", what)
		require.NotContains(t, out, "$(reboot)", what)
	}
	require.Contains(t, explain.String(), `io.jetbake.release "\x1b[2Jjetpack6.2" is not a value jetbake writes`)
	require.Contains(t, explain.String(), "left out 5 listed tags that are not valid tags")
	ref := strings.TrimSpace(text.String())
	_, err = name.ParseReference(ref, name.StrictValidation)
	require.NoError(t, err, ref)
	require.Contains(t, ref, ":1.9.3-jetpack6.2@sha256:")
}
