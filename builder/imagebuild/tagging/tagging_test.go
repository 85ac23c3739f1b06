package tagging

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// failingRegistry is an in-memory registry that refuses to store a manifest
// under the tag failTag.
func failingRegistry(t *testing.T, failTag string) string {
	t.Helper()
	return testregistry.New(t, func(reg http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/"+failTag) {
				http.Error(w, "quota exceeded", http.StatusForbidden)
				return
			}
			reg.ServeHTTP(w, r)
		})
	})
}

func pushRandom(t *testing.T, ref string) v1.Hash {
	t.Helper()
	img, err := random.Image(64, 1)
	require.NoError(t, err)
	r, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(r, img))
	d, err := img.Digest()
	require.NoError(t, err)
	return d
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s, name.Insecure)
	require.NoError(t, err)
	return r
}

func tagReleases(repo string, tags ...[]string) []Release {
	var releases []Release
	for i, ts := range tags {
		releases = append(releases, Release{Name: "r" + string(rune('0'+i)), Repository: repo, Tags: ts})
	}
	return releases
}

func TestTagAllPutsEveryTagOn(t *testing.T) {
	repo := failingRegistry(t, "never") + "/jetbake/router"
	releases := tagReleases(repo, []string{repo + ":a", repo + ":b"}, []string{repo + ":c"})
	releases[0].Digest = pushRandom(t, repo+":built-0").String()
	releases[1].Digest = pushRandom(t, repo+":built-1").String()
	tags, err := All(t.Context(), releases, nil)
	require.NoError(t, err)
	require.Equal(t, []string{repo + ":a", repo + ":b"}, tags[0])
	desc, err := remote.Head(mustRef(t, repo+":c"))
	require.NoError(t, err)
	require.Equal(t, releases[1].Digest, desc.Digest.String())
}

// A tag already on its release's digest (a rebuild that changed nothing)
// is not written again; the others are, and the report lists them all.
func TestTagAllLeavesTagsInPlace(t *testing.T) {
	var mu sync.Mutex
	var puts []string
	repo := testregistry.New(t, func(reg http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
				mu.Lock()
				puts = append(puts, r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
				mu.Unlock()
			}
			reg.ServeHTTP(w, r)
		})
	}) + "/jetbake/router"
	built := pushRandom(t, repo+":in-place")
	moved := pushRandom(t, repo+":moved")
	releases := tagReleases(repo, []string{repo + ":in-place", repo + ":moved", repo + ":new"})
	releases[0].Digest = built.String()
	puts = nil
	tags, err := All(t.Context(), releases, nil)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"moved", "new"}, puts, "only the tags that move are written")
	require.Equal(t, []string{repo + ":in-place", repo + ":moved", repo + ":new"}, tags[0])
	for _, tag := range []string{"in-place", "moved", "new"} {
		desc, err := remote.Head(mustRef(t, repo+":"+tag))
		require.NoError(t, err)
		require.Equal(t, built, desc.Digest, tag)
	}
	require.NotEqual(t, moved, built)
}

// A tag that fails to move puts back every tag moved before it.
func TestTagAllRollsBack(t *testing.T) {
	repo := failingRegistry(t, "fail-me") + "/jetbake/router"
	before := pushRandom(t, repo+":existing")
	releases := tagReleases(repo, []string{repo + ":new", repo + ":existing"}, []string{repo + ":fail-me"})
	releases[0].Digest = pushRandom(t, repo+":built-0").String()
	releases[1].Digest = pushRandom(t, repo+":built-1").String()

	tags, err := All(t.Context(), releases, nil)
	require.ErrorContains(t, err, "cannot put tag "+repo+":fail-me of release r1: the registry answered 403 Forbidden to PUT http://"+
		repo[:strings.Index(repo, "/")]+"/v2/jetbake/router/manifests/fail-me; fix: log in with 'docker login REGISTRY', "+
		"or check that your account may push to the repository; the 2 tags moved were put back")
	require.NotContains(t, err.Error(), "quota exceeded", "the registry's body stays out")
	desc, err := remote.Head(mustRef(t, repo+":existing"))
	require.NoError(t, err)
	require.Equal(t, before, desc.Digest, "the existing tag points where it did")
	_, err = remote.Head(mustRef(t, repo+":new"))
	require.Error(t, err, "the new tag is gone again")
	require.Nil(t, tags, "no tag is reported put")
}

func TestTagAllNeedsEveryDigest(t *testing.T) {
	repo := failingRegistry(t, "never") + "/jetbake/router"
	releases := tagReleases(repo, []string{repo + ":a"})
	_, err := All(t.Context(), releases, nil)
	require.ErrorContains(t, err, "no digest")
}

// noDigestHeader drops Docker-Content-Digest from HEAD answers, as some
// registries do.
type noDigestHeader struct{ http.ResponseWriter }

func (w noDigestHeader) WriteHeader(code int) {
	w.Header().Del("Docker-Content-Digest")
	w.ResponseWriter.WriteHeader(code)
}

// A registry whose HEAD answers lack the digest is asked with GET.
func TestTagAllWithoutDigestOnHead(t *testing.T) {
	repo := testregistry.New(t, func(reg http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/manifests/") {
				w = noDigestHeader{w}
			}
			reg.ServeHTTP(w, r)
		})
	}) + "/jetbake/router"
	built := pushRandom(t, repo+":in-place")
	releases := tagReleases(repo, []string{repo + ":in-place", repo + ":new"})
	releases[0].Digest = built.String()
	tags, err := All(t.Context(), releases, nil)
	require.NoError(t, err)
	require.Equal(t, []string{repo + ":in-place", repo + ":new"}, tags[0])
	desc, err := remote.Get(mustRef(t, repo+":new"))
	require.NoError(t, err)
	require.Equal(t, built, desc.Digest)
}
