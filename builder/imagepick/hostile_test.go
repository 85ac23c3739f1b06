package imagepick

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
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

// orinJetPack62 is a Jetson Orin on JetPack 6.2, for tests that need pick
// to reach the registry.
var orinJetPack62 = staticFacts{SoC: "tegra234", Family: "Orin", GPU: computecap.Capability{Major: 8, Minor: 7},
	L4T: computecap.L4TVersion{Major: 36, Minor: 4, Patch: 3}, L4TVersion: "36.4.3", JetPack: "6.2"}

// TestPickNotAJetson: on a machine that is not a Jetson, pick says so in
// one sentence with the fix and sends no request (issue 51 item 6: it
// failed on the registry first).
func TestPickNotAJetson(t *testing.T) {
	soc := t.TempDir()
	for n, data := range map[string]string{"sys/devices/soc0/family": "Tegra\n", "sys/devices/soc0/soc_id": "35\n"} {
		require.NoError(t, os.MkdirAll(filepath.Join(soc, filepath.Dir(n)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(soc, n), []byte(data), 0o644))
	}
	empty := t.TempDir()
	const repo = "ghcr.io/acme/router"
	fix := "; fix: run it on the Jetson itself, or give WithSysroot the board's root file system"
	tests := []struct {
		name string
		opt  Option
		want string
	}{
		{"an empty root", WithSysroot(empty),
			"the host under " + empty + " is not a Jetson: neither its device tree nor /sys/devices/soc0 names a Jetson SoC, so no image of " + repo + " runs on it" + fix},
		{"a desktop GPU", WithHostFacts(staticFacts{GPU: computecap.Capability{Major: 8, Minor: 6}}),
			"this machine is not a Jetson (its GPU has SM 8.6): neither its device tree nor /sys/devices/soc0 names a Jetson SoC, so no image of " + repo + " runs on it" + fix},
		{"a Tegra SoC without L4T", WithSysroot(soc),
			"the host under " + soc + " has a Jetson Orin SoC (tegra234) but no L4T release (no /etc/nv_tegra_release, which JetPack installs), so no image of " + repo + " can be matched to its JetPack" + fix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Pick(t.Context(), repo, tt.opt, WithTransport(failTransport{t}))
			var nf *NoFitError
			require.ErrorAs(t, err, &nf)
			require.Equal(t, tt.want, nf.Sentence)
			require.Equal(t, tt.want, res.Sentence)
			require.Nil(t, res.Best)
			require.Empty(t, res.Candidates)
		})
	}
	_, err := Pick(t.Context(), repo, WithSysroot(empty), WithTransport(failTransport{t}), WithNotJetsonFix("pass --sysroot DIR"))
	require.ErrorContains(t, err, "runs on it; fix: pass --sysroot DIR")
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
	_, err := Pick(t.Context(), repo, WithHostFacts(orinJetPack62))
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
	go func() { _, err := Pick(ctx, repo, WithHostFacts(orinJetPack62)); done <- err }()
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
